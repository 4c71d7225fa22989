"""Telling an outage from a bad answer: hold every call while the endpoint is down."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from memsynth.core.errors import BuildFailed

# Transport failures in a row, across all calls, with no answer between them, that make
# an outage. Random faults (10% 500s, 2% dropped connections) almost never line up 5 deep,
# and if they do the first probe ends the "outage" at once.
OUTAGE_AFTER = 5
PROBE_EVERY_S = (0.25, 5.0)  # first and longest pause between probes, doubling


class OutageGate:
    """Open while the endpoint answers; closed during an outage, when a cheap probe goes out
    now and then until the endpoint answers it, or `wait_s` passes and the build stops."""

    def __init__(self, wait_s: float, probe: Callable[[], Awaitable[bool]], *, clock=time.monotonic):
        self.wait_s = wait_s
        self._probe = probe
        self._clock = clock
        self._failures = 0
        self._since: float | None = None  # when the outage began
        self._probing = False
        self._next_probe = 0.0
        self._pause = PROBE_EVERY_S[0]
        self._reopened = asyncio.Event()
        self.outages = 0
        # Probes that found the endpoint down: failures before one are the outage's fault,
        # not their request's (a call compares this before and after).
        self.confirmed = 0
        self.answers = 0  # answers so far: was the endpoint up after a request failed?
        self.last_error = ""

    @property
    def down(self) -> bool:
        return self._since is not None

    async def admit(self) -> None:
        """Return when a request may go out: at once, or when an outage is over."""
        while self._since is not None:
            now = self._clock()
            if now - self._since > self.wait_s:
                raise BuildFailed(
                    f"the endpoint has not answered for {now - self._since:.0f} s "
                    f"(llm.outage_wait_s is {self.wait_s:g}); last error: {self.last_error}. "
                    "Every answer so far is cached: re-run the build once the endpoint is back")
            if not self._probing and now >= self._next_probe:
                self._probing = True
                try:
                    up = await self._probe()
                finally:
                    self._probing = False
                if up:
                    self.answered()
                else:
                    self.confirmed += 1
                    self._pause = min(PROBE_EVERY_S[1], self._pause * 2)
                    self._next_probe = self._clock() + self._pause
                continue
            self._reopened.clear()
            try:
                await asyncio.wait_for(self._reopened.wait(), timeout=max(0.05, min(self._pause, 1.0)))
            except TimeoutError:
                pass

    def answered(self) -> None:
        """An answer (a 429 or a malformed body too) means the endpoint is there."""
        self.answers += 1
        self._failures = 0
        if self._since is not None:
            self._since = None
            self._pause = PROBE_EVERY_S[0]
            self._reopened.set()

    def unreachable(self, error: str) -> None:
        """A request got no answer (refused, reset, timed out, a 5xx gateway error)."""
        self.last_error = error
        self._failures += 1
        if self._since is None and self._failures >= OUTAGE_AFTER:
            self._since = self._clock()
            self._next_probe = self._since + self._pause
            self.outages += 1
