"""How a chat or embedding request reaches the endpoint (`llm.client`).

`openai`: the openai client's generic POST. `direct`: a plain POST on one aiohttp session,
with the headers the openai client would send. The client's request building (options,
header merging, URL parsing, the httpx-to-aiohttp bridge) costs about 0.85 ms of CPU a call,
half of a whole build's (bench/RESULTS.md, "CPU per call"). Either way failures are
raised as openai's exception types, so retries, rate limits and outages read them alike.
"""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any, Literal, Protocol

import aiohttp

# openai's client looks the older httpx up in sys.modules, without the import lock, to
# accept its types. A build imports Prefect (which imports that httpx) while its first
# requests go: imported here, first, openai never finds it half made (AttributeError).
import httpx as _legacy_httpx  # noqa: F401
import httpx2 as httpx  # the HTTP library of openai >= 3
import openai
import orjson

from memsynth.llm.retry import EmptyResponse
from memsynth.llm.runaway import Runaway
from memsynth.llm.silence import Pulse, Silence
from memsynth.llm.stream import StreamAssembler

Client = Literal["openai", "direct"]


def openai_client(api_key: str, base_url: str | None, *, timeout_s: float, connections: int
                  ) -> openai.AsyncOpenAI:
    """The engine's openai client: no retries of its own, a pool as big as our ceiling."""
    return openai.AsyncOpenAI(
        api_key=api_key, base_url=base_url, timeout=timeout_s,
        max_retries=0,  # retries are ours: tenacity, with AIMD feedback
        # The transport pools 100 connections by default: size it to our ceiling so the
        # in-flight limit is ours alone.
        http_client=openai.DefaultAioHttpClient(
            timeout=timeout_s,
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections)))


class Poster(Protocol):
    """How the engine sends a call; one per engine, bound to its event loop."""

    async def post(self, path: str, content: bytes, *, stream: bool = False) -> Any:
        """POST the JSON `content` to `path` under the base URL; the answer's parsed JSON
        (a streamed answer put back together: see memsynth.llm.stream)."""

    async def aclose(self) -> None: ...


class OpenAIPoster:
    """The openai client's generic POST: its HTTP stack, auth and errors, no typed models."""

    def __init__(self, client: openai.AsyncOpenAI, idle_timeout_s: float | None = None,
                 pulse: Pulse | None = None, runaway_tokens: int | None = None):
        self.client = client
        self.runaway_tokens = runaway_tokens
        whole = client.timeout if isinstance(client.timeout, int | float) else None
        # A streamed answer: silence is timed by memsynth.llm.silence (a request queued behind
        # others is not silent), so the transport's read timeout must not fire first.
        self._idle = idle_timeout_s or whole or 60.0
        self._stream_options: dict[str, Any] = {"timeout": httpx.Timeout(whole, read=None)}
        self.pulse = pulse or Pulse()

    async def post(self, path: str, content: bytes, *, stream: bool = False) -> Any:
        # Bytes go as they are: no per-field transform of the body (a JSON schema made that
        # most of our CPU per call) and no typed response model.
        if stream:
            assembler = StreamAssembler(self.runaway_tokens)
            try:
                async with Silence(self.pulse, self._idle) as watch:
                    events = await self.client.post(path, content=content, cast_to=object, stream=True,
                                                    stream_cls=openai.AsyncStream[object],
                                                    options=self._stream_options)  # type: ignore[arg-type]
                    try:
                        async for event in events:
                            watch.heard()
                            assembler.feed(event)  # type: ignore[arg-type]
                    finally:
                        await events.close()
            except (TimeoutError, httpx.TimeoutException) as exc:  # silence: raised as the client's own
                raise openai.APITimeoutError(request=httpx.Request("POST", self._url(path))) from exc
            except httpx.TransportError as exc:
                raise openai.APIConnectionError(request=exc.request) from exc
            except openai.APIError as exc:
                if isinstance(exc, openai.APIStatusError | openai.APIConnectionError):
                    raise  # a timeout in connecting is an APIConnectionError's subclass
                raise EmptyResponse(f"the endpoint sent an error mid-answer: {str(exc)[:200]}") from exc
            return assembler.completion()
        response = await self.client.post(path, content=content, cast_to=httpx.Response)
        return response.json()

    def _url(self, path: str) -> str:
        return str(self.client.base_url).rstrip("/") + path

    async def aclose(self) -> None:
        """The engine closes the openai client itself (batch mode uses it too)."""


