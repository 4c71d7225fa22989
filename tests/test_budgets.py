"""Per-stage token budgets and runaway answers cut short (issue 53)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from memsynth.generation.emotions import SCORE
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.registry import recipe_class
from memsynth.generation.stage import GenerationSettings, Stage, StageRunner, evaluate
from memsynth.llm.budget import estimate_tokens, schema_budget
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.runaway import SHINGLE, RunawayWatch, looped
from memsynth.llm.settings import EngineSettings
from memsynth.simulator.server import Faults, Simulator, SimulatorThread
from tests.conftest import cli_json_here, memsynth_cli, write_config

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = Path(os.environ.get("MEMSYNTH_MODEL_ANSWERS", ROOT.parent / "shared" / "model-answers"))
needs_corpus = pytest.mark.skipif(not ANSWERS.is_dir(), reason=f"model answers not found at {ANSWERS}")


class Score(BaseModel):
    label: str = Field(max_length=20)
    score: int = Field(ge=1, le=10)


class Scores(BaseModel):
    scores: list[Score] = Field(max_length=8)


MEMORY = {"language": "en", "kind": "memory", "speaker": "小林", "text": "雨夜里的告别, then a long walk home"}


class Free(BaseModel):
    text: str


def _stages() -> dict[str, Stage]:
    found = {SCORE.qualified_name: SCORE}
    for name in ("enpmr", "pal", "stratmem"):
        found.update({s.qualified_name: s for s in recipe_class(name).all_stages()})
    return found


def _runner(base_url: str, tmp_path: Path, **settings) -> StageRunner:
    engine = LLMEngine(EngineSettings(base_url=base_url, api_key_env="X"), ResponseCache(tmp_path / "cache"),
                       api_key="k")
    return StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", **settings))


# --- budgets --------------------------------------------------------------------------

def test_a_bounded_schema_gets_a_budget_from_its_bounds_and_an_unbounded_one_none():
    # 8 × (label ≤ 20 characters: 22 with quotes; a score: 4; keys and punctuation): about
    # 316 tokens, twice over for room, rounded up to 256s.
    assert schema_budget(Scores.model_json_schema()) == 768
    assert schema_budget(Free.model_json_schema()) is None
    wider = Scores.model_json_schema()
    wider["$defs"]["Score"]["properties"]["label"]["maxLength"] = 200
    assert schema_budget(wider) > 2 * 8 * 200  # grows with the bounds


def test_each_stage_is_sent_its_budget_under_the_key_it_had_before_budgets(tmp_path):
    """A declared budget goes out as max_tokens; a schema's bounds give one where none is
    declared; a stage with neither is sent the limit. The key hashes the limit, as before
    budgets, so a cache made before them (or with budgets off) still answers every call."""
    runner = _runner("http://127.0.0.1:9/v1", tmp_path)
    off = _runner("http://127.0.0.1:9/v1", tmp_path, budgets=False)
    messages = [{"role": "user", "content": "hi"}]
    bounded, free = Stage("t", "scores", Scores), Stage("t", "free", Free)
    for stage, first in ((SCORE, 768), (bounded, 768), (free, 4096)):
        request = runner._request(stage, messages, 0)
        assert runner.engine._chat_body(request, None)["max_tokens"] == first
        before = off._request(stage, messages, 0)
        assert off.engine._chat_body(before, None)["max_tokens"] == 4096
        assert request.cache_key() == before.cache_key()
        assert json.loads(request.canonical())["params"]["max_tokens"] == 4096
    capped = _runner("http://127.0.0.1:9/v1", tmp_path, max_tokens=300)
    assert capped.engine._chat_body(capped._request(SCORE, messages, 0), None)["max_tokens"] == 300


def test_a_cut_off_answer_grows_from_the_budget_to_the_limit_when_no_ceiling_is_set(tmp_path):
    """Cut off at its budget, an answer is asked again with twice as many tokens, up to the
    build's limit (no ceiling set): a budget never makes a long answer impossible."""
    sim = Simulator(faults=Faults(schedule=("truncated", "truncated")))
    sim.record = True
    with SimulatorThread(sim) as thread:
        runner = _runner(thread.base_url, tmp_path, max_tokens=1024, stage_variables=True)
        result = asyncio.run(_run(runner, SCORE, MEMORY))
    assert result.status == "ok" and result.budget == 768
    assert [b["max_tokens"] for b in sim.recorded] == [768, 1024, 1024]


