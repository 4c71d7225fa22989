"""The stage runner: render → call → validate → check → repair → policy."""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.stage import GenerationSettings, Stage, StageRunner, check
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.settings import EngineSettings


class Pair(BaseModel):
    word: str
    count: int = Field(ge=0)


@check("even_count")
def even_count(out: Pair, _):
    if out.count % 2:
        yield f"count {out.count} must be even"


@pytest.fixture
def prompts(tmp_path):
    (tmp_path / "p" / "t").mkdir(parents=True)
    (tmp_path / "p" / "t" / "pair.j2").write_text(
        "{% block system %}Answer in JSON.{% endblock %}"
        "{% block user %}Give a word about {{ topic }}.{% endblock %}")
    for name in ("_repair.j2", "_schema_hint.j2"):
        (tmp_path / "p" / name).write_text(PromptLibrary().directory.joinpath(name).read_text())
    return PromptLibrary(tmp_path / "p")


def _runner(sim, prompts, tmp_path, **settings):
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X"),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    return StageRunner(engine, prompts, GenerationSettings(model="m", **settings))


def _run(runner, stage, variables=None):
    async def main():
        try:
            return await runner.run(stage, variables or {"topic": "tea"}, item_key="i1",
                                    persona_id="p1")
        finally:
            await runner.engine.aclose()
    return asyncio.run(main())


def test_valid_first_answer_is_ok(simulator, prompts, tmp_path):
    simulator.simulator.script("t_pair", [json.dumps({"word": "oolong", "count": 2})])
    result = _run(_runner(simulator, prompts, tmp_path), Stage("t", "pair", Pair, (even_count,)))
    assert result.status == "ok" and result.output == Pair(word="oolong", count=2)
    assert [c["outcome"] for c in result.calls] == ["ok"]


@pytest.mark.parametrize("bad,outcome", [
    ("not json at all", "invalid_json"),
    (json.dumps({"word": "x", "count": -1}), "invalid_schema"),
    (json.dumps({"word": "x", "count": 2, "notes": "added by the model"}), "invalid_schema"),
    (json.dumps({"word": "x", "count": 3}), "check_failed"),
])
def test_bad_answer_is_repaired_with_its_errors(simulator, prompts, tmp_path, bad, outcome):
    sim = simulator.simulator
    sim.record = True
    sim.script("t_pair", [bad, json.dumps({"word": "ok", "count": 4})])
    result = _run(_runner(simulator, prompts, tmp_path), Stage("t", "pair", Pair, (even_count,)))
    assert result.status == "repaired" and result.output.count == 4
    assert [c["outcome"] for c in result.calls] == [outcome, "ok"]
    repair = sim.recorded[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": bad}
    assert "could not be used" in repair[-1]["content"]


def test_an_invented_top_level_key_is_named_in_one_problem():
    """The prompt names every key: one it does not name is a schema problem (in the answer's
    language), in the fast and the tolerant parse alike; a known key is never one."""
    from memsynth.generation.stage import evaluate

    stage = Stage("t", "pair", Pair, (even_count,))
    for content in ('{"word": "x", "count": 2, "reasoning": "…"}', 'Here: {"word": "x", "count": 2, "reasoning": 1}'):
        _out, problems, outcome = evaluate(stage, content, "stop", {"language": "en"})
        assert outcome == "invalid_schema" and problems == [
            "[schema] unknown top-level field(s) reasoning: answer with the fields word, count only"]
    _out, problems, _outcome = evaluate(stage, '{"word": "x", "count": 2, "备注": "…"}', "stop", {"language": "zh"})
    assert "备注" in problems[0] and "word、count" in problems[0]
    assert evaluate(stage, '{"word": "x", "count": 2}', "stop", {"language": "en"})[2] == "ok"


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.integers(), max_size=4))
def test_unknown_keys_are_exactly_the_keys_the_model_lacks(extra):
    from memsynth.generation.answer_keys import unknown_keys

    answer = {"word": "x", "count": 2, **extra}
    assert unknown_keys(Pair, answer) == [k for k in answer if k not in ("word", "count")][:6]
    assert unknown_keys(Pair, json.dumps(answer, ensure_ascii=False)) == unknown_keys(Pair, answer)


def test_drop_policy_after_bounded_repairs(simulator, prompts, tmp_path):
    simulator.simulator.script("t_pair", [json.dumps({"word": "x", "count": 1})] * 5)
    runner = _runner(simulator, prompts, tmp_path, repairs=2)
    result = _run(runner, Stage("t", "pair", Pair, (even_count,), policy="drop"))
    assert result.status == "dropped" and result.output is None
    assert len(result.calls) == 3 and simulator.simulator.counters.requests == 3
    assert any("even_count" in p for p in result.problems)


