"""Limits held across everything one build sends: requests in flight, RPM and TPM."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable


class AdaptiveConcurrency:
    """A ceiling on requests in flight that backs off on 429s and recovers gradually (AIMD).

    The ceiling never exceeds `maximum`. A rate-limit answer halves it (at most once per
    `cooldown_s`, so a burst of 429s from one overload counts once); every success adds
    1/ceiling, i.e. about one slot per ceiling's worth of successes.
    """

    def __init__(self, maximum: int, *, cooldown_s: float = 1.0):
        if maximum < 1:
            raise ValueError("concurrency must be at least 1")
        self.maximum = maximum
        self.ceiling = float(maximum)
        self.in_flight = 0
        self.peak = 0
        self.backoffs = 0
        self.cuts = 0  # streams ended early while others were in flight
        self.preempts = False  # the server gives its slot to the next request: one at a time
        self._cooldown_s = cooldown_s
        self._last_backoff = float("-inf")
        self._waiters: deque[asyncio.Future[None]] = deque()
        # Told when this ceiling halves on a 429 of its own, so processes that share the
        # endpoint back off together (see `peer_backed_off`).
        self.on_backoff: Callable[[], None] | None = None

    async def acquire(self) -> None:
        while self.in_flight >= int(self.ceiling):
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # pass the slot we were given to someone else
                raise
        self._tally()
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self._tally()
        self.in_flight -= 1
        self._wake()

    def _tally(self) -> None:
        """Called before `in_flight` changes (`AutoConcurrency` averages it over time)."""

    def on_success(self, seconds: float | None = None, tokens: int | None = None) -> None:
        """An answer came (in `seconds`, `tokens` long: what `AutoConcurrency` reads)."""
        if self.ceiling < self.maximum:
            self.ceiling = min(float(self.maximum), self.ceiling + 1.0 / self.ceiling)
            self._wake()

    def on_rate_limited(self) -> None:
        if self._halve() and self.on_backoff is not None:
            self.on_backoff()

    def on_cut(self) -> None:
        """A streamed answer ended early while others were in flight. Twice, and the server is
        one that hands its slot to the next request mid-answer (llama-cpp-python's default):
        every request beyond one would be cut, so one at a time from now on. Once may be a
        glitch, and pinning a batching server to one request would cost the build dearly."""
        self.cuts += 1
        if self.cuts >= 2 and not self.preempts:
            self.preempts = True
            self.maximum = 1
            self._pin()

    def _pin(self) -> None:
        self.ceiling = 1.0

    def peer_backed_off(self) -> None:
        """Another process sending to the same endpoint was told 429: halve with it, or the
        others' full ceilings would undo this one's back-off."""
        self._halve()

    def _halve(self) -> bool:
        now = time.monotonic()
        if now - self._last_backoff < self._cooldown_s:
            return False
        self._last_backoff = now
        self.ceiling = max(1.0, self.ceiling / 2)
        self.backoffs += 1
        return True

    def report(self) -> dict[str, float | int | str | None]:
        """The ceiling it holds, and why (for a command's summary)."""
        why = ("the server ends one answer's stream when another request arrives (llama-cpp-python's "
               "interrupt_requests): one request at a time") if self.preempts else "llm.concurrency, backing off on 429s"
        return {"mode": "fixed", "concurrency": int(self.ceiling), "peak": self.peak, "maximum": self.maximum,
                "backoffs": self.backoffs, "why": why}

    def _wake(self) -> None:
        free = int(self.ceiling) - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1


class AutoConcurrency(AdaptiveConcurrency):
    """`llm.concurrency: auto`: the fewest requests in flight that get the server's full
    throughput, for servers that queue instead of answering 429 (vLLM, SGLang, llama.cpp).

    Past the batch that fills a GPU, more requests in flight add only latency. So this
    measures the tokens answered per second at each ceiling (a window of answers, after the
    ones already in flight at the last change). From 32 (the fixed default) it climbs:
    fourfold while throughput grows by 60 % or more (far below the server's batch, each step
    there costs throughput), twofold while it grows by a quarter, by half while it grows by
    at least `gain`; then it steps down (by a third while throughput does not fall at all, by
    a sixth while it holds within `gain`) and settles at the lowest ceiling that keeps it.
    Every `recheck_s` seconds below its maximum it tries a fifth more, in case the server got
    room, and goes back to the ceiling it held if that gained nothing. A 429 still halves it,
    and the climb starts again from there.

    Throughput is read by Little's law: the mean number in flight over the window times the
    tokens answered per second of latency. Counting answers over the window's time instead
    depends on where the window cuts a wave of answers, and on a batching server that noise
    (5-10 % a window) was as large as the steps it must tell apart.
    """

    def __init__(self, maximum: int, *, initial: int = 32, gain: float = 0.05, recheck_s: float = 60.0):
        super().__init__(maximum)
        self.ceiling = float(min(initial, maximum))
        self.gain = gain
        self.recheck_s = recheck_s
        self.phase = "up"  # up | down | hold
        self._rechecking = False  # climbing from a hold: the ceilings below were measured already
        self.best: tuple[float, float] | None = None  # (ceiling, tokens/s): the lowest at full throughput
        self.windows = 0
        self._held_since = 0.0
        self._skip = 0  # answers still in flight from before the last change
        self._window: list[int] = []  # completion tokens of this window's answers
        self._latency = 0.0  # and the sum of their latencies
        self._since = time.monotonic()  # when this window's measuring began
        self._full = 0  # of those answers, how many came while the ceiling was all in use
        self._area = 0.0  # requests in flight x seconds, since measuring began
        self._tallied = self._since
        self._begin(self.ceiling)

    def _tally(self) -> None:
        now = time.monotonic()
        self._area += self.in_flight * (now - self._tallied)
        self._tallied = now

    def _begin(self, ceiling: float) -> None:
        climbing = ceiling > self.ceiling
        self.ceiling = min(float(self.maximum), max(1.0, ceiling))
        # Answers asked for before the change say nothing of the new ceiling; after a climb,
        # neither do the first of the new one's, which start an empty pipeline: wait until a
        # whole ceiling's worth has come back.
        self._skip = max(self.in_flight, int(self.ceiling)) if climbing else self.in_flight
        self._restart()
        self._wake()

    def _restart(self) -> None:
        self._window, self._full, self._latency = [], 0, 0.0
        self._measure_from_now()

    def _measure_from_now(self) -> None:
        self._since = self._tallied = time.monotonic()
        self._area = 0.0

    def on_success(self, seconds: float | None = None, tokens: int | None = None) -> None:
        if seconds is None:
            return
        self._tally()
        if self._skip > 0:  # an answer asked for under the last ceiling: measuring starts after
            self._skip -= 1
            self._measure_from_now()
            return
        self._window.append(max(1, tokens or 1))
        self._latency += seconds
        # Calls were waiting for a slot: the ceiling, not the build, held them back. (Answers of
        # one wave come one after another, each slot freed before the next is refilled, so
        # `in_flight` alone says full for the first of them only.)
        self._full += self.in_flight >= int(self.ceiling) or bool(self._waiters)
        if len(self._window) < max(16, int(self.ceiling)):
            return
        # Answers of one latency come in waves of the whole ceiling: a window must span a
        # latency at least, or where it starts in a wave decides its rate.
        if time.monotonic() - self._since < self._latency / len(self._window):
            return
        if self._full < len(self._window) // 2:
            # The build had fewer calls ready than the ceiling: the window says nothing about
            # what the server could do with more. Measure again.
            self._restart()
            return
        span = time.monotonic() - self._since
        rate = (self._area / span) * sum(self._window) / self._latency if span > 0 and self._latency > 0 else 0.0
        self.windows += 1
        self._step(rate)

    def _step(self, rate: float) -> None:
        c = self.ceiling
        if self.best is None:
            self.best = (c, rate)
            self._begin(c * 2)
            return
        best_c, best_rate = self.best
        if self.phase == "up":
            if rate >= best_rate * (1 + self.gain) and c < self.maximum:
                self.best, self._rechecking = (c, rate), False
                self._begin(c * (4 if rate >= best_rate * 1.6 else 2 if rate >= best_rate * 1.25 else 1.5))
            elif rate >= best_rate * (1 + self.gain):
                self.best, self.phase, self._held_since = (c, rate), "hold", time.monotonic()
                self._begin(c)
            elif self._rechecking:  # no more room than before: back to what was held
                self.phase, self._held_since, self._rechecking = "hold", time.monotonic(), False
                self._begin(best_c)
            else:  # flat: the batch was full already; see if fewer keep it
                self.best = (best_c, max(best_rate, rate))
                self.phase = "down"
                self._begin(best_c / 1.2)
        elif self.phase == "down":
            if rate >= best_rate * (1 - self.gain) and c > 1:
                self.best = (c, max(best_rate, rate))
                # No loss at all: far from the server's batch yet (a one-slot server), go faster.
                self._begin(c / (1.5 if rate >= best_rate * 0.99 else 1.2))
            else:
                self.phase, self._held_since = "hold", time.monotonic()
                self._begin(best_c)
        else:
            due = time.monotonic() - self._held_since >= self.recheck_s
            if due and c < self.maximum:  # room again? try a little more
                self.best, self.phase, self._rechecking = (c, rate), "up", True
                self._begin(c * 1.2)
            else:
                self._restart()

    def _pin(self) -> None:
        self.best, self.phase, self._rechecking = None, "hold", False
        self._begin(1.0)

    def _halve(self) -> bool:
        halved = super()._halve()
        if halved:  # told to slow down: measure again from the halved ceiling
            self.best, self.phase, self._rechecking = None, "up", False
            self._begin(self.ceiling)
        return halved

    def report(self) -> dict[str, float | int | str | None]:
        """The ceiling it holds, and why (for the build summary)."""
        if self.preempts:
            why = ("the server ends one answer's stream when another request arrives (llama-cpp-python's "
                   "interrupt_requests): one request at a time")
        elif self.best is None or self.windows < 2:
            why = "too few answers to measure the server's throughput"
        elif self.phase == "hold":
            why = (f"the fewest in flight that kept {self.best[1]:.0f} tokens/s: more added latency, "
                   "not throughput")
        elif int(self.ceiling) >= self.maximum:
            why = f"at its maximum ({self.maximum}): throughput still grew with every step"
        else:
            why = f"still measuring ({self.phase})"
        return {"mode": "auto", "concurrency": int(self.ceiling), "peak": self.peak, "maximum": self.maximum,
                "tokens_per_s": round(self.best[1], 1) if self.best else None, "phase": self.phase,
                "windows": self.windows, "backoffs": self.backoffs, "why": why}


class TokenBucket:
    """`rate_per_minute` units per minute, with at most one minute's worth banked."""

    def __init__(self, rate_per_minute: float):
        if rate_per_minute <= 0:
            raise ValueError("a rate limit must be positive")
        self.capacity = float(rate_per_minute)
        self.tokens = float(rate_per_minute)
        self._per_second = rate_per_minute / 60.0
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = time.monotonic()
        self.tokens = min(self.capacity, self.tokens + (now - self._stamp) * self._per_second)
        self._stamp = now

    async def take(self, amount: float) -> None:
        """Wait until `amount` units are available, then spend them."""
        amount = min(amount, self.capacity)
        async with self._lock:  # first come, first served
            self._refill()
            while self.tokens < amount:
                await asyncio.sleep((amount - self.tokens) / self._per_second)
                self._refill()
            self.tokens -= amount

    def adjust(self, delta: float) -> None:
        """Correct an estimate once the real figure is known (positive delta spends more)."""
        self._refill()
        self.tokens = min(self.capacity, self.tokens - delta)


class RequestLimits:
    """The three limits together, shared by every call in one build."""

    def __init__(self, concurrency: int, rpm: float | None = None, tpm: float | None = None,
                 *, auto: bool = False):
        # auto: `concurrency` is the most it may reach (llm.concurrency: auto).
        self.concurrency = AutoConcurrency(concurrency) if auto else AdaptiveConcurrency(concurrency)
        self.rpm = TokenBucket(rpm) if rpm else None
        self.tpm = TokenBucket(tpm) if tpm else None

    async def acquire(self, estimated_tokens: int) -> None:
        if self.rpm is not None:
            await self.rpm.take(1)
        if self.tpm is not None:
            await self.tpm.take(estimated_tokens)
        await self.concurrency.acquire()

    def release(self, estimated_tokens: int, actual_tokens: int | None) -> None:
        self.concurrency.release()
        if self.tpm is not None and actual_tokens is not None:
            self.tpm.adjust(actual_tokens - estimated_tokens)
