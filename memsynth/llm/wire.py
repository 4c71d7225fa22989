"""The engine's side of the wire: its OpenAI client and poster, the bodies it sends, each post
under the endpoint's limits, and what the endpoint's /models says."""

from __future__ import annotations

import time
from typing import Any

import httpx2 as httpx  # the HTTP library of openai >= 3
import openai
import orjson

from memsynth.core.errors import BuildFailed
from memsynth.llm.cache import ResponseCache
from memsynth.llm.completion import Completion
from memsynth.llm.http import DirectPoster, OpenAIPoster, Poster, openai_client
from memsynth.llm.limits import RequestLimits
from memsynth.llm.request import EmbeddingRequest, LLMRequest
from memsynth.llm.retry import EmptyResponse, StreamCut, is_rate_limit
from memsynth.llm.settings import EngineCounters, EngineSettings
from memsynth.llm.silence import Pulse


class Wire:
    """What `LLMEngine` sends and how (a part of it: the engine sets these attributes)."""

    settings: EngineSettings
    cache: ResponseCache
    limits: RequestLimits
    counters: EngineCounters
    pulse: Pulse
    _api_key: str
    _client: openai.AsyncOpenAI | None
    _poster: Poster | None

    @property
    def base_url(self) -> str:
        """The URL requests go to (the settings', else $OPENAI_BASE_URL, else OpenAI's)."""
        return str(self._openai().base_url).rstrip("/")

    def _openai(self) -> openai.AsyncOpenAI:
        # Created lazily so it binds to the event loop that runs the calls.
        if self._client is None:
            self._client = openai_client(self._api_key, self.settings.base_url,
                                         timeout_s=self.settings.timeout_s,
                                         connections=self.settings.concurrency)
        return self._client

    def _http(self) -> Poster:
        if self._poster is None:
            idle = self.settings.idle_timeout_s if self.settings.stream else None
            runaway = self.settings.runaway_tokens or None
            self._poster = (DirectPoster(self._openai(), self._api_key, timeout_s=self.settings.timeout_s,
                                         connections=self.settings.concurrency, idle_timeout_s=idle,
                                         pulse=self.pulse, runaway_tokens=runaway)
                            if self.settings.client == "direct"
                            else OpenAIPoster(self._openai(), idle, self.pulse, runaway))
        return self._poster

    async def served_models(self) -> list[str]:
        """The model names the endpoint lists at /models ([] when it lists none or cannot)."""
        try:
            listed = await self._openai().get("/models", cast_to=httpx.Response)
            return [str(m["id"]) for m in listed.json().get("data", []) if isinstance(m, dict) and "id" in m]
        except Exception:
            return []

    async def _probe(self) -> bool:
        """Is the endpoint there? Any HTTP answer below 500 (a 404 too) says yes."""
        try:
            await self._openai().get("/models", cast_to=httpx.Response)
        except openai.APIStatusError as exc:
            return exc.status_code < 500
        except Exception:
            return False
        return True

    async def _send(self, request: LLMRequest, estimate: int, max_tokens: int | None) -> Completion:
        body = self._chat_body(request, max_tokens)
        if self.settings.stream:  # not part of the request's key: the answer is the same
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return await self._post("/chat/completions", body, estimate, Completion.parse, stream=self.settings.stream)

    @staticmethod
    def _chat_body(request: LLMRequest, max_tokens: int | None) -> dict[str, Any]:
        """The chat completions body for `request` (max_tokens raised when given)."""
        body: dict[str, Any] = {"model": request.model, "messages": list(request.messages),
                                **request.params}
        first = max_tokens or request.first_max_tokens
        if first is not None:
            body["max_tokens"] = first
        fmt = request.response_format()
        if fmt is not None:
            body["response_format"] = fmt
        if request.hints is not None:
            body["memsynth"] = request.hints
        return body

    async def _send_embedding(self, request: EmbeddingRequest, estimate: int, _max_tokens: int | None
                              ) -> Completion:
        return await self._post("/embeddings", {"model": request.model, "input": [request.text]},
                                estimate, Completion.from_embedding)

    async def _post(self, path: str, body: dict[str, Any], estimate: int, parse: Any,
                    stream: bool = False) -> Completion:
        await self.limits.acquire(estimate)
        try:
            self.cache.check_writable()  # the disk may have filled while this call waited
        except BuildFailed:
            self.limits.release(estimate, None)
            raise
        self.counters.in_flight += 1
        self.counters.requests += 1
        actual: int | None = None
        started = time.monotonic()
        try:
            content = orjson.dumps(body)
            try:
                raw = parse(await self._http().post(path, content, stream=stream))
            except (ValueError, KeyError, TypeError, IndexError) as exc:
                raise EmptyResponse(f"unreadable answer from {path}: {exc}") from exc
            actual = raw.prompt_tokens + raw.completion_tokens
            self.limits.concurrency.on_success(time.monotonic() - started, raw.completion_tokens)
            return raw
        except Exception as exc:
            if is_rate_limit(exc):
                self.limits.concurrency.on_rate_limited()
            elif isinstance(exc, StreamCut) and self.counters.in_flight > 1:
                self.limits.concurrency.on_cut()
            elif isinstance(exc, openai.APITimeoutError):
                # Given up on, its connection closed: a server that stops on a disconnect (a
                # streamed answer's does) is not still writing it when it is sent again.
                self.counters.abandoned += 1
            raise
        finally:
            self.counters.in_flight -= 1
            self.limits.release(estimate, actual)
