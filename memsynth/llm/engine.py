"""The LLM engine: cache → limits → OpenAI-compatible endpoint, with retries."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import replace
from typing import Any

import httpx2 as httpx  # the HTTP library of openai >= 3
import openai
import orjson
from tenacity import AsyncRetrying, retry_if_exception

from memsynth.core.errors import BuildFailed, ConfigError, MemsynthError
from memsynth.core.secrets import masked_error, remember
from memsynth.llm.attempts import CallBudget, ceiling_for, describe_failure, longer_max_tokens
from memsynth.llm.batch import BatchQueue, LineFailed
from memsynth.llm.cache import ResponseCache
from memsynth.llm.capabilities import Capabilities, learn
from memsynth.llm.completion import Completion, response_from_record
from memsynth.llm.http import DirectPoster, OpenAIPoster, Poster, openai_client
from memsynth.llm.limits import RequestLimits
from memsynth.llm.outage import OutageGate
from memsynth.llm.request import EmbeddingRequest, LLMRequest, LLMResponse, TransportFailure
from memsynth.llm.retry import (
    EmptyResponse,
    FailureRate,
    StreamCut,
    Truncated,
    invalid_request,
    is_connect_failure,
    is_fatal,
    is_rate_limit,
    is_retryable,
)
from memsynth.llm.runaway import RUNAWAY, Runaway
from memsynth.llm.settings import EngineCounters, EngineSettings, Spend
from memsynth.llm.silence import Pulse

# Calls that must fail to connect, with no call ever answered, before a build gives up.
UNREACHABLE_AFTER = 2


class LLMEngine:
    """Answers `LLMRequest`s, from the cache when it can, from the endpoint when it must."""

    def __init__(self, settings: EngineSettings, cache: ResponseCache,
                 *, api_key: str | None = None):
        self.settings = settings
        self.cache = cache
        self.limits = RequestLimits(settings.concurrency, settings.rpm, settings.tpm, auto=settings.concurrency_auto)
        self.counters = EngineCounters()
        key = api_key if api_key is not None else os.environ.get(settings.api_key_env)
        if not key:
            raise ConfigError(
                f"no API key: set the environment variable {settings.api_key_env} "
                "(any non-empty value for endpoints without auth), or use --llm simulator"
            )
        self._api_key = key
        remember(key)  # masked in every error and file from now on, whatever echoes it
        self._client: openai.AsyncOpenAI | None = None
        self._poster: Poster | None = None
        self._inflight_keys: dict[str, asyncio.Future[LLMResponse]] = {}
        self._successes = 0
        self._unreachable = 0
        self.gate = OutageGate(settings.outage_wait_s, self._probe)
        self.failure_rate = FailureRate()
        self.spend = Spend()
        self.capabilities: Capabilities | None = None  # once learn_capabilities has run
        self.pulse = Pulse()  # the endpoint's sign of life, by which a queued request is timed
        self.batches = (BatchQueue(self._openai, cache.directory, settings.batch, self._keep_batch_answer)
                        if settings.mode == "batch" else None)

    def share_accounts(self, other: LLMEngine) -> None:
        """Count into `other`'s totals and spend from its budget: one build's engines (a model
        per stage) are one account."""
        self.counters = other.counters
        self.spend = other.spend
        if self.base_url == other.base_url:  # one server, one queue: what is ahead is either's
            self.pulse = other.pulse

    def learn_capabilities(self, model: str, *, probe_formats: bool, seed: int | None = None,
                           refresh: bool = False) -> Capabilities:
        """What the endpoint does for `model` (probed once, then kept in the cache folder); its
        context becomes the ceiling of a cut-off answer's max_tokens unless one is set."""
        try:
            found = learn(self.cache.directory, self.base_url, self._api_key, model, probe_formats=probe_formats,
                          seed=seed, timeout_s=self.settings.timeout_s, refresh=refresh)
        except MemsynthError as exc:  # the probe quotes the endpoint's answers
            raise masked_error(exc) from None
        self.settings.context_tokens = found.context
        self.counters.probe_requests += found.probe_requests
        self.capabilities = found
        return found

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

    async def aclose(self) -> None:
        if self.batches is not None:
            await self.batches.aclose()
        await self.cache.drain()
        if self._poster is not None:
            await self._poster.aclose()
            self._poster = None
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def complete(self, request: LLMRequest, *, stage: str = "") -> LLMResponse:
        """The response for `request`: cached, or fetched, made durable, then returned."""
        return await self._answer(request, stage, self._send)

    async def embed(self, request: EmbeddingRequest, *, stage: str = "") -> list[float]:
        """The embedding of `request.text` from `/embeddings`: cached, limited and retried
        like a completion (the vector is kept as the record's JSON content)."""
        response = await self._answer(request, stage, self._send_embedding)
        return json.loads(response.content)

    async def _answer(self, request: Any, stage: str, send: Any) -> LLMResponse:
        key = request.cache_key()
        record = self.cache.get(key)
        if record is not None:
            self.counters.cached += 1
            self.counters.done += 1
            return response_from_record(record, cached=True)
        self.cache.check_writable()
        # Identical requests in flight at once share one upstream call.
        pending = self._inflight_keys.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LLMResponse] = asyncio.get_running_loop().create_future()
        self._inflight_keys[key] = future
        try:
            if self.batches is not None and isinstance(request, LLMRequest):
                response = await self._fetch_batched(request, key, stage)  # cached as it lands
            else:
                response = await self._fetch(request, send)
                await self.cache.put(key, response.to_record(),
                                     {"stage": stage, "model": request.model})
            future.set_result(response)
            self.counters.done += 1
            return response
        except BaseException as exc:
            if isinstance(exc, (MemsynthError, TransportFailure)):
                # Where errors leave the LLM layer: what the endpoint said, with no secret in it.
                masked_error(exc)
            future.set_exception(exc)
            future.exception()  # mark retrieved: nobody else may be waiting
            self.counters.failed += 1
            raise
        finally:
            del self._inflight_keys[key]

    def _cost(self, model: str, prompt: int, completion: int, cached: int = 0) -> float:
        price_in, price_out, price_cached = self.settings.prices.get(model, (0.0, 0.0, 0.0))
        return ((prompt - cached) * price_in + cached * price_cached + completion * price_out) / 1e6

    def _reserve(self, request: Any) -> float:
        """Hold the most this request can cost against the budget, or stop the build."""
        if self.settings.budget_usd is None:
            return 0.0
        chars = (len(request.text) if isinstance(request, EmbeddingRequest)
                 else sum(len(m.get("content", "")) for m in request.messages))
        # A token is at least one character; the answer at most its max_tokens (or the ceiling).
        most_out = 0 if isinstance(request, EmbeddingRequest) else max(
            ceiling_for(request, self.settings) or 0, int(request.params.get("max_tokens") or 4096))
        worst = self._cost(request.model, chars, most_out)
        spend = self.spend
        if spend.spent + spend.reserved + worst > self.settings.budget_usd:
            raise BuildFailed(f"the budget of ${self.settings.budget_usd:g} is reached (${spend.spent:.4f} "
                              f"spent, ${spend.reserved:.4f} in flight); nothing was published. Every "
                              "answer so far is cached: raise llm.budget_usd and re-run to go on")
        spend.reserved += worst
        return worst

    async def _fetch(self, request: Any, send: Any) -> LLMResponse:
        reserved = self._reserve(request)
        try:
            response = await self._fetch_within_budget(request, send)
        finally:
            self.spend.reserved -= reserved
        self.spend.spent += self._cost(request.model, response.prompt_tokens, response.completion_tokens,
                                     response.cached_prompt_tokens)
        return response

    async def _fetch_batched(self, request: LLMRequest, key: str, stage: str) -> LLMResponse:
        """The answer from a batch: a failed line, or a cut-off answer while max_tokens can
        grow, is asked again in the next batch."""
        assert self.batches is not None
        reserved = self._reserve(request)
        started = time.monotonic()
        failures = truncated = 0
        self.counters.in_flight += 1
        try:
            while True:
                self.cache.check_writable()  # an answer that could not be kept is not asked for again
                max_tokens = longer_max_tokens(request, ceiling_for(request, self.settings), truncated)
                self.counters.requests += 1
                try:
                    response = await self.batches.answer(key, self._chat_body(request, max_tokens),
                                                         stage, request.model)
                except LineFailed as exc:
                    failures += 1
                    if failures >= self.settings.max_attempts:
                        raise TransportFailure(f"{exc} (in {failures} batches)") from exc
                    self.counters.retries += 1
                    continue
                if (response.finish_reason == "length"
                        and longer_max_tokens(request, ceiling_for(request, self.settings), truncated + 1) != max_tokens
                        and truncated + 1 < self.settings.max_attempts):
                    truncated += 1
                    self.counters.retries += 1
                    continue
                return replace(response, attempts=failures + truncated + 1, latency_s=time.monotonic() - started)
        finally:
            self.counters.in_flight -= 1
            self.spend.reserved -= reserved

    async def _keep_batch_answer(self, key: str, body: dict[str, Any], stage: str, model: str) -> LLMResponse:
        """A batch line's chat completion, counted, priced and cached like an online answer."""
        try:
            raw = Completion.parse(body)
        except (EmptyResponse, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
            raise LineFailed(f"unreadable answer in a batch: {exc}") from exc
        response = LLMResponse(content=raw.content, finish_reason=raw.finish_reason,
                               prompt_tokens=raw.prompt_tokens, completion_tokens=raw.completion_tokens,
                               cached_prompt_tokens=raw.cached_prompt_tokens, model=raw.model or model,
                               cached=False)
        self._successes += 1
        self._count_usage(model, response)
        self.spend.spent += self._cost(model, response.prompt_tokens, response.completion_tokens,
                                     response.cached_prompt_tokens)
        await self.cache.put(key, response.to_record(), {"stage": stage, "model": model})
        return response

    def _count_usage(self, model: str, response: LLMResponse) -> None:
        c = self.counters
        c.prompt_tokens += response.prompt_tokens
        c.completion_tokens += response.completion_tokens
        c.cached_prompt_tokens += response.cached_prompt_tokens
        per_model = c.by_model.setdefault(model, [0, 0, 0])
        per_model[0] += response.prompt_tokens
        per_model[1] += response.completion_tokens
        per_model[2] += response.cached_prompt_tokens

    async def _fetch_within_budget(self, request: Any, send: Any) -> LLMResponse:
        estimate = _estimate_tokens(request)
        started = time.monotonic()
        attempts = 0
        budget = CallBudget(self.settings, self.gate, self.failure_rate, started)
        cut: list[Completion] = []  # cut-off answers, each asked again

        async def attempt() -> Completion:
            nonlocal attempts
            await self.gate.admit()
            attempts += 1
            if attempts > 1:
                self.counters.retries += 1
            try:
                max_tokens = budget.max_tokens(request)
                try:
                    raw = await send(request, estimate, max_tokens)
                except Runaway as stopped:
                    # An answer, stopped: the stage runner re-asks it with a repair (not a retry
                    # here, which would ask the same prompt to run on the same way).
                    self.counters.runaways += 1
                    raw = Completion(content=stopped.content, finish_reason=RUNAWAY,
                                     prompt_tokens=_prompt_tokens(request), completion_tokens=stopped.tokens,
                                     model=stopped.model or request.model)
                if raw.finish_reason == "length":
                    cut.append(raw)  # paid for, even if thrown away
                    raise Truncated(raw, max_tokens or request.first_max_tokens)
            except Exception as exc:
                self._never_answered(exc)
                budget.failed(exc)
                raise
            self.gate.answered()
            self.failure_rate.record(ok=True)
            return raw

        try:
            first: Exception | None = None
            try:
                # Nearly every call is answered at once: the retry machinery (a measurable
                # share of the CPU per call) is built only for the few that are not.
                raw = await attempt()
            except Exception as exc:
                first = exc
            if first is not None:
                retrying = AsyncRetrying(retry=retry_if_exception(is_retryable), stop=budget.exhausted,
                                         wait=budget.wait, reraise=True)
                async for trying in retrying:
                    with trying:
                        if first is not None:  # the failure above, judged as tenacity judges any
                            failure, first = first, None
                            raise failure
                        raw = await attempt()
        except Truncated as exc:
            # Cut off every time: the stage runner asks for a shorter answer instead.
            raw = exc.completion
        except Exception as exc:
            if isinstance(exc, BuildFailed):
                raise
            if is_fatal(exc):
                hint = await self._not_found_hint(exc, request.model)
                raise BuildFailed(f"the endpoint refused the request: {describe_failure(exc)}{hint}") from exc
            if fix := invalid_request(exc):
                raise BuildFailed(f"the endpoint refused the request ({describe_failure(exc)[:120]}); {fix}") from exc
            if is_retryable(exc):
                # The endpoint is up but keeps failing this request: stop the build rather
                # than drop the item (every answer so far is cached).
                raise BuildFailed(f"the endpoint failed a request {budget.describe()}: {describe_failure(exc)}. "
                                  "Every answer so far is cached: re-run the build to resume") from exc
            raise TransportFailure(f"{describe_failure(exc)} (after {attempts} attempts)") from exc
        self._successes += 1
        # The call's tokens are every attempt's: a cut-off answer asked again was generated
        # (and billed) all the same.
        thrown = [c for c in cut if c is not raw]
        response = LLMResponse(
            content=raw.content,
            finish_reason=raw.finish_reason,
            prompt_tokens=raw.prompt_tokens + sum(c.prompt_tokens for c in thrown),
            completion_tokens=raw.completion_tokens + sum(c.completion_tokens for c in thrown),
            cached_prompt_tokens=raw.cached_prompt_tokens + sum(c.cached_prompt_tokens for c in thrown),
            model=raw.model or request.model,
            cached=False,
            attempts=attempts,
            latency_s=time.monotonic() - started,
        )
        self._count_usage(request.model, response)
        return response

    async def _not_found_hint(self, exc: BaseException, model: str) -> str:
        """What a 404 most likely means: a model the server does not serve (named with those
        it does), or a base URL without its /v1."""
        if not isinstance(exc, openai.APIStatusError) or exc.status_code != 404:
            return ""
        served = await self.served_models()
        if served and model not in served:
            listed = ", ".join(served[:8]) + (f" and {len(served) - 8} more" if len(served) > 8 else "")
            return f"; the model {model!r} is not served there (it serves {listed}): set llm.model or $MEMSYNTH_MODEL"
        base = (self.settings.base_url or "").rstrip("/")
        if base and not base.endswith("/v1"):
            return f"; the base URL {base} does not end in /v1, where OpenAI-compatible servers answer"
        return ""

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

    def _never_answered(self, exc: BaseException) -> None:
        """An endpoint that has refused every connection so far is a wrong URL, not an outage."""
        if self._successes == 0 and is_connect_failure(exc):
            self._unreachable += 1
            if self._unreachable >= UNREACHABLE_AFTER:
                raise BuildFailed(
                    f"cannot reach the endpoint at {self.settings.base_url or 'the default OpenAI URL'}: "
                    f"{describe_failure(exc)}") from exc

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


def _prompt_tokens(request: LLMRequest) -> int:
    """About the prompt's tokens, for an answer stopped before the server said (a runaway)."""
    return sum(len(m.get("content", "")) for m in request.messages) // 4


def _estimate_tokens(request: LLMRequest | EmbeddingRequest) -> int:
    if isinstance(request, EmbeddingRequest):
        return len(request.text) // 4 + 1
    chars = sum(len(m.get("content", "")) for m in request.messages)
    return chars // 4 + min(request.first_max_tokens or 1000, 1000)
