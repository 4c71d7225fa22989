"""`llm.client: direct` against the openai client: the same request on the wire, the same
exceptions for every failure, the same rows from a build."""

from __future__ import annotations

import asyncio

import openai
import pytest
from aiohttp import web

from memsynth.core.config import BuildConfig
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.http import DirectPoster, OpenAIPoster, openai_client
from memsynth.llm.request import EmbeddingRequest, LLMRequest
from memsynth.llm.retry import (
    is_connect_failure,
    is_fatal,
    is_rate_limit,
    is_retryable,
    is_unanswered,
    retry_after_seconds,
)
from memsynth.llm.settings import EngineSettings
from memsynth.simulator.server import Faults, Simulator, SimulatorThread
from tests.conftest import start_simulator

KEY = "sk-test-direct"
BODY = {"model": "m", "messages": [{"role": "user", "content": "名字 and a name"}],
        "response_format": {"type": "json_object"}}


def _posters(base_url: str, timeout_s: float = 10) -> dict[str, DirectPoster | OpenAIPoster]:
    client = openai_client(KEY, base_url, timeout_s=timeout_s, connections=4)
    return {"openai": OpenAIPoster(client),
            "direct": DirectPoster(client, KEY, timeout_s=timeout_s, connections=4)}


def _outcomes(base_url: str, path: str = "/chat/completions", timeout_s: float = 10) -> dict:
    """What each poster returns or raises for one POST of BODY."""
    import orjson

    async def main():
        posters = _posters(base_url, timeout_s)
        out = {}
        for name, poster in posters.items():
            try:
                out[name] = await poster.post(path, orjson.dumps(BODY))
            except Exception as exc:  # noqa: BLE001 - the exception is the outcome compared
                out[name] = exc
        await posters["direct"].aclose()
        await posters["openai"].client.close()
        return out

    return asyncio.run(main())


def test_both_clients_send_the_same_request():
    sim = start_simulator()
    sim.simulator.record = True
    try:
        out = _outcomes(sim.base_url)
    finally:
        sim.stop()
    assert out["openai"] == out["direct"] and out["direct"]["object"] == "chat.completion"
    openai_body, direct_body = sim.simulator.recorded
    assert openai_body == direct_body == BODY
    sent = [{k.lower(): v for k, v in h.items()} for h in sim.simulator.recorded_headers]
    # What the openai client adds per attempt, and what each HTTP library sets on its own.
    per_request = {"x-stainless-retry-count", "x-stainless-read-timeout", "host", "content-length",
                   "accept-encoding", "connection"}
    same = {k: v for k, v in sent[0].items() if k not in per_request}
    assert {k: v for k, v in sent[1].items() if k not in per_request} == same
    assert same["authorization"] == f"Bearer {KEY}" and same["content-type"] == "application/json"
    assert same["user-agent"].startswith("AsyncOpenAI/Python")


class _Status(Simulator):
    """Answers every chat request with one status, body and headers."""

    def __init__(self, status: int, body: object, headers: dict[str, str] | None = None):
        super().__init__()
        self.status, self.body, self.headers = status, body, headers or {}

    async def chat_completions(self, request):
        await request.read()
        if isinstance(self.body, str):
            return web.Response(text=self.body, status=self.status, headers=self.headers)
        return web.json_response(self.body, status=self.status, headers=self.headers)


