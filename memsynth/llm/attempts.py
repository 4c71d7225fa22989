"""How long one call keeps trying: rate limits on a time budget, outages on the gate's clock,
cut-off answers asked again with more room, and the request's own failures counted."""

from __future__ import annotations

import time

import openai
from tenacity import RetryCallState

from memsynth.core.secrets import mask
from memsynth.llm.outage import OutageGate
from memsynth.llm.request import LLMRequest
from memsynth.llm.retry import (
    FailureRate,
    Truncated,
    backoff_seconds,
    is_connect_failure,
    is_rate_limit,
    is_unanswered,
)
from memsynth.llm.settings import EngineSettings


class CallBudget:
    """How long one call keeps trying: 429s on a time budget, outages on the gate's clock,
    and only the failures of an endpoint that answers others against `max_attempts`
    (raised when the endpoint fails often enough to explain a longer run)."""

    def __init__(self, settings: EngineSettings, gate: OutageGate, rate: FailureRate, started: float):
        self.settings = settings
        self.gate = gate
        self.rate = rate
        self.started = started
        # The gate's (confirmed outages, answers) at each failure of this request.
        self.failures: list[tuple[int, int]] = []
        self.rate_limited = 0
        self.truncated = 0
        self.cut_at: list[int | None] = []  # max_tokens of each cut-off attempt
        self.last: BaseException | None = None

    def max_tokens(self, request: LLMRequest) -> int | None:
        return longer_max_tokens(request, ceiling_for(request, self.settings), self.truncated)

    @property
    def counted(self) -> int:
        """Failures of this request that the endpoint answered others after, with no
        confirmed outage since: the request's own fault, not the endpoint's."""
        return sum(1 for confirmed, answers in self.failures
                   if confirmed == self.gate.confirmed and self.gate.answers > answers)

    def failed(self, exc: BaseException) -> None:
        self.last = exc
        mark = (self.gate.confirmed, self.gate.answers)
        if is_rate_limit(exc):
            self.rate_limited += 1
            self.gate.answered()
            return
        if isinstance(exc, Truncated):
            self.truncated += 1
            self.cut_at.append(exc.max_tokens)
        if is_unanswered(exc):
            was_down = self.gate.down
            self.gate.unreachable(describe_failure(exc))
            if was_down:
                return
        else:
            self.gate.answered()  # a malformed body is still an answer
        self.rate.record(ok=False)
        self.failures.append(mark)

    @property
    def allowed(self) -> int:
        """Failures this request may have: `max_attempts`, or more on a flaky endpoint."""
        return self.rate.attempts_needed(self.settings.max_attempts)

    def exhausted(self, state: RetryCallState) -> bool:
        if self.gate.down:
            return False  # the gate decides: the endpoint comes back, or the build stops
        if self.last is not None and is_rate_limit(self.last):
            return time.monotonic() - self.started > self.settings.rate_limit_wait_s
        if isinstance(self.last, Truncated):
            # Cut off again with no more room is the answer's length, not luck: after one
            # unchanged retry the runner asks for a shorter answer.
            unchanged = len(self.cut_at) >= 2 and self.cut_at[-1] == self.cut_at[-2]
            return unchanged or self.counted >= self.settings.max_attempts
        return self.counted >= self.allowed

    def wait(self, state: RetryCallState) -> float:
        if self.gate.down:
            return 0.0  # the gate does the waiting, and lets one probe through at a time
        if isinstance(self.last, Truncated):
            return 0.0  # an answer, not a struggling endpoint: ask again at once
        if self.last is not None and is_rate_limit(self.last):
            return backoff_seconds(min(self.rate_limited, 6), self.last, base=self.settings.backoff_base_s,
                                   cap=self.settings.backoff_cap_s)
        return backoff_seconds(max(1, self.counted), self.last, base=self.settings.backoff_base_s,
                               cap=self.settings.backoff_cap_s)

    def describe(self) -> str:
        if self.last is not None and is_rate_limit(self.last):
            return f"with 429 for {time.monotonic() - self.started:.0f} s (llm.rate_limit_wait_s)"
        return (f"{self.counted} times in a row while answering others (llm.max_attempts is "
                f"{self.settings.max_attempts}; {self.allowed} at the endpoint's failure rate)")


def ceiling_for(request: LLMRequest, settings: EngineSettings) -> int | None:
    """The most max_tokens a cut-off answer of `request` may be asked again with: the
    configured ceiling, or the model's context, either way leaving room for the prompt; with
    neither, a request sent under its stage's budget grows to the build's limit."""
    limit = request.params.get("max_tokens")
    context = settings.context_tokens
    if context is None:
        return settings.max_tokens_ceiling or (int(limit) if request.budget is not None and limit else None)
    # An upper bound on the prompt's tokens: a CJK character is about one, ASCII about a quarter.
    chars = "".join(m.get("content", "") for m in request.messages)
    wide = sum(1 for ch in chars if ord(ch) > 0x2E7F)
    room = context - (len(chars) - wide) // 3 - wide - 64
    return min(settings.max_tokens_ceiling or room, room)


def longer_max_tokens(request: LLMRequest, ceiling: int | None, truncated: int) -> int | None:
    """max_tokens after `truncated` cut-off answers: doubled each time, up to the ceiling
    (None: the request's own)."""
    asked = request.first_max_tokens
    if not truncated or asked is None or ceiling is None or ceiling <= asked:
        return None
    return min(ceiling, int(asked) * 2 ** truncated)


def describe_failure(exc: BaseException) -> str:
    """What happened, in words: the status, or the connection error's own cause (masked before
    it is cut short, so no part of a key the endpoint echoed is left)."""
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {mask(str(exc.message))[:200]}"
    if is_connect_failure(exc):  # the client calls a refused connection a timeout
        return f"cannot connect: {mask(str(exc.__cause__ or exc.__context__))[:200]}"
    cause = exc.__cause__
    if isinstance(exc, openai.APIConnectionError) and cause is not None and str(cause):
        return f"{type(exc).__name__}: {type(cause).__name__}: {mask(str(cause))[:200]}"
    return f"{type(exc).__name__}: {mask(str(exc))[:200]}"
