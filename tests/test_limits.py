"""The rate limiter: in-flight ceiling, AIMD back-off and recovery, token buckets."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from memsynth.llm.limits import AdaptiveConcurrency, RequestLimits, TokenBucket


def test_in_flight_never_exceeds_the_ceiling():
    limit = AdaptiveConcurrency(5)

    async def worker():
        await limit.acquire()
        try:
            assert limit.in_flight <= 5
            await asyncio.sleep(0.001)
        finally:
            limit.release()

    async def main():
        await asyncio.gather(*(worker() for _ in range(200)))

    asyncio.run(main())
    assert limit.peak == 5
    assert limit.in_flight == 0


def test_rate_limit_halves_once_per_cooldown_then_recovers():
    limit = AdaptiveConcurrency(64, cooldown_s=10)
    limit.on_rate_limited()
    limit.on_rate_limited()  # same overload: counted once
    assert limit.ceiling == 32 and limit.backoffs == 1
    for _ in range(32):
        limit.on_success()
    assert 32 < limit.ceiling < 34  # about one slot per ceiling's worth of successes
    for _ in range(10_000):
        limit.on_success()
    assert limit.ceiling == 64


def test_backoff_limits_concurrency_in_practice():
    limit = AdaptiveConcurrency(8, cooldown_s=0)
    for _ in range(3):
        limit.on_rate_limited()
    assert int(limit.ceiling) == 1

    async def main():
        await limit.acquire()
        blocked = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0.01)
        assert not blocked.done()
        limit.release()
        await asyncio.wait_for(blocked, 1)
        limit.release()

    asyncio.run(main())


def test_cancelled_waiter_does_not_leak_a_slot():
    limit = AdaptiveConcurrency(1)

    async def main():
        await limit.acquire()
        waiter = asyncio.create_task(limit.acquire())
        await asyncio.sleep(0)
        waiter.cancel()
        limit.release()
        await asyncio.wait_for(limit.acquire(), 1)  # the slot is still there
        limit.release()

    asyncio.run(main())
    assert limit.in_flight == 0


def test_token_bucket_paces_requests(monkeypatch):
    """On the bucket's own clock (a loaded machine's scheduler has no say): 3 units at 10 a
    second from an empty bucket wait 0.3 s, in waits of 0.1 s."""
    from memsynth.llm import limits

    clock = [0.0]  # near zero, where a float resolves the bucket's smallest wait
    waits: list[float] = []

    class OwnAsyncio:  # the limits module's asyncio alone, its sleep on the bucket's clock
        def __getattr__(self, name: str):
            return getattr(asyncio, name)

        @staticmethod
        async def sleep(seconds: float) -> None:
            waits.append(seconds)
            assert len(waits) < 100, waits  # a bucket that never fills
            clock[0] += seconds

    monkeypatch.setattr(limits, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    monkeypatch.setattr(limits, "asyncio", OwnAsyncio())
    bucket = TokenBucket(rate_per_minute=600)  # 10 per second, 600 banked
    bucket.tokens = 0

    async def main():
        for _ in range(3):
            await bucket.take(1)

    asyncio.run(main())
    assert waits == pytest.approx([0.1, 0.1, 0.1])
    assert bucket.tokens == pytest.approx(0)


def test_tpm_adjusts_to_actual_usage():
    limits = RequestLimits(4, tpm=10_000)

    async def main():
        await limits.acquire(1000)
        limits.release(1000, actual_tokens=3000)

    asyncio.run(main())
    assert limits.tpm is not None and limits.tpm.tokens == pytest.approx(10_000 - 3000, abs=5)


def test_invalid_limits_are_refused():
    with pytest.raises(ValueError):
        AdaptiveConcurrency(0)
    with pytest.raises(ValueError):
        TokenBucket(0)