class DirectPoster:
    """Plain POSTs on one aiohttp session, sized to the engine's in-flight ceiling."""

    def __init__(self, client: openai.AsyncOpenAI, api_key: str, *, timeout_s: float, connections: int,
                 idle_timeout_s: float | None = None, pulse: Pulse | None = None,
                 runaway_tokens: int | None = None):
        self.base_url = str(client.base_url).rstrip("/")
        self.runaway_tokens = runaway_tokens
        # The openai client's own default headers (user agent, organization, project), so an
        # endpoint sees the same request either way; Omit placeholders are headers unset.
        self._headers = {name: value for name, value in client.default_headers.items()
                         if isinstance(value, str)}
        self._headers["Authorization"] = f"Bearer {api_key}"
        # As the openai client's timeout: on connecting and on each read, not on the whole call.
        self._timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=timeout_s)
        # A streamed answer: silence is timed by memsynth.llm.silence (a request queued behind
        # others is not silent), so the socket's read timeout must not fire first.
        self._stream_timeout = aiohttp.ClientTimeout(total=None, sock_connect=timeout_s, sock_read=None)
        self._idle = idle_timeout_s or timeout_s
        self.pulse = pulse or Pulse()
        self._connections = connections
        self._session: aiohttp.ClientSession | None = None

    def _open(self) -> aiohttp.ClientSession:
        # Created on first use so it binds to the event loop that runs the calls. The proxy
        # is read from the environment once: aiohttp's trust_env reads it on every request,
        # which cost more CPU than all the rest of a POST.
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=self._connections),
            timeout=self._timeout, proxy=env_proxy(self.base_url))
        return self._session

    async def post(self, path: str, content: bytes, *, stream: bool = False) -> Any:
        session = self._session or self._open()
        url = self.base_url + path
        try:
            if stream:
                async with Silence(self.pulse, self._idle) as watch:
                    return await self._streamed(session, url, content, watch)
            async with session.post(url, data=content, headers=self._headers, timeout=self._timeout) as response:
                if response.status >= 400:
                    raise status_error(url, response.status, response.headers, await response.read())
                raw = await response.read()
        except TimeoutError as exc:  # aiohttp's socket timeouts are TimeoutErrors too
            raise openai.APITimeoutError(request=httpx.Request("POST", url)) from exc
        except aiohttp.ClientError as exc:
            raise openai.APIConnectionError(request=httpx.Request("POST", url)) from exc
        return orjson.loads(raw)

    async def _streamed(self, session: aiohttp.ClientSession, url: str, content: bytes, watch: Silence) -> Any:
        async with session.post(url, data=content, headers=self._headers, timeout=self._stream_timeout) as response:
            if response.status >= 400:
                raise status_error(url, response.status, response.headers, await response.read())
            if response.content_type != "text/event-stream":  # a server that answers whole
                raw = await response.read()
                watch.heard()
                return orjson.loads(raw)
            assembler = StreamAssembler(self.runaway_tokens)
            try:
                async for line in response.content:  # a keep-alive comment is a sign of life too
                    watch.heard()
                    assembler.feed_line(line)
                    if assembler.done:
                        break
            except Runaway:
                response.close()  # the connection, not back to the pool: the server stops
                raise
            return assembler.completion()

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def env_proxy(url: str) -> str | None:
    """The proxy HTTP(S)_PROXY sets for `url`, unless NO_PROXY exempts its host."""
    parts = urllib.parse.urlsplit(url)
    if urllib.request.proxy_bypass(parts.hostname or ""):
        return None
    return urllib.request.getproxies().get(parts.scheme)


_STATUS_ERRORS: dict[int, type[openai.APIStatusError]] = {
    400: openai.BadRequestError, 401: openai.AuthenticationError, 403: openai.PermissionDeniedError,
    404: openai.NotFoundError, 409: openai.ConflictError, 422: openai.UnprocessableEntityError,
    429: openai.RateLimitError,
}


def status_error(url: str, status: int, headers: Any, raw: bytes) -> openai.APIStatusError:
    """The exception the openai client raises for this answer: its class, message and body."""
    response = httpx.Response(status, headers=list(headers.items()), content=raw,
                              request=httpx.Request("POST", url))
    text = raw.decode("utf-8", "replace").strip()
    message = f"Error code: {status}"
    body: Any = text
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        error = body.get("error", body) if isinstance(body, dict) else None
        detail = error.get("message") if isinstance(error, dict) else None
        if isinstance(detail, str) and detail:
            message += f" - {detail}"
        body = error if isinstance(error, dict) else body  # the client keeps the inner object
    kind = openai.InternalServerError if status >= 500 else _STATUS_ERRORS.get(status, openai.APIStatusError)
    return kind(message, response=response, body=body)
