"""The simulator: schema-valid, check-passing, deterministic answers over real HTTP."""

from __future__ import annotations

import asyncio
import json
import urllib.request

import openai
import pytest

from flows.enpmr import EnpmrRecipe
from memsynth.core.config import BuildConfig
from memsynth.core.records import PersonaRow
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.recipe import PersonaContext, ShardOutput, persona_rng
from memsynth.generation.stage import GenerationSettings, StageRunner
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.settings import EngineSettings
from memsynth.simulator.server import Faults, Simulator, SimulatorThread
from tests.conftest import start_simulator


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def test_models_endpoint_and_counters(simulator):
    assert _get(simulator.base_url + "/models")["data"] == []  # any name is answered: none listed
    with SimulatorThread(Simulator(models=("a", "b"), profile="vllm")) as named:
        listed = _get(named.base_url + "/models")["data"]
        assert [m["id"] for m in listed] == ["a", "b"] and listed[0]["max_model_len"] == 8192
    client = openai.OpenAI(base_url=simulator.base_url, api_key="k")
    out = client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello"}],
        response_format={"type": "json_schema", "json_schema": {"name": "x", "schema": {
            "type": "object", "properties": {"n": {"type": "integer", "minimum": 3, "maximum": 5}},
            "required": ["n"]}}})
    assert 3 <= json.loads(out.choices[0].message.content)["n"] <= 5
    stats = _get(simulator.base_url.removesuffix("/v1") + "/stats")
    assert stats["requests"] == 1 and stats["peak_in_flight"] == 1


def test_the_stats_say_when_a_client_began_its_work_and_how_long_it_kept_the_server_busy():
    """A bench reads a client's start-up (launch to its first request past the endpoint
    probe), its tail and its busy time from these, to the millisecond."""
    import time

    with SimulatorThread(Simulator(latency_ms=100)) as sim:
        client = openai.OpenAI(base_url=sim.base_url, api_key="k")
        stats_url = sim.base_url.removesuffix("/v1") + "/stats"

        def ask(name: str) -> None:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], response_format={
                "type": "json_schema", "json_schema": {"name": name, "schema": {"type": "object"}}})

        before = time.time()
        ask("probe")
        assert _get(stats_url)["first_work_at"] is None  # the endpoint probe is not the client's work
        time.sleep(0.3)  # idle: not busy
        ask("profile")
        stats = _get(stats_url)
        assert before <= stats["first_request_at"] < stats["first_work_at"] <= stats["last_answer_at"] <= time.time()
        assert stats["first_work_at"] - stats["first_request_at"] >= 0.4
        # Two answers of 100 ms or more each, and not the 0.3 s idle gap between them.
        span = stats["last_answer_at"] - stats["first_request_at"]
        assert 0.2 <= stats["busy_seconds"] <= span - 0.3, stats


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_enpmr_stage_answer_validates_and_passes_checks(tmp_path, language, simulator):
    """Drive the recipe through the simulator: no repair may be needed."""
    config = BuildConfig(dataset="t", language=language)
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X"),
                       ResponseCache(tmp_path), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", repairs=0,
                                                                     stage_variables=True))
    recipe = EnpmrRecipe({})
    output = ShardOutput()

    async def main():
        for i in range(4):
            persona = PersonaRow(persona_id=f"p{i}", description=f"A nurse number {i}", source="t")
            ctx = PersonaContext(persona, config, runner, output, persona_rng(0, f"p{i}"))
            await recipe.generate(ctx)
        await engine.aclose()

    asyncio.run(main())
    for stage in recipe.stages:
        if stage is recipe.persona_stage:  # runs only when personas are synthesized
            continue
        stats = output.stage_stats[stage.qualified_name]
        assert stats["items"] >= 4 and stats["ok"] == stats["items"], (stage.name, dict(stats))
    assert output.rows["benchmark"], "every judge passes the simulator's dialogues"
    if language == "zh":
        def chinese(text):
            return any("\u4e00" <= ch <= "\u9fff" for ch in text)
        assert chinese(output.rows["life_themes"][0].theme)
        assert all(chinese(m.text) for m in output.rows["memories"])
        assert chinese(output.rows["memory_sessions"][0].content)
        assert chinese(output.rows["support_dialogues"][0].turns[0].content)


def test_answers_are_deterministic_and_vary_between_prompts(simulator):
    client = openai.OpenAI(base_url=simulator.base_url, api_key="k")
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {
        "type": "object", "properties": {"description": {"type": "string"}}}}}

    def ask(text):
        return client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": text}],
            response_format=fmt).choices[0].message.content

    assert ask("a") == ask("a")
    assert len({ask(f"prompt {i}") for i in range(8)}) >= 6


def test_fault_rates_are_applied():
    sim = start_simulator(faults=Faults(rate_429=0.4, rate_dropped=0.2, rate_malformed=0.3,
                                        rate_truncated=0.3, seed=4))
    try:
        client = openai.OpenAI(base_url=sim.base_url, api_key="k", max_retries=0)
        outcomes = []
        for i in range(60):
            try:
                choice = client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": str(i)}]).choices[0]
                outcomes.append("truncated" if choice.finish_reason == "length" else "ok")
            except openai.RateLimitError as exc:
                assert exc.response.headers.get("retry-after-ms") == "50"
                outcomes.append("429")
            except openai.APIConnectionError:
                outcomes.append("dropped")
            except ValueError:  # the body is cut: not JSON
                outcomes.append("malformed")
        assert {"429", "dropped", "malformed", "truncated", "ok"} <= set(outcomes)
        assert {k: outcomes.count(k) for k in set(outcomes)} == sim.simulator.counters.by_outcome
    finally:
        sim.stop()


def test_proxy_mode_forwards_to_upstream(simulator):
    proxy = start_simulator(upstream=simulator.base_url)
    try:
        client = openai.OpenAI(base_url=proxy.base_url, api_key="k")
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        assert simulator.simulator.counters.requests == 1
        assert proxy.simulator.counters.requests == 1
    finally:
        proxy.stop()
