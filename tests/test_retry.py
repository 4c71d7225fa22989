"""Retry classification and the engine's behaviour against a faulty endpoint."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time

import httpx2 as httpx
import openai
import pytest

from memsynth.core.errors import BuildFailed, ConfigError
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.request import LLMRequest
from memsynth.llm.retry import (
    FailureRate,
    backoff_seconds,
    is_fatal,
    is_retryable,
    retry_after_seconds,
)
from memsynth.llm.settings import EngineSettings
from memsynth.simulator.server import Faults, Simulator, SimulatorThread
from tests.conftest import start_simulator


def _status_error(status: int, headers: dict[str, str] | None = None) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://x/v1/chat/completions")
    response = httpx.Response(status, headers=headers or {}, request=request)
    classes = {429: openai.RateLimitError, 500: openai.InternalServerError,
               400: openai.BadRequestError, 401: openai.AuthenticationError,
               404: openai.NotFoundError, 503: openai.InternalServerError}
    return classes.get(status, openai.APIStatusError)("boom", response=response, body=None)


@pytest.mark.parametrize("status,retry", [(429, True), (500, True), (503, True), (400, False),
                                          (401, False), (404, False)])
def test_status_classification(status, retry):
    assert is_retryable(_status_error(status)) is retry


def test_timeouts_and_dropped_connections_are_retried():
    request = httpx.Request("POST", "http://x")
    assert is_retryable(openai.APITimeoutError(request=request))
    assert is_retryable(openai.APIConnectionError(request=request))
    assert not is_retryable(ValueError("not transport"))


def test_auth_and_missing_model_are_fatal():
    assert is_fatal(_status_error(401)) and is_fatal(_status_error(404))
    assert not is_fatal(_status_error(429))


def test_retry_after_is_honoured():
    assert retry_after_seconds(_status_error(429, {"retry-after": "3"})) == 3
    assert retry_after_seconds(_status_error(429, {"retry-after-ms": "250"})) == 0.25
    assert retry_after_seconds(_status_error(429)) is None
    wait = backoff_seconds(1, _status_error(429, {"retry-after": "2"}))
    assert 2 <= wait <= 2.1


def test_backoff_grows_and_is_capped():
    waits = [max(backoff_seconds(n, None, base=1, cap=8) for _ in range(200)) for n in (1, 3, 6)]
    assert waits[0] <= 1 and 2 < waits[1] <= 4 and waits[2] <= 8


@pytest.fixture(params=["openai", "direct"])
def client(request) -> str:
    """Each engine test runs through the openai client and through `llm.client: direct`."""
    return request.param


def _engine(base_url: str, tmp_path, **settings) -> LLMEngine:
    return LLMEngine(EngineSettings(base_url=base_url, api_key_env="UNUSED", backoff_base_s=0.01,
                                    **settings), ResponseCache(tmp_path), api_key="test-key")


def _req(i: int) -> LLMRequest:
    return LLMRequest(model="m", messages=({"role": "user", "content": f"q{i}"},),
                      json_schema={"type": "object", "properties": {"a": {"type": "string"}}},
                      schema_name="probe")


def test_a_flaky_endpoint_allows_longer_runs_of_failures_than_a_healthy_one():
    rate = FailureRate()
    assert rate.attempts_needed(6) == 6  # no history: the configured floor
    for i in range(1000):
        rate.record(ok=i % 100 >= 23)  # 23% failed, as under the 20/10/5/5/2/2 fault mix
    assert rate.attempts_needed(6) == 10
    healthy = FailureRate()
    for _ in range(1000):
        healthy.record(ok=True)
    assert healthy.attempts_needed(6) == 6
    down = FailureRate()
    for _ in range(100):
        down.record(ok=False)
    assert down.attempts_needed(6) == FailureRate.MOST


def test_engine_rides_out_429_and_500(tmp_path, client):
    sim = start_simulator(faults=Faults(rate_429=0.3, rate_500=0.2, seed=1))
    try:
        engine = _engine(sim.base_url, tmp_path, concurrency=8, max_attempts=12, client=client)

        async def main():
            out = await asyncio.gather(*(engine.complete(_req(i)) for i in range(60)))
            await engine.aclose()
            return out

        responses = asyncio.run(main())
        assert len(responses) == 60 and all(r.content.startswith("{") for r in responses)
        stats = sim.simulator.counters
        assert stats.by_outcome.get("429", 0) > 0 and stats.by_outcome.get("500", 0) > 0
        assert engine.counters.retries == stats.requests - 60
        assert engine.limits.concurrency.backoffs >= 1  # AIMD reacted to the 429s
    finally:
        sim.stop()


def _run(engine, requests):
    async def main():
        try:
            return await asyncio.gather(*(engine.complete(r) for r in requests), return_exceptions=True)
        finally:
            await engine.aclose()

    return asyncio.run(main())


class _Poisoned(Simulator):
    """Answers 500 to requests mentioning "poison", and normally to the rest."""

    async def chat_completions(self, request):
        from aiohttp import web

        body = await request.json()
        if "poison" in json.dumps(body):
            self.counters.requests += 1
            return web.json_response({"error": {"message": "internal"}}, status=500)
        return await super().chat_completions(request)  # aiohttp keeps the body for a second read


def test_a_request_that_keeps_failing_stops_the_build_instead_of_dropping_the_item(tmp_path, client):
    with SimulatorThread(_Poisoned(latency_ms=20)) as sim:
        engine = _engine(sim.base_url, tmp_path, max_attempts=3, concurrency=4, client=client)
        poison = LLMRequest(model="m", messages=({"role": "user", "content": "poison"},))
        outcomes = _run(engine, [poison, *(_req(i) for i in range(30))])
    assert isinstance(outcomes[0], BuildFailed), outcomes[0]
    # At least max_attempts failures while others were answered (counted once an answer follows).
    assert int(re.search(r"(\d+) times in a row", str(outcomes[0])).group(1)) >= 3
    assert "re-run" in str(outcomes[0])
    assert all(not isinstance(o, BaseException) for o in outcomes[1:])


def test_an_endpoint_that_stays_away_stops_the_build_after_outage_wait_s(tmp_path, client):
    sim = start_simulator()
    engine = _engine(sim.base_url, tmp_path, max_attempts=20, outage_wait_s=1.0, concurrency=8, timeout_s=2, client=client)

    async def main():
        try:
            first = await asyncio.gather(*(engine.complete(_req(i)) for i in range(4)))
            sim.stop()
            later = await asyncio.wait_for(  # a hang guard: max_attempts' back-off would take minutes
                asyncio.gather(*(engine.complete(_req(i)) for i in range(4, 20)), return_exceptions=True), 120)
            return first, later
        finally:
            await engine.aclose()

    first, later = asyncio.run(main())
    assert len(first) == 4
    # Stopped by the outage clock (llm.outage_wait_s is 1), not by running out of attempts.
    assert all(isinstance(o, BuildFailed) and "outage_wait_s is 1)" in str(o) for o in later), later
    assert engine.gate.outages == 1


def test_an_outage_is_waited_out_and_no_item_is_lost(tmp_path, client):
    sim = start_simulator(latency_ms=50)
    port = sim.port
    engine = _engine(sim.base_url, tmp_path, concurrency=4, max_attempts=2, outage_wait_s=60, timeout_s=5, client=client)
    restarted = []

    def outage():
        # Down only once the engine has had answers: before any, a refused connection is a
        # wrong URL, not an outage (on a loaded machine 0.4 s may pass with none).
        deadline = time.monotonic() + 30
        while engine._successes < 4 and time.monotonic() < deadline:
            time.sleep(0.02)
        sim.stop()
        time.sleep(2.0)  # down: connections refused
        restarted.append(SimulatorThread(Simulator(latency_ms=50), port=port).start())

    thread = threading.Thread(target=outage)
    thread.start()
    try:
        outcomes = _run(engine, [_req(i) for i in range(60)])
    finally:
        thread.join()
        for s in restarted:
            s.stop()
    assert all(not isinstance(o, BaseException) for o in outcomes), [o for o in outcomes if isinstance(o, Exception)][:3]
    assert engine.gate.outages >= 1
    assert restarted and restarted[0].simulator.counters.requests > 0


def test_rate_limits_are_waited_out_on_a_time_budget_not_a_count(tmp_path, client):
    sim = start_simulator(faults=Faults(rate_429=0.6, seed=3))
    try:
        engine = _engine(sim.base_url, tmp_path, concurrency=8, max_attempts=1, client=client)
        outcomes = _run(engine, [_req(i) for i in range(40)])
        assert all(not isinstance(o, BaseException) for o in outcomes)
        assert sim.simulator.counters.by_outcome.get("429", 0) > 20
        budget = _engine(sim.base_url, tmp_path / "b", max_attempts=1, rate_limit_wait_s=0.3, client=client)
        sim.simulator.faults = Faults(rate_429=1.0)
        (outcome,) = _run(budget, [_req(99)])
        assert isinstance(outcome, BuildFailed) and "rate_limit_wait_s" in str(outcome)
    finally:
        sim.stop()


def test_fatal_status_stops_the_build(tmp_path, client):
    from aiohttp import web

    from memsynth.simulator.server import Simulator, SimulatorThread

    class Refusing(Simulator):
        async def chat_completions(self, request):
            self.counters.requests += 1
            return web.json_response({"error": {"message": "bad key"}}, status=401)

    with SimulatorThread(Refusing()) as sim:
        engine = _engine(sim.base_url, tmp_path, client=client)

        async def main():
            try:
                await engine.complete(_req(0))
            finally:
                await engine.aclose()

        with pytest.raises(BuildFailed, match="HTTP 401"):
            asyncio.run(main())
        assert sim.simulator.counters.requests == 1  # not retried


def test_missing_api_key_is_a_config_error(tmp_path, monkeypatch):
    monkeypatch.delenv("MEMSYNTH_TEST_KEY", raising=False)
    with pytest.raises(ConfigError, match="MEMSYNTH_TEST_KEY"):
        LLMEngine(EngineSettings(base_url=None, api_key_env="MEMSYNTH_TEST_KEY"),
                  ResponseCache(tmp_path))


def test_cached_requests_are_not_sent_again(tmp_path, simulator):
    async def run_once():
        engine = _engine(simulator.base_url, tmp_path)
        out = await asyncio.gather(*(engine.complete(_req(i)) for i in range(10)))
        await engine.aclose()
        engine.cache.close()
        return out

    first = asyncio.run(run_once())
    sent = simulator.simulator.counters.requests
    second = asyncio.run(run_once())
    assert sent == 10 and simulator.simulator.counters.requests == 10
    assert [r.content for r in first] == [r.content for r in second]
    assert all(r.cached for r in second)


def test_identical_concurrent_requests_share_one_call(tmp_path, simulator):
    engine = _engine(simulator.base_url, tmp_path)

    async def main():
        out = await asyncio.gather(*(engine.complete(_req(7)) for _ in range(5)))
        await engine.aclose()
        return out

    out = asyncio.run(main())
    assert len({r.content for r in out}) == 1
    assert simulator.simulator.counters.requests == 1


def test_an_endpoint_that_never_answers_stops_the_build(tmp_path, client):
    engine = _engine("http://127.0.0.1:9/v1", tmp_path, max_attempts=1, timeout_s=2, client=client)

    async def main():
        try:
            return await asyncio.gather(*(engine.complete(_req(i)) for i in range(5)),
                                        return_exceptions=True)
        finally:
            await engine.aclose()

    outcomes = asyncio.run(main())
    assert any(isinstance(o, BuildFailed) and "cannot reach" in str(o) for o in outcomes)
