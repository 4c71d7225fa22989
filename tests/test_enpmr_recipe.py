"""The enpmr recipe in process against the simulator: every rule caught, repaired or dropped."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path

import pytest

from flows.enpmr import EnpmrOptions, EnpmrRecipe, blri_mean, can_meet, plan_dialogues
from memsynth.core.config import SEED_PERSONAS, BuildConfig
from memsynth.core.records import PersonaRow
from memsynth.generation.persona_synthesis import synthesize_personas
from memsynth.generation.personas import read_persona_file
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.recipe import PersonaContext, ShardOutput, persona_rng
from memsynth.generation.stage import GenerationSettings, StageRunner
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.settings import EngineSettings
from schemas.enpmr import MemoryRow

TODAY = "2024-12-02"


def run_recipe(sim, tmp_path, *, personas=1, options=None, repairs=2, language="en", seed=None):
    """Generate `personas` personas in process; returns the collected ShardOutput."""
    config = BuildConfig(dataset="t", language=language,
                         recipe_options={"dialogues_per_persona": 1, **(options or {})})
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X", backoff_base_s=0.01),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", repairs=repairs,
                                                                     stage_variables=True, seed=seed))
    recipe = EnpmrRecipe(config.recipe_options)
    output = ShardOutput()

    async def main():
        for i in range(personas):
            persona = PersonaRow(persona_id=f"p{i}", description=f"A baker number {i}", source="t")
            await recipe.generate(PersonaContext(persona, config, runner, output,
                                                 persona_rng(0, f"p{i}")))
        await engine.aclose()

    asyncio.run(main())
    return output


def _items(**fields):
    return lambda n: json.dumps({"items": [
        {k: (v(i) if callable(v) else v) for k, v in fields.items()} for i in range(n)]})


REL = dict(name=lambda i: f"Person {i}", relationship_type="friend", occupation="cook",
           characteristic="kind", date=TODAY, relationship_quality="good")
POW = dict(name=lambda i: f"Skill {i}", description="d", acquisition_method="practice", date=TODAY,
           performance="proficient")
GOAL = dict(name=lambda i: f"Goal {i}", description="d", date=TODAY, status="achieved")
HIGH = dict(name=lambda i: f"Moment {i}", description="d", recognized_by="boss", date=TODAY)
PREF = dict(name=lambda i: f"Likes {i}", description="d", date=TODAY)


def _turns(roles, text=lambda i: f"line {i}"):
    return [{"role": r, "content": text(i)} for i, r in enumerate(roles)]


# Distinct parts of life: placeholder themes would be near duplicates of each other.
LIVES = ["rowing", "baking", "moving house", "night school", "a new job", "caring for father", "learning piano",
         "running a marathon", "buying a flat", "volunteering", "a long illness", "raising a puppy"]


def _themes(dates=None, names=None, n=10):
    return json.dumps({"themes": [
        {"theme": (names or [f"theme {i}" for i in range(n)])[i], "description": LIVES[i % len(LIVES)],
         "start_date": (dates or ["2021-01-01"] * n)[i]} for i in range(n)]})


def _profile(preferences):
    return json.dumps({"name": "A", "age": 30, "gender": "f", "occupation": "o", "education": "e",
                       "personality": ["a", "b", "c"], "habits": ["a", "b", "c"], "social": ["a", "b"],
                       "emotional_pattern": ["a", "b"], "goals": ["a", "b"],
                       "communication_style": ["a", "b"], "preferences": preferences})


def _dialogue(states_name=False, memory_turn=2, roles=("user", "ai"), padding=0):
    """A support dialogue answer built from the request's variables, broken as asked."""
    def content(variables):
        target = variables["target"]
        recall = f"Remember {target['details']}?" + " and so on" * padding
        turns = _turns(roles, lambda i: recall if i == memory_turn - 1 else "hi")
        if states_name:
            turns[0]["content"] = f"I keep thinking about {target['name']}"
        return json.dumps({"turns": turns, "memory_turn": memory_turn})
    return content


