"""The LLM engine: cache → limits → OpenAI-compatible endpoint, with retries."""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import replace
from typing import Any

import openai

from memsynth.core.errors import BuildFailed, ConfigError, MemsynthError
from memsynth.core.secrets import masked_error, remember
from memsynth.llm.attempts import ceiling_for, longer_max_tokens
from memsynth.llm.batch import BatchQueue, LineFailed
from memsynth.llm.cache import ResponseCache
from memsynth.llm.capabilities import Capabilities, learn
from memsynth.llm.completion import Completion, response_from_record
from memsynth.llm.http import Poster
from memsynth.llm.limits import RequestLimits
from memsynth.llm.online import OnlineCalls
from memsynth.llm.outage import OutageGate
from memsynth.llm.request import EmbeddingRequest, LLMRequest, LLMResponse, TransportFailure
from memsynth.llm.retry import EmptyResponse, FailureRate
from memsynth.llm.runaway import RUNAWAY, looped
from memsynth.llm.settings import EngineCounters, EngineSettings, Spend
from memsynth.llm.silence import Pulse
from memsynth.llm.wire import Wire


class LLMEngine(OnlineCalls, Wire):
    """Answers `LLMRequest`s, from the cache when it can, from the endpoint when it must: how
    it asks online is `OnlineCalls`', what it sends and how is `Wire`'s."""

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
                if response.finish_reason == "length" and looped(response.content, self.settings.runaway_tokens):
                    self.counters.runaways += 1  # cut off in a loop: more room buys more loop
                    response = replace(response, finish_reason=RUNAWAY)
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
