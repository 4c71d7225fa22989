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
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)

    def release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def on_success(self) -> None:
        if self.ceiling < self.maximum:
            self.ceiling = min(float(self.maximum), self.ceiling + 1.0 / self.ceiling)
            self._wake()

    def on_rate_limited(self) -> None:
        if self._halve() and self.on_backoff is not None:
            self.on_backoff()

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

    def _wake(self) -> None:
        free = int(self.ceiling) - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1


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

    def __init__(self, concurrency: int, rpm: float | None = None, tpm: float | None = None):
        self.concurrency = AdaptiveConcurrency(concurrency)
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