VIOLATIONS = [
    ("profile", _profile(["same"] * 10), "distinct_preferences"),
    ("life_themes", _themes(dates=["2010-01-01"] * 10), "theme_dates_in_window"),
    ("life_themes", _themes(names=["same"] * 10), "distinct_themes"),
    ("life_themes", _themes(n=10), None),  # 10 themes are fine for the default…
    ("relationship", _items(**REL)(4), "quality_mix"),
    ("relationship", _items(**{**REL, "date": "2030-01-01", "relationship_quality": lambda i: "good bad".split()[i % 2]})(4), "dates_in_theme"),
    ("relationship", _items(**{**REL, "name": "Same", "relationship_quality": lambda i: "good bad".split()[i % 2]})(4), "distinct_names"),
    ("power", _items(**POW)(6), "proficiency_mix"),
    ("power", _items(**{**POW, "date": lambda i: f"2024-12-0{2 - i % 2}",
                        "performance": lambda i: "not proficient" if i in (1, 4) else "proficient"})(6), "chronological"),
    ("goal", _items(**GOAL)(3), "goal_status"),
    ("highlight", _items(**{**HIGH, "date": "2001-01-01"})(6), "dates_in_theme"),
    ("preferences", _items(**{**PREF, "date": "2001-01-01"})(10), "dates_in_window"),
    ("memory_session", json.dumps({"turns": _turns(["user", "user"] + ["ai", "user"] * 5)}), "session_alternates"),
    ("memory_session", json.dumps({"turns": _turns(["user", "ai"] * 5)}), "user_reveals_memory"),
    ("support_dialogue", _dialogue(roles=("ai", "user")), "dialogue_alternates"),
    ("support_dialogue", _dialogue(memory_turn=1), "memory_turn_recalls_target"),
    ("support_dialogue", _dialogue(states_name=True), "user_never_states_memory"),
    ("support_dialogue", _dialogue(padding=30), "recall_length"),
    ("support_dialogue", lambda v: json.dumps({"turns": _turns(["user", "ai"], lambda i: "We talked."),
                                               "memory_turn": 2}), "memory_turn_recalls_target"),
    ("blri", json.dumps({"scores": [9] * 12}), "blri_in_scale"),
    ("blri", json.dumps({"scores": [0] * 12}), "blri_in_scale"),  # the inventory has no neutral point
]


@pytest.mark.parametrize("stage,bad,check_name", [v for v in VIOLATIONS if v[2]],
                         ids=[f"{v[0]}-{v[2]}" for v in VIOLATIONS if v[2]])
def test_each_rule_is_caught_and_repaired(simulator, tmp_path, stage, bad, check_name):
    simulator.simulator.script(f"enpmr_{stage}", [bad])
    out = run_recipe(simulator, tmp_path)
    calls = [c for c in out.rows["llm_calls"] if c.stage == f"enpmr.{stage}"]
    caught = [c for c in calls if f"[{check_name}]" in c.error]
    assert caught and caught[0].outcome == "check_failed", [c.error for c in calls if c.error]
    stats = out.stage_stats[f"enpmr.{stage}"]
    assert stats["repaired"] == 1 and stats.get("dropped", 0) == 0, dict(stats)


def test_min_themes_option_is_enforced(simulator, tmp_path):
    simulator.simulator.script("enpmr_life_themes", [_themes(n=10)])
    out = run_recipe(simulator, tmp_path, options={"min_life_themes": 11})
    calls = [c for c in out.rows["llm_calls"] if c.stage == "enpmr.life_themes"]
    assert "[enough_themes]" in calls[0].error and out.stage_stats["enpmr.life_themes"]["repaired"] == 1
    assert sum(1 for t in out.rows["life_themes"]) >= 11


def test_persistent_violation_is_dropped_and_recorded(simulator, tmp_path):
    # Scripted answers go to requests in arrival order, so with no repairs allowed the
    # one bad answer is the whole fate of one item.
    simulator.simulator.script("enpmr_power", [_items(**POW)(6)])
    out = run_recipe(simulator, tmp_path, repairs=0)
    assert out.stage_stats["enpmr.power"]["dropped"] == 1
    failure = [f for f in out.rows["stage_failures"] if f.stage == "enpmr.power"][0]
    assert failure.action == "dropped" and any("proficiency_mix" in p for p in failure.problems)
    dropped_theme = failure.item_key.split("/")[0]
    assert not [m for m in out.rows["memories"] if m.theme_id == dropped_theme and m.category == "power"]


