"""A one-slot local server at default settings (issue 50, part 3): 32 requests in flight, one
answered at a time, the rest queued without a byte for longer than the idle timeout. A
request waiting its turn is not a dead server (memsynth.llm.silence): `build`, `eval` and
`annotate` complete with nothing abandoned, while a server that went silent, or an answer
that stopped mid-way, is still given up on."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.request import LLMRequest
from memsynth.llm.settings import EngineSettings
from memsynth.llm.silence import Pulse, Silence
from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here, write_config

ENV = {"OPENAI_API_KEY": "x"}
# Small, to keep the tests short; each queue below is longer, and every gap between the
# events of an answer far shorter (a loaded machine must not pass for a silent server).
IDLE_S = 2.0


def one_slot(rate: float) -> Simulator:
    """llama.cpp's profile with one slot, writing `rate` tokens a second."""
    return Simulator(profile="llamacpp", token_rate=rate, capacity=1)


def llm_file(path: Path, **llm) -> str:
    """A served simulator's llm block with the small idle timeout and nothing else set: the
    default concurrency (32), and the response mode probed."""
    path.write_text(yaml.safe_dump({"llm": {"model": "local", "stage_variables": True, "idle_timeout_s": IDLE_S,
                                            **llm}}), encoding="utf-8")
    return str(path)


def assert_a_long_queue(sim: SimulatorThread, rate: float) -> None:
    """From counts and the configured token rate, not a clock: at its peak the queue held
    enough answers ahead of its last request to keep it waiting past the idle timeout."""
    seen = sim.simulator.counters
    answer_s = seen.completion_tokens / seen.by_outcome["ok"] / rate
    assert (seen.peak_in_flight - 1) * answer_s > 1.5 * IDLE_S, (seen.peak_in_flight, answer_s)


def assert_nothing_abandoned(llm: dict, sim: SimulatorThread) -> None:
    """Nothing given up on or asked twice: the server saw the probe (json_schema refused, the
    schema in json_object taken) and each request the command counted, once."""
    assert llm["abandoned"] == 0 and llm["retries"] == 0, llm
    assert sim.simulator.counters.by_outcome == {"profile_refused": 1, "ok": llm["requests"] + 1}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[dict, Path, SimulatorThread]:
    """A persona and four dialogues built on a one-slot server at default settings (the eval
    below scores the dialogues)."""
    tmp = tmp_path_factory.mktemp("long-queue")
    block = yaml.safe_load(Path(llm_file(tmp / "llm.yaml")).read_text(encoding="utf-8"))["llm"]
    with SimulatorThread(one_slot(3000)) as sim:
        config = write_config(tmp / "c.yaml", dataset="lq", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 4}, llm={**block, "base_url": sim.base_url})
        summary = cli_json_here("build", str(config), "--warehouse", str(tmp / "wh"), "--no-progress",
                                "--format", "json", env=ENV)
    return summary, tmp, sim


# The two readers of the module's build on one worker: under --dist loadgroup, ungrouped tests
# go to either, and a module fixture is built again on each worker that asks for it.
@pytest.mark.xdist_group("long_queue")
def test_build(built):
    summary, _, sim = built
    assert summary["version"] == 1 and summary["failed_items"] == 0 and summary["row_counts"]["benchmark"] == 4
    assert_nothing_abandoned(summary["llm"], sim)
    assert_a_long_queue(sim, 3000)


@pytest.mark.xdist_group("long_queue")
def test_eval(built):
    """The model under test and its judge on the one server (the judge takes the model's
    endpoint by default): answers and judgments queue together."""
    _, tmp, _ = built
    with SimulatorThread(one_slot(30)) as sim:
        run = cli_json_here("eval", "response", "--dataset", "lq", "--warehouse", str(tmp / "wh"), "--format", "json",
                            "--systems", "base", "--llm-config", llm_file(tmp / "eval.yaml"), "--base-url", sim.base_url,
                            env=ENV)
    assert run["items"] == 4
    assert_nothing_abandoned(run["llm"], sim)
    assert_a_long_queue(sim, 30)
    grades = {s["metric"]: s for s in run["scores"] if s["system"] == "base" and s["scope"] == "all"}
    assert grades["empathy"]["n"] == 4


def test_annotate(tmp_path):
    """The issue's command: emotion scores of an imported CharacterEval sample (17 items)."""
    wh = str(tmp_path / "wh")
    cli_json_here("import", "characters", str(ROOT / "tests" / "data" / "characters_sample.zh.json"), "--dataset",
                  "roles", "--warehouse", wh, "--format", "json")
    # 400 tokens a second: at its peak the queue still held about 3.5 times the idle timeout
    # of answers ahead of the last request (measured: 17 in flight, 0.34 s an answer).
    with SimulatorThread(one_slot(400)) as sim:
        summary = cli_json_here("annotate", "emotions", "--dataset", "roles", "--warehouse", wh, "--no-progress",
                                "--format", "json", "--llm-config", llm_file(tmp_path / "llm.yaml"),
                                "--base-url", sim.base_url, env=ENV)
    assert summary["annotated"] == summary["items"] == 17 and summary["failed"] == 0
    assert_nothing_abandoned(summary["llm"], sim)
    assert_a_long_queue(sim, 400)


