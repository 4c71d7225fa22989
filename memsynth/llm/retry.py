"""Which transport failures are worth another attempt, and how long to wait."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import openai

# Statuses that say "not now" rather than "never".
RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 520, 522, 524, 529}
# 412: memsynth's simulator asked for stage variables the build does not send.
FATAL_STATUS = {401, 403, 404, 412}


class EmptyResponse(Exception):
    """A 200 answer that carried no choice to read."""


class StreamCut(EmptyResponse):
    """A streamed answer that ended with no finish_reason. With other requests in flight it is
    how llama-cpp-python's server (`interrupt_requests`, on by default) gives its one slot to
    the next request: `[DONE]` after the first chunk of the answer it was writing."""


class Truncated(Exception):
    """An answer cut off at max_tokens (`finish_reason: length`): asked again, never parsed."""

    def __init__(self, completion: Any, max_tokens: int | None = None):
        super().__init__("the answer was cut off at max_tokens")
        self.completion = completion
        self.max_tokens = max_tokens  # what the cut-off attempt asked for (None: the server's own)


# What servers say when they cannot take a field of the request at all (any status: llama.cpp
# answers a json_schema response_format with a 500), and the setting that avoids the field.
_INVALID_FIELDS = (
    (re.compile(r"response_format|json_schema|'text' or 'json_object'|structured output", re.I),
     "response_format", "set llm.response_mode: auto (--response-mode auto), which finds the form the "
                        "server enforces (or json_object, which puts the schema in the prompt)"),
    (re.compile(r"maximum context length|exceed(s|ed)? (the )?context|context (window|length) exceeded", re.I),
     "max_tokens", "lower llm.max_tokens (or llm.max_tokens_ceiling) so prompt and answer fit the model's context"),
)


def invalid_request(exc: BaseException) -> str | None:
    """'<field>: <fix>' when the endpoint refuses a field every request of the build carries:
    no retry can succeed, and nothing should be paid waiting for one."""
    if not isinstance(exc, openai.APIStatusError) or exc.status_code in (408, 429) or exc.status_code >= 502:
        return None
    said = f"{exc.message} {getattr(exc, 'body', '') or ''}"
    for pattern, name, fix in _INVALID_FIELDS:
        if pattern.search(said):
            return f"it does not accept the request's `{name}`: {fix}"
    return None


def is_retryable(exc: BaseException) -> bool:
    """True for 429, 5xx, timeouts, dropped connections, unreadable bodies and cut-off answers;
    never for a request the endpoint calls invalid."""
    if invalid_request(exc):
        return False
    if isinstance(exc, (EmptyResponse, Truncated)):
        return True
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if isinstance(exc, openai.APIResponseValidationError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return False


def is_fatal(exc: BaseException) -> bool:
    """True when no request of this build can succeed (bad key, wrong model or URL)."""
    return isinstance(exc, openai.APIStatusError) and exc.status_code in FATAL_STATUS


def is_unanswered(exc: BaseException) -> bool:
    """No answer from the endpoint itself: refused, reset, timed out, or a 5xx gateway error."""
    if isinstance(exc, (openai.APITimeoutError, openai.APIConnectionError)):
        return True
    if invalid_request(exc):
        return False  # it answered: with a refusal of the request, not an outage
    return isinstance(exc, openai.APIStatusError) and exc.status_code >= 500


def is_connect_failure(exc: BaseException) -> bool:
    """The connection itself failed (refused, no route): nothing was sent."""
    cause = exc.__cause__ or exc.__context__
    return (isinstance(exc, openai.APIConnectionError) and cause is not None
            and (type(cause).__name__ in ("ConnectError", "ConnectTimeout", "ConnectionRefusedError")
                 or "Cannot connect" in str(cause)))


def is_rate_limit(exc: BaseException) -> bool:
    return isinstance(exc, openai.APIStatusError) and exc.status_code == 429


def retry_after_seconds(exc: BaseException, cap: float = 60.0) -> float | None:
    """The server's Retry-After (seconds or retry-after-ms), if it sent one."""
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if not headers:
        return None
    ms = headers.get("retry-after-ms")
    try:
        if ms is not None:
            return min(cap, max(0.0, float(ms) / 1000))
        value = headers.get("retry-after")
        if value is not None:
            return min(cap, max(0.0, float(value)))
    except ValueError:
        return None
    return None


# Jitter from a generator of our own: a build's retries never draw from (or reseed) the random
# module the caller's program uses, as a test framework's data generation does.
JITTER = random.Random()


def backoff_seconds(attempt: int, exc: BaseException | None, *, base: float = 0.5,
                    cap: float = 30.0) -> float:
    """Retry-After when given, else full-jitter exponential backoff for `attempt` (1-based)."""
    if exc is not None:
        hinted = retry_after_seconds(exc)
        if hinted is not None:
            return hinted + JITTER.uniform(0, 0.1)
    return JITTER.uniform(0, min(cap, base * 2 ** (attempt - 1)))


class FailureRate:
    """The endpoint's share of failed attempts (429s aside), to tell a request that keeps
    failing on its own from one that is merely unlucky on a flaky endpoint."""

    # Odds at which a run of failures is no longer bad luck: 1 in a million requests.
    ODDS = 1e-6
    MOST = 40  # attempts, whatever the rate

    def __init__(self) -> None:
        self.attempts = 0
        self.failed = 0

    def record(self, ok: bool) -> None:
        self.attempts += 1
        self.failed += not ok

    def attempts_needed(self, floor: int) -> int:
        """Failures in a row of one request that the endpoint's failure rate cannot explain.

        At 23% failed attempts (10% 500s, 5% malformed, 5% cut off, 2% dropped) six in a row
        happen to one request in 6,000; ten to one in 2 million.
        """
        rate = (self.failed + 1) / (self.attempts + 20)  # a prior of 1 in 20 for young builds
        if rate >= 0.9:
            return self.MOST
        return max(floor, min(self.MOST, math.ceil(math.log(self.ODDS) / math.log(rate))))