def test_low_blri_keeps_the_dialogue_out_of_the_benchmark(simulator, tmp_path):
    # Agree with every negative statement and disagree with every positive one.
    low = json.dumps({"scores": [-3, 3, -3, -3, 3, 3, -3, 3, -3, 3, 3, -3]})
    simulator.simulator.script("enpmr_blri", [low])
    out = run_recipe(simulator, tmp_path, personas=1, options={"dialogues_per_persona": 2})
    checks = {(q.dialogue_id, q.check_name): q for q in out.rows["quality_checks"]}
    failed = [q for q in checks.values() if q.check_name == "blri" and not q.passed]
    assert len(failed) == 1 and failed[0].score == -3.0
    assert failed[0].details["items"] == json.loads(low)["scores"]
    benchmark = {b.dialogue_id for b in out.rows["benchmark"]}
    dialogues = {d.dialogue_id for d in out.rows["support_dialogues"]}
    assert failed[0].dialogue_id in dialogues and failed[0].dialogue_id not in benchmark
    assert benchmark == dialogues - {failed[0].dialogue_id}


FAITHFUL = {"grounded_in_target": True, "uses_negatives": False, "user_reveals_target": False,
            "recalled_early": False, "score": 5, "reason": "Grounded."}


@pytest.mark.parametrize("answer", [
    {**FAITHFUL, "uses_negatives": True, "score": 2, "reason": "It leans on another memory."},
    {**FAITHFUL, "grounded_in_target": False, "score": 2, "reason": "Generic support."},
    {**FAITHFUL, "user_reveals_target": True, "score": 2, "reason": "The user describes the memory in other words."},
    {**FAITHFUL, "recalled_early": True, "score": 2, "reason": "The AI brings it up a turn too soon."},
], ids=["negatives", "ungrounded", "user-leak", "early-recall"])
def test_failing_faithfulness_keeps_the_dialogue_out_of_the_benchmark(simulator, tmp_path, answer):
    check_name = "faithfulness"
    # One dialogue's judge says it at each of its 3 attempts (the other's answers once): a leak
    # the simulator's dialogue does not show is re-asked (verdict_has_grounds), and a judge that
    # insists keeps the dialogue out.
    first: list[str] = []

    def verdict(variables: dict) -> str:
        first.append(first[0] if first else variables["target"]["name"])
        return json.dumps(answer if variables["target"]["name"] == first[0] else FAITHFUL)

    simulator.simulator.script("enpmr_faithfulness", [verdict] * (4 if answer["grounded_in_target"] else 1))
    out = run_recipe(simulator, tmp_path, personas=1, options={"dialogues_per_persona": 2})
    failed = [q for q in out.rows["quality_checks"] if q.check_name == check_name and not q.passed]
    assert len(failed) == 1
    assert failed[0].dialogue_id in {d.dialogue_id for d in out.rows["support_dialogues"]}
    assert failed[0].dialogue_id not in {b.dialogue_id for b in out.rows["benchmark"]}
    assert len(out.rows["benchmark"]) == 1
    assert out.check_stats[check_name] == {"total": 2, "passed": 1}


SCENE_CHECK = {"fits_target": True, "expresses_need": True, "fits_a_negative": False, "score": 5,
               "reason": "Fits."}


def test_a_scene_failing_its_self_check_is_replaced_before_any_dialogue(simulator, tmp_path):
    bad = json.dumps({**SCENE_CHECK, "fits_a_negative": True, "score": 2, "reason": "Another memory fits as well."})
    simulator.simulator.record = True
    simulator.simulator.script("enpmr_scenario_consistency", [bad])
    out = run_recipe(simulator, tmp_path, personas=1)
    # The first scene failed; a second scene was written, passed and only then the dialogue.
    assert out.stage_stats["enpmr.scene"]["items"] == 2
    assert [q.passed for q in out.rows["quality_checks"] if q.check_name == "scenario_consistency"] == [True]
    assert len(out.rows["benchmark"]) == 1
    order = [b["response_format"]["json_schema"]["name"] for b in simulator.simulator.recorded]
    assert order.index("enpmr_support_dialogue") > max(i for i, n in enumerate(order)
                                                       if n == "enpmr_scenario_consistency")
    judged = [b["memsynth"]["variables"] for b in simulator.simulator.recorded
              if b["memsynth"]["stage"] == "enpmr.scenario_consistency"][0]
    assert judged["target"]["text"] and judged["need_description"] and judged["negatives"]