# --- the engine, both clients -------------------------------------------------------------


def _ask(sim: SimulatorThread, tmp_path: Path, client: str, count: int, idle_s: float, **settings) -> LLMEngine:
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X", client=client, idle_timeout_s=idle_s,
                                      backoff_base_s=0.01, **settings), ResponseCache(tmp_path), api_key="k")
    requests = [LLMRequest(model="m", messages=({"role": "user", "content": f"回答 {i}"},)) for i in range(count)]

    async def main() -> list:
        try:
            return await asyncio.gather(*(engine.complete(r) for r in requests), return_exceptions=True)
        finally:
            await engine.aclose()

    engine.outcomes = asyncio.run(main())  # type: ignore[attr-defined]
    return engine


@pytest.mark.parametrize("client", ["openai", "direct"])
def test_the_engine_waits_out_a_queue_longer_than_the_idle_timeout(tmp_path, client):
    """12 requests at once (the default allows 32) on one slot at 200 tokens a second: the
    last waits about three times the idle timeout, and is answered the first time."""
    with SimulatorThread(one_slot(200)) as sim:
        engine = _ask(sim, tmp_path, client, 12, 1.0)
    assert engine.settings.concurrency == 32 and sim.simulator.counters.peak_in_flight == 12
    assert engine.counters.abandoned == engine.counters.retries == 0
    assert sim.simulator.counters.by_outcome == {"ok": 12}
    assert all(not isinstance(o, BaseException) and o.content for o in engine.outcomes)  # type: ignore[attr-defined]


class _Silent(Simulator):
    """Takes every request and answers nothing (for longer than the client waits)."""

    async def chat_completions(self, request):
        self.counters.requests += 1
        await asyncio.sleep(4)
        return web.Response(status=500)


@pytest.mark.parametrize("client", ["openai", "direct"])
def test_a_server_that_answers_nothing_is_still_given_up_on(client):
    """Four streamed requests waiting together, none ever answered: each is given up on as a
    timeout (retried by the engine, its connection closed), none held forever."""
    import openai
    import orjson

    from memsynth.llm.http import DirectPoster, OpenAIPoster, openai_client

    # The idle timeout leaves a busy machine's server thread a second to take each request (at
    # 0.3 s a loaded run once gave up on all four before the server had read one).
    async def main(base_url: str) -> list:
        api = openai_client("k", base_url, timeout_s=10, connections=4)
        poster = (DirectPoster(api, "k", timeout_s=10, connections=4, idle_timeout_s=1.0) if client == "direct"
                  else OpenAIPoster(api, 1.0))
        body = orjson.dumps({"model": "m", "messages": [{"role": "user", "content": "好"}], "stream": True})
        try:
            return await asyncio.gather(*(poster.post("/chat/completions", body, stream=True) for _ in range(4)),
                                        return_exceptions=True)
        finally:
            await poster.aclose()
            await api.close()

    with SimulatorThread(_Silent()) as sim:
        outcomes = asyncio.run(main(sim.base_url))
        assert sim.simulator.counters.requests == 4
    assert all(isinstance(o, openai.APITimeoutError) for o in outcomes), outcomes


# --- the rule itself ----------------------------------------------------------------------


def test_queued_waits_while_the_endpoint_writes_and_a_started_answer_may_not_stall():
    """One answer written event by event for twice the idle timeout; beside it a request that
    hears nothing (queued) and one whose answer started and stopped (stalled). The stalled
    one is given up on while the other answer is still being written; the queued one only
    once the endpoint has been silent for the idle timeout."""
    idle = 1.0
    log: list[str] = []

    async def scenario() -> None:
        pulse = Pulse()

        async def writing() -> None:
            async with Silence(pulse, idle) as watch:
                for _ in range(40):
                    watch.heard()
                    await asyncio.sleep(idle / 20)
            log.append("written")

        async def waiting(name: str, starts: bool) -> None:
            try:
                async with Silence(pulse, idle) as watch:
                    if starts:
                        watch.heard()
                    await asyncio.sleep(3600)
            except TimeoutError:
                log.append(name)

        await asyncio.gather(writing(), waiting("queued gave up", False), waiting("stalled gave up", True))

    asyncio.run(scenario())
    assert log == ["stalled gave up", "written", "queued gave up"], log


def test_a_cancellation_from_outside_stays_a_cancellation():
    """Ctrl-C or a cancelled build is not a timeout to retry."""
    async def scenario() -> None:
        async def waits() -> None:
            async with Silence(Pulse(), 30):
                await asyncio.sleep(3600)

        task = asyncio.create_task(waits())
        await asyncio.sleep(0.05)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(scenario())
