"""Retry classification and the engine's behaviour against a faulty endpoint."""

from __future__ import annotations

import asyncio

import httpx2 as httpx
import openai
import pytest

from memsynth.errors import BuildFailed, ConfigError
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import EngineSettings, LLMEngine, TransportFailure
from memsynth.llm.request import LLMRequest
from memsynth.llm.retry import backoff_seconds, is_fatal, is_retryable, retry_after_seconds
from memsynth.simulator.server import Faults
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


def _engine(base_url: str, tmp_path, **settings) -> LLMEngine:
    return LLMEngine(EngineSettings(base_url=base_url, api_key_env="UNUSED", backoff_base_s=0.01,
                                    **settings), ResponseCache(tmp_path), api_key="test-key")


def _req(i: int) -> LLMRequest:
    return LLMRequest(model="m", messages=({"role": "user", "content": f"q{i}"},),
                      json_schema={"type": "object", "properties": {"a": {"type": "string"}}},
                      schema_name="probe")


def test_engine_rides_out_429_and_500(tmp_path):
    sim = start_simulator(faults=Faults(rate_429=0.3, rate_500=0.2, seed=1))
    try:
        engine = _engine(sim.base_url, tmp_path, concurrency=8, max_attempts=12)

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


def test_engine_gives_up_after_bounded_attempts(tmp_path):
    sim = start_simulator(faults=Faults(rate_500=1.0))
    try:
        engine = _engine(sim.base_url, tmp_path, max_attempts=3)

        async def main():
            try:
                await engine.complete(_req(0))
            finally:
                await engine.aclose()

        with pytest.raises(TransportFailure, match="after 3 attempts"):
            asyncio.run(main())
        assert sim.simulator.counters.requests == 3
    finally:
        sim.stop()


def test_unreachable_endpoint_fails_cleanly(tmp_path):
    engine = _engine("http://127.0.0.1:9/v1", tmp_path, max_attempts=2, timeout_s=2)

    async def main():
        try:
            await engine.complete(_req(0))
        finally:
            await engine.aclose()

    with pytest.raises(TransportFailure, match="APIConnectionError|APITimeoutError"):
        asyncio.run(main())


def test_fatal_status_stops_the_build(tmp_path):
    from aiohttp import web

    from memsynth.simulator.server import Simulator, SimulatorThread

    class Refusing(Simulator):
        async def chat_completions(self, request):
            self.counters.requests += 1
            return web.json_response({"error": {"message": "bad key"}}, status=401)

    with SimulatorThread(Refusing()) as sim:
        engine = _engine(sim.base_url, tmp_path)

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


def test_an_endpoint_that_never_answers_stops_the_build(tmp_path):
    engine = _engine("http://127.0.0.1:9/v1", tmp_path, max_attempts=1, timeout_s=2)

    async def main():
        try:
            return await asyncio.gather(*(engine.complete(_req(i)) for i in range(5)),
                                        return_exceptions=True)
        finally:
            await engine.aclose()

    outcomes = asyncio.run(main())
    assert any(isinstance(o, BuildFailed) and "cannot reach" in str(o) for o in outcomes)