@pytest.mark.parametrize("verdict", [{"fits_target": False}, {"expresses_need": False},
                                     {"fits_a_negative": True}, {"score": 2}])
def test_no_dialogue_is_written_when_every_scene_fails(simulator, tmp_path, verdict):
    bad = json.dumps({**SCENE_CHECK, "score": 3, **verdict})  # a failed criterion scores at most 3
    simulator.simulator.script("enpmr_scenario_consistency", [bad, bad])
    out = run_recipe(simulator, tmp_path, personas=1)
    assert not out.rows.get("support_dialogues") and not out.rows.get("benchmark")
    failure = [f for f in out.rows["stage_failures"] if f.stage == "enpmr.scenario_consistency"]
    assert len(failure) == 1 and "self-check" in failure[0].problems[0]
    assert out.check_stats["scenario_consistency"] == {"total": 1, "passed": 0}


def test_blri_reverses_negative_items():
    scores = [3, -3, 3, 3, -3, -3, 3, -3, 3, -3, -3, 3]  # ideal: agree with positives, reject negatives
    mean, adjusted = blri_mean(scores, (-3, 3))
    assert mean == 3 and adjusted == [3] * 12
    assert blri_mean([-3, -2, -1, 1, 2, 3] * 2, (-3, 3))[1][:6] == [-3, 2, -1, 1, -2, -3]
    assert EnpmrOptions().blri_points() == [-3, -2, -1, 1, 2, 3]
    assert EnpmrOptions(blri_scale=(1, 5)).blri_points() == [1, 2, 3, 4, 5]


def _memories(theme_count=3, highlights=6):
    rows = []
    for t in range(theme_count):
        for cat, n in (("relationship", 4), ("power", 6), ("goal", 3), ("highlight", highlights)):
            rows += [MemoryRow(memory_id=f"t{t}-{cat}-{i}", persona_id="p", theme_id=f"t{t}",
                               category=cat, date=TODAY, name=f"{cat}{t}{i}", text="x",
                               attributes={"relationship_quality": "good" if i % 2 else "bad"}
                               if cat == "relationship" else {}) for i in range(n)]
    rows += [MemoryRow(memory_id=f"pref-{i}", persona_id="p", theme_id=None, category="preference",
                       date=TODAY, name=f"pref{i}", text="x", attributes={}) for i in range(10)]
    return rows


def test_dialogue_plans_follow_needs_mapping_and_negatives():
    memories = {m.memory_id: m for m in _memories()}
    options = EnpmrOptions(dialogues_per_persona=2000)
    plans = plan_dialogues("p", list(memories.values()), options, random.Random(1))
    needs = Counter(p.need for p in plans)
    total = sum(options.need_proportions.values())
    for need, weight in options.need_proportions.items():
        assert abs(needs[need] / len(plans) - weight / total) < 0.04, needs
    for plan in plans:
        assert can_meet(plan.need, plan.target)
        assert plan.target not in plan.negatives and 2 <= len(plan.negatives) <= 3
        for negative in plan.negatives:
            assert (negative.theme_id, negative.category) == (plan.target.theme_id, plan.target.category)
    # Gold labels follow the need: feeling understood (LB) or affirmed (EN) never comes from
    # a relationship that strains the user.
    relationships = [p for p in plans if p.target.category == "relationship"]
    assert {p.need for p in relationships} == {"LB", "EN"}
    assert {p.target.attributes["relationship_quality"] for p in relationships} == {"good"}
    assert {p.target.category for p in plans if p.need == "EN"} == {"highlight", "relationship"}
    assert {p.target.category for p in plans if p.need == "SA"} == {"goal", "power", "highlight"}


def test_a_memory_without_enough_siblings_is_never_a_target():
    # Two highlights per theme: one sibling, fewer than the two negatives every dialogue needs.
    plans = plan_dialogues("p", _memories(highlights=2), EnpmrOptions(dialogues_per_persona=500),
                           random.Random(2))
    assert plans and all(len(p.negatives) >= 2 for p in plans)
    assert "highlight" not in {p.target.category for p in plans}