@needs_corpus
def test_every_answer_a_strong_model_wrote_fits_half_its_stage_budget():
    """Room to spare: each acceptable answer in ../shared/model-answers, indented as a model
    in JSON mode may write it, takes at most half of its stage's budget."""
    stages = _stages()
    runner = _runner("http://127.0.0.1:9/v1", Path("/nonexistent"))
    seen = 0
    for path in sorted(ANSWERS.glob("*/*/*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        stage = stages.get(f"{data['recipe']}.{data['stage']}")
        budget = runner.budget(stage) if stage is not None else None
        if budget is None or budget >= 4096:
            continue
        for answer in data["answers"]:
            if answer["label"] == "acceptable":
                tokens = estimate_tokens(json.dumps(answer["answer"], ensure_ascii=False, indent=2))
                assert 2 * tokens <= budget, (answer["id"], tokens, budget)
                seen += 1
    assert seen > 80


async def _run(runner: StageRunner, stage: Stage, variables: dict | None = None):
    try:
        return await runner.run(stage, variables or {"language": "en"}, item_key="i1", persona_id="p1")
    finally:
        await runner.engine.aclose()


# --- runaway answers ---------------------------------------------------------------------

def _feed(watch: RunawayWatch, text: str, sizes: list[int]) -> str | None:
    """Feed `text` in pieces of the given sizes (cycled); the kind of runaway found, if any."""
    at, i = 0, 0
    while at < len(text):
        piece = text[at:at + sizes[i % len(sizes)]]
        at, i = at + len(piece), i + 1
        if (kind := watch.feed(piece)) is not None:
            return kind
    return None


@settings(max_examples=60, deadline=None)
@given(blank=st.text(alphabet=" \t\r\n\u3000\u00a0\u2003", min_size=1, max_size=8),
       sizes=st.lists(st.integers(1, 70), min_size=1, max_size=5), limit=st.integers(8, 300))
def test_whitespace_of_any_kind_is_stopped_within_its_limit(blank, sizes, limit):
    watch = RunawayWatch(limit)
    assert watch.feed('{"scores": [') is None
    # Whitespace is also text the answer already wrote: whichever is seen first stops it.
    assert _feed(watch, blank * (limit * 80), sizes) in ("whitespace", "loop")
    assert watch.tokens <= 4 + limit + 18  # the object's start, the limit, one piece past it


@settings(max_examples=60, deadline=None)
@given(fragment=st.text(st.characters(exclude_categories=()), min_size=1, max_size=24).filter(lambda t: t.strip()),
       sizes=st.lists(st.integers(1, 70), min_size=1, max_size=5), limit=st.integers(64, 300))
def test_one_fragment_repeated_is_stopped_near_its_limit(fragment, sizes, limit):
    """Any fragment (CJK, emoji, RTL, lone surrogates) repeated: stopped by the limit and an
    eighth of it more, plus a piece, plus the window's first piece."""
    watch = RunawayWatch(limit)
    assert _feed(watch, fragment * (limit * 90), sizes) == "repetition"
    assert watch.tokens <= limit + limit // 8 + 2 * 18 + 1


@settings(max_examples=60, deadline=None)
@given(passage=st.text(st.characters(exclude_categories=()), min_size=65, max_size=600).filter(lambda t: t.strip()),
       sizes=st.lists(st.integers(1, 70), min_size=1, max_size=5), limit=st.integers(256, 400))
def test_a_passage_said_again_and_again_is_stopped_after_its_first_copy_and_the_limit(passage, sizes, limit):
    """A loop longer than any fragment the period check looks for (SmolLM2 said a 370-character
    paragraph over and over inside a JSON string): any passage, CJK, emoji, RTL or lone
    surrogates, is stopped once the limit's window holds only text already written."""
    watch = RunawayWatch(limit)
    assert watch.feed('{"scores": [{"analysis": "') is None
    assert _feed(watch, passage * 200, sizes) in ("loop", "repetition")
    # One copy (at most a token a character), the window, a tenth of it not yet recycled,
    # an eighth between looks, and a piece or two past it.
    assert watch.tokens <= 8 + len(passage) + limit + limit // 10 + limit // 8 + 2 * 18 + SHINGLE


def test_a_whole_answer_cut_off_in_a_loop_is_looped_and_a_long_real_one_is_not():
    paragraph = ("The JSON Schema is not supported on any platform, including Python 3.7+. You cannot use it "
                 "as a default JSON parsing module for your project. ") * 3
    assert looped('{"scores":[{"dim":"joy","analysis":"' + paragraph * 40, 256)
    assert looped("{" + "\u3000" * 2000, 256) and looped("{" + "好的，" * 2000, 256)
    assert not looped('{"scores":[{"dim":"joy","analysis":"' + paragraph * 40, 0)  # 0: never
    novel = json.dumps({"turns": [f"第{i}天，{chr(0x4e00 + 7 * i)}{chr(0x4e00 + 13 * i)}先生说了第{i * 7919}件事" for i in range(600)]},
                       ensure_ascii=False)
    assert not looped(novel, 256)


@needs_corpus
def test_no_answer_a_strong_model_wrote_is_taken_for_a_runaway():
    """Every answer in ../shared/model-answers, acceptable or not, streamed a character at a
    time (a server's token a piece) and indented, runs to its end."""
    seen = 0
    for path in sorted(ANSWERS.glob("*/*/*.json")):
        for answer in json.loads(path.read_text(encoding="utf-8"))["answers"]:
            text = json.dumps(answer["answer"], ensure_ascii=False, indent=2)
            watch = RunawayWatch(64)  # a quarter of the default: stricter than a build is
            assert _feed(watch, text, [1]) is None, answer["id"]
            # Whole, as a server that does not stream sends it, at the default limit and at a
            # character a token (a window a quarter of what a build's holds).
            assert not looped(text, 256), answer["id"]
            assert not looped(json.dumps(answer["answer"], ensure_ascii=False, indent=4), 256), answer["id"]
            watch = RunawayWatch(256)
            assert _feed(watch, text, [1]) is None, answer["id"]
            seen += 1
    assert seen > 150


def test_a_runaway_is_a_failed_attempt_repaired_in_the_build_language():
    for language, said in (("en", "ran on"), ("zh", "重复空白")):
        output, problems, outcome = evaluate(SCORE, "{" + " " * 999, "runaway", {"language": language})
        assert output is None and outcome == "runaway" and said in problems[0], problems


@pytest.mark.parametrize("client", ["openai", "direct"])
def test_a_runaway_stream_is_closed_after_the_limit_and_repaired_then_dropped(tmp_path, client):
    """Every answer runs on in whitespace (at a local server's pace): each attempt is stopped
    after llm.runaway_tokens, re-asked with the repair, then dropped by the stage's policy.
    The server streams a few hundred tokens per attempt, not the budget of each."""
    sim = Simulator(profile="llamacpp", token_rate=20000, runaway_rate=1.0)
    sim.record = True
    with SimulatorThread(sim) as thread:
        runner = _runner(thread.base_url, tmp_path, repairs=2, stage_variables=True,
                         response_mode="json_object_schema")
        runner.engine.settings.client = client
        result = asyncio.run(_run(runner, SCORE, {**MEMORY, "language": "zh"}))
        asyncio.run(asyncio.sleep(0.2))  # the server notices each disconnect on its next write
    assert result.status == "dropped" and [c["outcome"] for c in result.calls] == ["runaway"] * 3
    assert "[runaway]" in result.problems[0] and "重复空白" in result.problems[0]
    assert runner.engine.counters.runaways == 3 and sim.counters.by_outcome["runaway"] == 3
    assert [b["max_tokens"] for b in sim.recorded] == [768] * 3
    assert len(sim.recorded[2]["messages"]) == 6  # both repairs were asked
    # Each attempt was read for about the limit (256) and stopped; read to its end it would
    # have streamed the budget, 768 tokens, each.
    assert all(256 <= c["completion_tokens"] <= 256 + 32 for c in result.calls), result.calls
    assert sim.counters.completion_tokens <= 3 * (256 + 64) < 3 * 768


@pytest.mark.parametrize("stream", [True, False])
def test_an_answer_that_loops_on_a_passage_is_a_runaway_not_an_answer_to_grow(tmp_path, stream):
    """SmolLM2's loop, a paragraph of its own said again and again until max_tokens. Streamed,
    the watch stops it after the passage and the limit; sent whole, it is still a runaway, so
    it is repaired at its budget instead of asked again with max_tokens doubled to 4096 (the
    twenty minutes a looping item cost on llama.cpp)."""
    sim = Simulator(profile="llamacpp", token_rate=20000, runaway_rate=1.0, runaway_kind="loop")
    sim.record = True
    with SimulatorThread(sim) as thread:
        runner = _runner(thread.base_url, tmp_path, repairs=1, stage_variables=True,
                         response_mode="json_object_schema")
        runner.engine.settings.stream = stream
        result = asyncio.run(_run(runner, SCORE, {**MEMORY, "language": "zh"}))
        asyncio.run(asyncio.sleep(0.2))
    assert result.status == "dropped" and [c["outcome"] for c in result.calls] == ["runaway"] * 2, result.calls
    assert "重复" in result.problems[0]
    assert [b["max_tokens"] for b in sim.recorded] == [768] * 2  # never grown
    assert runner.engine.counters.runaways == 2
    if stream:
        # The passage (370 characters, at most a token each) and the limit's window.
        assert all(c["completion_tokens"] <= 370 + 256 + 64 < 768 for c in result.calls), result.calls
    else:
        assert all(c["completion_tokens"] == 768 for c in result.calls), result.calls


def test_a_batch_answer_cut_off_in_a_loop_is_a_runaway_not_sent_again_with_more_room(tmp_path):
    """In batch mode a cut-off line goes into the next batch with max_tokens doubled; one cut
    off in a loop is repaired instead (the repair is a new request, at the stage's budget)."""
    from memsynth.llm.batch import BatchSettings

    sim = Simulator(profile="openai", runaway_rate=1.0, runaway_kind="loop")
    with SimulatorThread(sim) as thread:
        engine = LLMEngine(EngineSettings(base_url=thread.base_url, api_key_env="X", mode="batch",
                                          batch=BatchSettings(gather_s=0.05, max_wait_s=1, poll_s=0.05, poll_cap_s=0.2)),
                           ResponseCache(tmp_path / "cache"), api_key="k")
        runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", repairs=1, stage_variables=True,
                                                                        response_mode="json_schema"))
        result = asyncio.run(_run(runner, SCORE, {**MEMORY, "language": "en"}))
        lines = [json.loads(line)["body"] for meta, data in sim.desk.files.values() if meta["purpose"] == "batch"
                 for line in data.decode().splitlines()]
    assert result.status == "dropped" and [c["outcome"] for c in result.calls] == ["runaway"] * 2, result.calls
    assert "ran on" in result.problems[0]
    assert [b["max_tokens"] for b in lines] == [768, 768], [b["max_tokens"] for b in lines]
    assert runner.engine.counters.runaways == 2