def test_flag_policy_keeps_the_last_valid_output(simulator, prompts, tmp_path):
    simulator.simulator.script("t_pair", [json.dumps({"word": "x", "count": 1})] * 3)
    result = _run(_runner(simulator, prompts, tmp_path, repairs=2),
                  Stage("t", "pair", Pair, (even_count,), policy="flag"))
    assert result.status == "flagged" and result.output.count == 1


def test_a_cut_off_answer_is_asked_again_with_more_tokens(simulator, prompts, tmp_path):
    """finish_reason=length is a retry of the same request, not a repair and not a parse."""
    from memsynth.simulator.server import Faults

    sim = simulator.simulator
    sim.faults, sim.record = Faults(schedule=("truncated", "truncated")), True
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X", max_tokens_ceiling=300),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    runner = StageRunner(engine, prompts, GenerationSettings(model="m", max_tokens=100))
    result = _run(runner, Stage("t", "pair", Pair))
    assert result.status == "ok" and [c["outcome"] for c in result.calls] == ["ok"]
    assert result.calls[0]["attempts"] == 3
    assert [body["max_tokens"] for body in sim.recorded] == [100, 200, 300]
    assert all(len(body["messages"]) == 2 for body in sim.recorded)  # no repair prompt


def test_an_answer_cut_off_every_time_becomes_a_repair(simulator, prompts, tmp_path):
    from memsynth.simulator.server import Faults

    simulator.simulator.faults = Faults(rate_truncated=1.0)
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X", max_attempts=2),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    result = _run(StageRunner(engine, prompts, GenerationSettings(model="m", repairs=1)),
                  Stage("t", "pair", Pair))
    assert [c["outcome"] for c in result.calls] == ["truncated", "truncated"]
    assert result.status == "dropped" and "[truncated]" in result.problems[0]
    assert simulator.simulator.counters.requests == 4  # max_attempts per call, then the repair


def test_a_cut_off_answer_with_no_more_room_is_retried_once_and_every_attempt_is_counted(simulator, prompts,
                                                                                          tmp_path):
    """Without a ceiling, asking again unchanged is luck: once, then a shorter answer. The
    tokens of the answers thrown away were generated all the same: they are counted."""
    from memsynth.simulator.server import Faults

    sim = simulator.simulator
    sim.faults, sim.record = Faults(schedule=("truncated",) * 3), True
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X", max_attempts=6),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    result = _run(StageRunner(engine, prompts, GenerationSettings(model="m", max_tokens=100, repairs=1)),
                  Stage("t", "pair", Pair))
    # Two cut-off attempts of the first call (not six), then the repair asking for brevity:
    # cut once more, retried once, and answered.
    assert [len(body["messages"]) for body in sim.recorded] == [2, 2, 4, 4]
    assert [c["outcome"] for c in result.calls] == ["truncated", "ok"] and result.status == "repaired"
    assert sim.counters.completion_tokens > 0
    assert engine.counters.completion_tokens == sim.counters.completion_tokens
    assert engine.counters.prompt_tokens == sim.counters.prompt_tokens
    assert sum(c["completion_tokens"] for c in result.calls) == sim.counters.completion_tokens


def test_json_object_mode_puts_the_schema_in_the_prompt(simulator, prompts, tmp_path):
    sim = simulator.simulator
    sim.record = True
    runner = _runner(simulator, prompts, tmp_path, response_mode="json_object")
    result = _run(runner, Stage("t", "pair", Pair))
    body = sim.recorded[0]
    assert body["response_format"] == {"type": "json_object"}
    # In the system message: before the item, in the prefix a stage's prompts share.
    assert body["messages"][0]["role"] == "system"
    assert '<json-schema name="t_pair">' in body["messages"][0]["content"]
    assert "<json-schema" not in body["messages"][-1]["content"]
    assert result.status == "ok" and isinstance(result.output, Pair)


def test_a_refused_request_is_recorded_not_raised(prompts, tmp_path):
    """A 400 is about the request (too long, say), not the endpoint: the item is dropped."""
    from aiohttp import web

    from memsynth.simulator.server import Simulator, SimulatorThread

    class BadRequest(Simulator):
        async def chat_completions(self, request):
            self.counters.requests += 1
            return web.json_response({"error": {"message": "context too long"}}, status=400)

    with SimulatorThread(BadRequest()) as sim:
        engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X", timeout_s=2),
                           ResponseCache(tmp_path / "c"), api_key="k")
        runner = StageRunner(engine, prompts, GenerationSettings(model="m"))
        result = _run(runner, Stage("t", "pair", Pair))
    assert result.status == "dropped"
    assert result.calls[0]["outcome"] == "transport_error" and "HTTP 400" in result.calls[0]["error"]