@pytest.mark.parametrize("status,body,headers", [
    (400, {"error": {"message": "bad schema", "type": "invalid_request_error"}}, None),
    (401, {"error": {"message": "bad key"}}, None),
    (404, {"error": {"message": "no such model"}}, None),
    (412, {"error": {"message": "stage variables missing"}}, None),
    (422, {"detail": "unprocessable"}, None),
    (429, {"error": {"message": "slow down"}}, {"retry-after-ms": "1500"}),
    (429, {"error": {"message": "slow down"}}, {"retry-after": "3"}),
    (500, {"error": {"message": "internal"}}, None),
    (503, "<html>gateway</html>", None),
])
def test_both_clients_raise_the_same_error_for_every_status(status, body, headers):
    with SimulatorThread(_Status(status, body, headers)) as sim:
        out = _outcomes(sim.base_url)
    a, b = out["openai"], out["direct"]
    assert type(a) is type(b) and isinstance(b, openai.APIStatusError), (a, b)
    assert (b.status_code, b.message, b.body) == (a.status_code, a.message, a.body)
    assert str(b.request.url) == str(a.request.url)
    for rule in (is_retryable, is_fatal, is_rate_limit, is_unanswered):
        assert rule(b) == rule(a), rule.__name__
    assert retry_after_seconds(b) == retry_after_seconds(a)
    if status == 429:
        assert retry_after_seconds(b) in (1.5, 3.0)


def test_a_refused_connection_is_a_connect_failure_for_both():
    out = _outcomes("http://127.0.0.1:9/v1")
    for name, exc in out.items():
        assert isinstance(exc, openai.APIConnectionError), (name, exc)
        assert is_connect_failure(exc) and is_unanswered(exc) and is_retryable(exc), name


def test_a_dropped_connection_and_a_read_timeout_are_retried_for_both():
    sim = start_simulator(faults=Faults(schedule=("dropped", "dropped")))
    try:
        dropped = _outcomes(sim.base_url)
    finally:
        sim.stop()
    slow = start_simulator(latency_ms=1500)
    try:
        timed_out = _outcomes(slow.base_url, timeout_s=0.3)
    finally:
        slow.stop()
    for name in ("openai", "direct"):
        assert isinstance(dropped[name], openai.APIConnectionError), dropped[name]
        assert is_unanswered(dropped[name]) and is_retryable(dropped[name])
        assert isinstance(timed_out[name], openai.APITimeoutError), timed_out[name]
        assert is_unanswered(timed_out[name]) and is_retryable(timed_out[name])
    # The openai client's aiohttp bridge calls a dropped connection a connect timeout; it
    # had connected, and direct says so.
    assert not is_connect_failure(dropped["direct"])


@pytest.mark.parametrize("client", ["openai", "direct"])
def test_the_engine_retries_a_malformed_answer_and_embeds(tmp_path, client):
    sim = start_simulator(faults=Faults(schedule=("malformed",)))
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X", client=client,
                                      max_attempts=3, backoff_base_s=0.01),
                       ResponseCache(tmp_path), api_key=KEY)
    request = LLMRequest(model="m", messages=({"role": "user", "content": "q"},), schema_name="probe")

    async def main():
        try:
            return await engine.complete(request), await engine.embed(EmbeddingRequest("e", "ein Satz"))
        finally:
            await engine.aclose()

    try:
        answer, vector = asyncio.run(main())
    finally:
        sim.stop()
    assert sim.simulator.counters.by_outcome["malformed"] == 1 and engine.counters.retries == 1
    assert answer.content and len(vector) > 0 and all(isinstance(x, float) for x in vector)


def test_the_client_is_not_part_of_the_config_hash():
    base = {"dataset": "t", "recipe": "enpmr", "seed": 1}
    plain = BuildConfig.model_validate(base)
    direct = BuildConfig.model_validate({**base, "llm": {"client": "direct"}})
    assert direct.llm.client == "direct" and plain.llm.client == "openai"
    assert direct.hash() == plain.hash()
    with pytest.raises(ValueError):
        BuildConfig.model_validate({**base, "llm": {"client": "curl"}})


def test_direct_reads_the_proxy_from_the_environment_once(monkeypatch):
    from memsynth.llm.http import env_proxy

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert env_proxy("https://api.openai.com/v1") is None
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.internal:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,.lan")
    assert env_proxy("https://api.openai.com/v1") == "http://proxy.internal:3128"
    assert env_proxy("http://api.openai.com/v1") is None  # no HTTP_PROXY
    assert env_proxy("https://gpu.lan/v1") is None and env_proxy("https://localhost:8000/v1") is None
