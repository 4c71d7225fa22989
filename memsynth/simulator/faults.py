"""The failures the simulator injects: which one a request meets, and how a cut answer looks."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any


@dataclass
class Faults:
    """Probabilities (0–1) of each injected failure, drawn per request."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_dropped: float = 0.0  # the connection is closed without an answer
    rate_malformed: float = 0.0  # a 200 whose body is not a readable chat completion
    rate_truncated: float = 0.0  # half the content, finish_reason "length"
    rate_slow: float = 0.0  # answered after an extra `slow_ms`
    slow_ms: float = 2000.0
    seed: int = 0
    # Forced outcomes ("429", "500", "dropped", "malformed", "truncated", "slow", "ok") for
    # the first requests, before the random draws take over: tests use it to be sure each
    # fault occurs.
    schedule: tuple[str, ...] = ()


def draw_fault(f: Faults, rng: random.Random, number: int) -> str:
    """The outcome of request `number` (1-based): scheduled, else drawn at the set rates."""
    if number <= len(f.schedule):
        return f.schedule[number - 1]
    draw = rng.random()
    if draw < f.rate_429:
        return "429"
    if draw < f.rate_429 + f.rate_500:
        return "500"
    if draw < f.rate_429 + f.rate_500 + f.rate_dropped:
        return "dropped"
    draw = rng.random()
    if draw < f.rate_malformed:
        return "malformed"
    if draw < f.rate_malformed + f.rate_truncated:
        return "truncated"
    if draw < f.rate_malformed + f.rate_truncated + f.rate_slow:
        return "slow"
    return "ok"


def truncate(payload: dict[str, Any]) -> None:
    choice = payload["choices"][0]
    content = choice["message"]["content"] or ""
    choice["message"]["content"] = content[: max(1, len(content) // 2)]
    choice["finish_reason"] = "length"
    usage = payload.get("usage") or {}
    if "completion_tokens" in usage:  # what was generated before the cut
        usage["completion_tokens"] = max(1, usage["completion_tokens"] // 2)
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage["completion_tokens"]