def test_dialogue_plans_are_deterministic():
    a = plan_dialogues("p", _memories(), EnpmrOptions(), random.Random("x"))
    b = plan_dialogues("p", _memories(), EnpmrOptions(), random.Random("x"))
    assert a == b


@pytest.mark.parametrize("options,needle", [
    ({"need_proportions": {"XX": 1}}, "unknown needs"),
    ({"need_proportions": {"SA": 0}}, "positive weight"),
    ({"blri_scale": [5, 1]}, "blri_scale"),
    ({"surprise": 1}, "surprise"),
])
def test_bad_recipe_options_are_refused(options, needle):
    with pytest.raises(ValueError, match=needle):
        EnpmrOptions.model_validate(options)


def test_thousand_distinct_personas_are_reachable(simulator, tmp_path):
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X", concurrency=64),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", stage_variables=True))
    recipe = EnpmrRecipe({})
    existing = read_persona_file(SEED_PERSONAS)
    # The first three answers are the same text: one is kept, two are exact duplicates. One text
    # stays a good answer for three personas if they share an age band: it is fixed here.
    same = json.dumps({"description": "A night-shift baker in Leeds in her early thirties who sings in a choir. "
                                      "She worries about her mother's health every single day."})
    simulator.simulator.script("enpmr_persona", [same] * 3)
    output = ShardOutput()

    async def main():
        out = await synthesize_personas(runner, recipe.persona_stage, 1000, seed=5, language="en",
                                        threshold=recipe.dedup_threshold, existing=existing,
                                        attributes=_in_band("30-34", recipe), output=output)
        await engine.aclose()
        return out

    rows, report = asyncio.run(main())
    assert len(rows) == 1000 and len({r.persona_id for r in rows}) == 1000
    assert not {r.persona_id for r in rows} & {r.persona_id for r in existing}
    assert report.exact_duplicates >= 2 and report.kept == 1000
    assert all(r.source == "synthesized" for r in rows)


def _in_band(age_band: str, recipe: EnpmrRecipe):
    """The recipe's persona attributes, every persona in one age band (the same draws otherwise)."""
    return lambda rng, language="en": {**recipe.persona_variables(rng, language), "age_band": age_band}


def test_near_duplicates_are_dropped(simulator, tmp_path):
    engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X"),
                       ResponseCache(tmp_path / "cache"), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", stage_variables=True))
    recipe = EnpmrRecipe({})
    text = ("A retired railway engineer from Osaka in his late sixties who restores vintage radios. He volunteers "
            "at a children's science club on Saturdays and writes letters to his grandchildren.")
    near = text.replace("Saturdays", "Sundays")
    simulator.simulator.script("enpmr_persona", [json.dumps({"description": t}) for t in (text, near)])

    async def main():
        out = await synthesize_personas(runner, recipe.persona_stage, 3, seed=1, language="en",
                                        threshold=0.7, existing=[], output=ShardOutput(),
                                        attributes=_in_band("65-72", recipe))
        await engine.aclose()
        return out

    rows, report = asyncio.run(main())
    assert report.near_duplicates == 1 and len(rows) == 3
    assert rows[0].description == text and near not in [r.description for r in rows]


@pytest.mark.parametrize("text", [
    "A retired railway engineer from Osaka who restores vintage radios on Saturdays.",
    "一位在成都开小面馆的退休教师，每天清晨给街坊煮面，周末去公园下象棋。",
    "two words"])
def test_a_persona_hashes_as_one_update_per_shingle_would(text):
    """The de-duplication keeps the personas it kept before (a rebuild from the cache must
    pick the same ones): hashing the shingles in one batch gives each one's own values."""
    from datasketch import MinHash

    from memsynth.generation.persona_synthesis import NUM_PERM, minhash, shingles

    one_by_one = MinHash(num_perm=NUM_PERM, seed=1)
    for s in shingles(text):
        one_by_one.update(s.encode("utf-8"))
    assert (minhash(text).hashvalues == one_by_one.hashvalues).all()


