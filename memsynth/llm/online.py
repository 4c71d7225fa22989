"""One online call, asked again until it is answered or given up on: cut-off answers and
runaways kept, outages waited out, and a wrong URL, model or request told apart from a
failing endpoint."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import openai
from tenacity import AsyncRetrying, retry_if_exception

from memsynth.core.errors import BuildFailed
from memsynth.llm.attempts import CallBudget, describe_failure
from memsynth.llm.completion import Completion
from memsynth.llm.outage import OutageGate
from memsynth.llm.request import EmbeddingRequest, LLMRequest, LLMResponse, TransportFailure
from memsynth.llm.retry import (
    FailureRate,
    Truncated,
    invalid_request,
    is_connect_failure,
    is_fatal,
    is_retryable,
)
from memsynth.llm.runaway import RUNAWAY, Runaway, looped
from memsynth.llm.settings import EngineCounters, EngineSettings

# Calls that must fail to connect, with no call ever answered, before a build gives up.
UNREACHABLE_AFTER = 2


class OnlineCalls:
    """How `LLMEngine` fetches an answer online (a part of it: the engine sets these
    attributes, counts usage and asks the endpoint which models it serves)."""

    settings: EngineSettings
    counters: EngineCounters
    gate: OutageGate
    failure_rate: FailureRate
    _successes: int
    _unreachable: int

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
                if raw.finish_reason == "length" and looped(raw.content, self.settings.runaway_tokens):
                    # Cut off in a loop (an answer that came whole, so no watch stopped it):
                    # more room would only buy more of the loop.
                    self.counters.runaways += 1
                    raw = replace(raw, finish_reason=RUNAWAY)
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

    def _never_answered(self, exc: BaseException) -> None:
        """An endpoint that has refused every connection so far is a wrong URL, not an outage."""
        if self._successes == 0 and is_connect_failure(exc):
            self._unreachable += 1
            if self._unreachable >= UNREACHABLE_AFTER:
                raise BuildFailed(
                    f"cannot reach the endpoint at {self.settings.base_url or 'the default OpenAI URL'}: "
                    f"{describe_failure(exc)}") from exc


def _prompt_tokens(request: LLMRequest) -> int:
    """About the prompt's tokens, for an answer stopped before the server said (a runaway)."""
    return sum(len(m.get("content", "")) for m in request.messages) // 4


def _estimate_tokens(request: LLMRequest | EmbeddingRequest) -> int:
    if isinstance(request, EmbeddingRequest):
        return len(request.text) // 4 + 1
    chars = sum(len(m.get("content", "")) for m in request.messages)
    return chars // 4 + min(request.first_max_tokens or 1000, 1000)