# --- a build on a server whose answers run on ----------------------------------------------

def _llamacpp_build(tmp_path: Path, name: str, sim: SimulatorThread, *extra: str, **llm) -> subprocess.CompletedProcess:
    config = write_config(tmp_path / f"{name}.yaml", dataset=name, personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0},
                          llm={"model": "m", "stage_variables": True, "concurrency": 4, "retry_base_s": 0.01,
                               "response_mode": "json_object_schema", "base_url": sim.base_url, **llm})
    # A warehouse (and so a cache) of its own; wide enough for the summary's every column.
    return memsynth_cli("build", str(config), "--warehouse", str(tmp_path / f"wh-{name}"), "--no-progress", *extra,
                        env={"OPENAI_API_KEY": "x", "COLUMNS": "200"})


def test_a_build_on_a_server_whose_answers_run_on_finishes_with_budgets_and_runaway_cuts(tmp_path):
    """llama.cpp's profile with a share of answers that run on in whitespace to max_tokens, at
    a local server's pace. Cut after llm.runaway_tokens, each costs a few hundred tokens and
    a repair; read to the end (runaway_tokens: 0, as before), each costs its whole max_tokens."""
    def simulator() -> Simulator:
        return Simulator(profile="llamacpp", models=("m",), token_rate=50000, runaway_rate=0.15,
                         faults=Faults(seed=5))

    with SimulatorThread(simulator()) as sim:
        done = _llamacpp_build(tmp_path, "cut", sim, "--format", "json")
        cut = sim.simulator.counters
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["version"] == 1 and summary["row_counts"]["memories"] > 0
    stages = summary["stages"]
    drawn = cut.by_outcome["runaway"]
    assert drawn >= 3 and sum(s["runaways"] for s in stages.values()) == drawn, (drawn, stages)
    assert stages["enpmr.life_themes"]["budget"] == 2560 and stages["enpmr.goal"]["budget"] == 768
    assert all(0 < s["largest_answer"] for s in stages.values()), stages
    rows = cli_json_here("query", "SELECT outcome, completion_tokens FROM llm_calls", "--dataset", "cut",
                         "--warehouse", str(tmp_path / "wh-cut"), "--format", "json")
    stopped = [r["completion_tokens"] for r in rows if r["outcome"] == "runaway"]
    assert len(stopped) == drawn and all(256 <= t <= 256 + 32 for t in stopped), stopped
    # The server stopped generating each one soon after the client closed its stream: read on, a
    # runaway would cost at least 768 - 256 more tokens. What the server made past the cut is
    # tokens streamed while the client was not scheduled, so the bound is half of that, not a
    # time: 67 a runaway at load 7 (4 workers on 2 cores) broke the 64 it once was.
    assert cut.completion_tokens - summary["llm"]["completion_tokens"] <= drawn * 256

    with SimulatorThread(simulator()) as sim:
        done = _llamacpp_build(tmp_path, "uncut", sim, runaway_tokens=0)
        uncut = sim.simulator.counters
    assert done.returncode == 0, done.stderr[-2000:]
    assert "budget" in done.stdout and "largest answer" in done.stdout and "runaways" in done.stdout
    drawn_uncut = uncut.by_outcome["runaway"]
    # Read to its end, every runaway streamed at least the smallest budget of these stages.
    assert drawn_uncut >= 3 and uncut.completion_tokens >= drawn_uncut * 768
    assert cut.completion_tokens / cut.requests < uncut.completion_tokens / uncut.requests