def _written(base_url: str, cache: Path, count: int, *, seed: int, concurrency: int):
    """`count` new enpmr personas (none from a pool) written through a real engine."""
    engine = LLMEngine(EngineSettings(base_url=base_url, api_key_env="X", concurrency=concurrency),
                       ResponseCache(cache), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", stage_variables=True))
    recipe = EnpmrRecipe({})

    async def main():
        out = await synthesize_personas(runner, recipe.persona_stage, count, seed=seed, language="en",
                                        threshold=recipe.dedup_threshold, existing=[], output=ShardOutput(),
                                        attributes=recipe.persona_variables)
        await engine.aclose()
        return out

    return asyncio.run(main())


def test_written_personas_are_hashed_as_their_answers_come_not_after_the_last(tmp_path, monkeypatch):
    """The de-duplication's hashing, a fifth of a second for 200 personas, is done while the
    other answers are on their way: the build's shards, which wait for the personas, start
    that much sooner."""
    from memsynth.generation import persona_synthesis
    from tests.conftest import start_simulator

    sim = start_simulator(latency_ms=40)
    in_flight_then: list[int] = []
    real = persona_synthesis.minhash

    def minhash(text):
        in_flight_then.append(sim.simulator.counters.in_flight)
        return real(text)

    monkeypatch.setattr(persona_synthesis, "minhash", minhash)
    try:
        rows, report = _written(sim.base_url, tmp_path / "cache", 40, seed=2, concurrency=8)
    finally:
        sim.stop()
    assert report.kept == 40 and len(rows) == 40
    # 44 asked, 8 at a time: every hash but the last wave's is made with answers still out.
    assert len(in_flight_then) >= 40 and sum(n > 0 for n in in_flight_then) >= 30, in_flight_then


def test_personas_are_asked_at_most_a_window_at_a_time_and_kept_in_order(tmp_path, monkeypatch):
    """However many personas are wanted, at most WINDOW are asked or held at once; which are
    kept does not depend on the window (verdicts go in slot order)."""
    from memsynth.generation import persona_synthesis
    from tests.conftest import start_simulator

    def written(window: int, cache: str) -> tuple[list[str], int]:
        monkeypatch.setattr(persona_synthesis, "WINDOW", window)
        sim = start_simulator(latency_ms=5)
        try:
            rows, report = _written(sim.base_url, tmp_path / cache, 30, seed=4, concurrency=16)
            peak = sim.simulator.counters.peak_in_flight
        finally:
            sim.stop()
        assert report.kept == 30
        return [r.persona_id for r in rows], peak

    narrow, peak = written(3, "narrow")
    wide, _ = written(1024, "wide")
    assert peak <= 3, peak
    assert narrow == wide


@pytest.mark.parametrize("stage,bad", [
    ("power", _items(**POW)(6)),  # a check's problem
    ("highlight", _items(**HIGH)(2)),  # the schema's problem
])
def test_a_chinese_repair_prompt_is_chinese(simulator, tmp_path, stage, bad):
    from tests.test_golden_prompts import english_fragments, identifiers

    simulator.simulator.record = True
    simulator.simulator.script(f"enpmr_{stage}", [bad])
    run_recipe(simulator, tmp_path, language="zh")
    repairs = [b["messages"][-1]["content"] for b in simulator.simulator.recorded
               if b["memsynth"]["stage"] == f"enpmr.{stage}" and len(b["messages"]) > 2]
    assert repairs and "问题如下" in repairs[0]
    allowed = identifiers() | {"Skill", "boss"}  # the scripted answer's own words
    assert english_fragments(repairs[0], allowed) == [], repairs[0]


def test_no_two_seeded_requests_of_a_build_are_the_same(simulator, tmp_path):
    """Under a seed an endpoint answers a body the same way each time: a scene drawn again after
    a failed self-check must not be the first one's body (each sample gets seed + its index)."""
    bad = json.dumps({**SCENE_CHECK, "fits_a_negative": True, "score": 2, "reason": "Another memory fits."})
    simulator.simulator.record = True
    simulator.simulator.script("enpmr_scenario_consistency", [bad])
    out = run_recipe(simulator, tmp_path, seed=7)
    assert out.stage_stats["enpmr.scene"]["items"] == 2
    bodies = [json.dumps({k: v for k, v in b.items() if k != "memsynth"}, sort_keys=True)
              for b in simulator.simulator.recorded]
    assert len(bodies) == len(set(bodies))
    scenes = [b for b in simulator.simulator.recorded if b["memsynth"]["stage"] == "enpmr.scene"]
    assert sorted(b["seed"] for b in scenes) == [7, 8]
