"""What the simulator counts while it serves: requests, outcomes, tokens and busy time (`/stats`)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field


@dataclass
class Counters:
    requests: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)
    # Tokens of the answers sent (cut-off ones too): what a real server would bill.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # When chat requests began and ended (time.time()), and how long at least one was in
    # flight: a client's start-up, its tail and its idle gaps, to the millisecond.
    first_request_at: float | None = None
    first_work_at: float | None = None
    last_answer_at: float | None = None
    busy_seconds: float = 0.0
    busy_since: float | None = None

    def started(self) -> None:
        now = time.time()
        if self.first_request_at is None:
            self.first_request_at = now
        if self.in_flight == 0:
            self.busy_since = now
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def ended(self) -> None:
        self.in_flight -= 1
        now = self.last_answer_at = time.time()
        if self.in_flight == 0 and self.busy_since is not None:
            self.busy_seconds += now - self.busy_since
            self.busy_since = None

    def timing(self) -> dict[str, float | None]:
        ongoing = time.time() - self.busy_since if self.busy_since is not None else 0.0
        return {"first_request_at": self.first_request_at, "first_work_at": self.first_work_at,
                "last_answer_at": self.last_answer_at,
                "busy_seconds": round(self.busy_seconds + ongoing, 3)}

    def count(self, outcome: str) -> None:
        self.by_outcome[outcome] = self.by_outcome.get(outcome, 0) + 1
