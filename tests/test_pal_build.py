"""A 3-persona pal build on the simulator through the real CLI; every rule confirmed with SQL."""

from __future__ import annotations

import asyncio
import json

import pytest

from flows.pal import ACTION_GRAMMAR, PalRecipe, conforms_to_grammar
from memsynth.core.config import BuildConfig
from memsynth.core.records import PersonaRow
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.recipe import PersonaContext, ShardOutput, persona_rng
from memsynth.generation.stage import GenerationSettings, StageRunner
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.settings import EngineSettings
from memsynth.warehouse.catalog import run_query
from tests.conftest import cli_json_here, write_config

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("pal_build")


@pytest.fixture(scope="module")
def pal_build(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pal")
    config = write_config(folder / "pal.yaml", dataset="pal", recipe="pal", personas={"count": 3},
                          shard_size=3, recipe_options={"months": [2, 3]})
    summary = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(folder / "wh"),
                            "--format", "json")
    return folder / "wh", summary


def sql(warehouse, query):
    return run_query(warehouse, "pal", query)[1]


def test_every_table_is_filled_and_statistics_reported(pal_build):
    _, summary = pal_build
    for table in ("pal_profiles", "timelines", "requirement_types", "preferences", "situations",
                  "experiences", "topics", "candidate_solutions", "logs", "dialogue_turns"):
        assert summary["row_counts"][table] > 0, table
    stats = summary["statistics"]
    assert 2 <= stats["topics_per_dialogue"] <= 3
    assert stats["logs_per_session"] >= 20 and stats["sessions_per_user"] >= 4
    assert 12 <= stats["first_dialogue_hour"] <= stats["last_dialogue_hour"] <= 21
    assert summary["seed_figures"]["sessions_per_user"] == 27.8
    assert stats["dialogue_turns_per_session"] >= 4
    split = dict(part.split("=") for part in stats["candidate_feedback"].split())
    assert int(split["pos"]) == int(split["neg"]) and int(split["neu"]) == 2 * int(split["pos"])


RULES = {
    "Big Five levels are low/medium/high": """
        SELECT count(*) FROM pal_profiles WHERE NOT list_has_all(['low', 'medium', 'high'],
            [openness, conscientiousness, extraversion, agreeableness, neuroticism])""",
    "timeline months are consecutive": """
        SELECT count(*) FROM (SELECT month, lag(month) OVER (PARTITION BY persona_id ORDER BY month) prev
            FROM timelines) WHERE prev IS NOT NULL
            AND strptime(month || '-01', '%Y-%m-%d') <> strptime(prev || '-01', '%Y-%m-%d') + INTERVAL 1 MONTH""",
    "4-5 requirement types per aspect, ids aspect-n": """
        SELECT count(*) FROM (SELECT persona_id, aspect, count(*) n,
               bool_and(regexp_full_match(requirement_id, aspect || '-[0-9]+')) ok
            FROM requirement_types GROUP BY 1, 2) WHERE n NOT BETWEEN 4 AND 5 OR NOT ok""",
    "every persona has the four aspects": """
        SELECT count(*) FROM (SELECT persona_id, count(DISTINCT aspect) a FROM requirement_types GROUP BY 1) WHERE a <> 4""",
    "a preference for every requirement type": """
        SELECT count(*) FROM requirement_types r LEFT JOIN preferences p USING (persona_id, requirement_id)
        WHERE p.pos IS NULL OR p.neg IS NULL""",
    "4-6 situations a month": """
        SELECT count(*) FROM (SELECT persona_id, month, count(*) n FROM situations GROUP BY 1, 2)
        WHERE n NOT BETWEEN 4 AND 6""",
    "situation spans are consecutive and non-overlapping": """
        SELECT count(*) FROM (SELECT start_time, lag(end_time) OVER (PARTITION BY persona_id ORDER BY start_time) prev_end
            FROM situations) WHERE prev_end IS NOT NULL AND CAST(start_time AS DATE) <> CAST(prev_end AS DATE) + 1""",
    "spans end inside their month, the month's last in its final three days": """
        SELECT count(*) FROM (SELECT month, end_time, row_number() OVER (PARTITION BY persona_id, month ORDER BY end_time DESC) r
            FROM situations)
        WHERE strftime(end_time, '%Y-%m') <> month
           OR (r = 1 AND day(end_time) < day(last_day(end_time)) - 2)""",
    "2-3 valid requirement ids per situation": """
        SELECT (SELECT count(*) FROM situations WHERE len(requirement_ids) NOT BETWEEN 2 AND 3)
             + (SELECT count(*) FROM (SELECT persona_id, unnest(requirement_ids) rid FROM situations) x
                WHERE NOT EXISTS (SELECT 1 FROM requirement_types r
                                  WHERE r.persona_id = x.persona_id AND r.requirement_id = x.rid))""",
    "the query split is the last month": """
        SELECT count(*) FROM situations s
        WHERE (split = 'query') <> (month = (SELECT max(month) FROM situations t WHERE t.persona_id = s.persona_id))""",
    "every persona has a dialogue in the query month": """
        SELECT count(*) FROM (SELECT persona_id, count(*) FILTER (WHERE has_dialogue AND split = 'query') q
            FROM situations GROUP BY 1) WHERE q = 0""",
    "never four situations in a row without a dialogue": """
        SELECT count(*) FROM (SELECT has_dialogue, lag(has_dialogue, 1) OVER w a, lag(has_dialogue, 2) OVER w b,
               lag(has_dialogue, 3) OVER w c FROM situations WINDOW w AS (PARTITION BY persona_id ORDER BY start_time))
        WHERE NOT (has_dialogue OR a OR b OR c)""",
    "situations start at 7-12 and end at 12-21 o'clock": """
        SELECT count(*) FROM situations WHERE hour(start_time) NOT BETWEEN 7 AND 12
            OR hour(end_time) NOT BETWEEN 12 AND 21 OR minute(start_time) <> 0 OR minute(end_time) <> 0""",
    "topics only for dialogue sessions, one per requirement id, in order": """
        SELECT count(*) FROM topics t JOIN situations s USING (situation_id)
        WHERE NOT s.has_dialogue
           OR s.requirement_ids[CAST(split_part(t.topic_id, '-T', 2) AS INT)] <> t.requirement_id""",
    "every dialogue session has 2-3 topics": """
        SELECT count(*) FROM (SELECT situation_id, count(*) n FROM topics
            WHERE situation_id IN (SELECT situation_id FROM dialogue_turns) GROUP BY 1) WHERE n NOT BETWEEN 2 AND 3""",
    "a log belongs to the next dialogue session, its own situation's included": """
        SELECT count(*) FROM logs l JOIN situations s USING (situation_id)
        WHERE l.session_id IS DISTINCT FROM (SELECT t.situation_id FROM situations t
            WHERE t.persona_id = s.persona_id AND t.has_dialogue AND t.start_time >= s.start_time
            ORDER BY t.start_time LIMIT 1)""",
    "exactly 2 implicit needs with 1-5 evidences": """
        SELECT count(*) FROM topics WHERE len(implicit_needs) <> 2
           OR len(list_filter(implicit_needs, n -> len(n.evidences) NOT BETWEEN 1 AND 5)) > 0""",
    "8 candidates per topic, 2 pos 2 neg 4 neu": """
        SELECT count(*) FROM (SELECT topic_id, count(*) n, count(*) FILTER (WHERE feedback = 'pos') p,
               count(*) FILTER (WHERE feedback = 'neg') g, count(*) FILTER (WHERE feedback = 'neu') u,
               count(DISTINCT candidate_index) i
            FROM candidate_solutions GROUP BY 1) WHERE n <> 8 OR p <> 2 OR g <> 2 OR u <> 4 OR i <> 8""",
    "pos and neg carry a reason, neu none": """
        SELECT count(*) FROM candidate_solutions WHERE (feedback = 'neu') <> (reason IS NULL)""",
    "at least 20 logs per experience": """
        SELECT count(*) FROM experiences e LEFT JOIN (SELECT situation_id, count(*) n FROM logs GROUP BY 1) USING (situation_id)
        WHERE coalesce(n, 0) < 20""",
    "log types are the eight": """
        SELECT count(*) FROM logs WHERE log_type NOT IN ('web_search', 'content_publishing', 'content_browsing',
            'message_sending', 'message_receiving', 'schedule_management', 'transaction_record', 'device_operation')""",
    "log timestamps strictly increase inside the span, up to the dialogue": """
        SELECT count(*) FROM (SELECT l.timestamp, s.start_time, s.end_time,
               lag(l.timestamp) OVER (PARTITION BY l.situation_id ORDER BY l.log_id) prev
            FROM logs l JOIN situations s USING (situation_id))
        WHERE timestamp < start_time OR timestamp > end_time OR timestamp <= prev""",
    "dialogue turns pair a user and an assistant utterance": """
        SELECT count(*) FROM (SELECT situation_id, turn_index, list_sort(list(speaker)) sp
            FROM dialogue_turns GROUP BY 1, 2) WHERE sp <> ['assistant', 'user']""",
    "references name the session's topics": """
        SELECT count(*) FROM dialogue_turns d WHERE NOT EXISTS (SELECT 1 FROM topics t
            WHERE t.situation_id = d.situation_id
              AND t.topic_id = d.situation_id || '-' || split_part(d.reference, '_', 1))""",
}


@pytest.mark.parametrize("rule", list(RULES))
def test_rule_holds_in_sql(pal_build, rule):
    warehouse, _ = pal_build
    assert sql(warehouse, RULES[rule]) == [(0,)], rule


def test_dialogues_conform_to_the_action_grammar(pal_build):
    warehouse, _ = pal_build
    rows = sql(warehouse, """
        SELECT situation_id, list(action ORDER BY turn_index, speaker DESC) FROM dialogue_turns GROUP BY 1""")
    assert rows
    for situation, actions in rows:
        pairs = list(zip(actions[0::2], actions[1::2]))
        assert conforms_to_grammar(pairs), (situation, pairs)
    assert ACTION_GRAMMAR.pattern.startswith("^")


def _run_pal(sim, tmp_path, *, language="en", personas=3, repairs=1, **options):
    config = BuildConfig(dataset="t", recipe="pal", language=language,
                         recipe_options={"months": [1, 1], "profile_batch_size": 3, **options})
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X"),
                       ResponseCache(tmp_path), api_key="k")
    runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="m", repairs=repairs,
                                                                     stage_variables=True))
    recipe = PalRecipe(config.recipe_options)
    output = ShardOutput()
    contexts = [PersonaContext(PersonaRow(persona_id=f"p{i}", description=f"persona {i}", source="t"),
                               config, runner, output, persona_rng(0, f"p{i}")) for i in range(personas)]

    async def main():
        await recipe.run_shard(contexts)
        await engine.aclose()

    asyncio.run(main())
    return recipe, output


def test_query_sessions_propose_only_liked_solutions(simulator, tmp_path):
    sim = simulator.simulator
    sim.record = True
    _, output = _run_pal(simulator, tmp_path, personas=2, months=[2, 2])
    assert {s.split for s in output.rows["situations"]} == {"history", "query"}
    feedback = {"history": set(), "query": set()}
    for body in sim.recorded:
        if body["response_format"]["json_schema"]["name"] == "pal_dialogue":
            v = body["memsynth"]["variables"]
            feedback[v["split"]] |= {r["feedback"] for r in v["framework"] if r["kind"] == "solution"}
    assert feedback == {"history": {"pos", "neg"}, "query": {"pos"}}


def test_chinese_pal_in_process(simulator, tmp_path):
    recipe, output = _run_pal(simulator, tmp_path, language="zh")
    for stage in recipe.stages:
        stats = output.stage_stats[stage.qualified_name]
        assert stats["ok"] == stats["items"] > 0, (stage.name, dict(stats))
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in log.content) for log in output.rows["logs"])
    assert any("\u4e00" <= ch <= "\u9fff" for ch in output.rows["dialogue_turns"][0].content)


def _bad_dialogue(variables):
    """Right length, but the first assistant action is wrong."""
    turns = [{"user": {"action": s["user_action"], "reference": s["user_reference"], "content": "x"},
              "assistant": {"action": "solution_proposal" if i == 0 else s["assistant_action"],
                            "reference": s["assistant_reference"], "content": "y"}}
             for i, s in enumerate(variables["skeleton"])]
    return json.dumps({"turns": turns})


@pytest.mark.parametrize("stage,bad,check_name", [
    ("pal_dialogue", _bad_dialogue, "follows_skeleton"),
    ("pal_situations", json.dumps({"situations": [
        {"time_span": "2024-11-01 ~ 2024-11-05", "requirement_ids": ["work-1", "work-2"],
         "situation": "One. Two happened. Three came. Four went. Five ended."}] * 4}), "spans_consecutive"),
    ("pal_logs", json.dumps({"logs": [{"timestamp": "2024-11-02 08:00", "event": "e",
                                       "type": "web_search", "content": "searched"}]}), "enough_logs"),
])
def test_violations_are_repaired_in_the_chain(simulator, tmp_path, stage, bad, check_name):
    simulator.simulator.script(stage, [bad])
    recipe, output = _run_pal(simulator, tmp_path, personas=1)
    output_stage = "pal." + stage.removeprefix("pal_")
    calls = [c for c in output.rows["llm_calls"] if c.stage == output_stage]
    assert any(f"[{check_name}]" in c.error for c in calls), [c.error for c in calls if c.error]
    stats = output.stage_stats[output_stage]
    assert stats["repaired"] == 1 and stats.get("dropped", 0) == 0, dict(stats)


def test_a_cached_rebuild_sends_the_same_requests(pal_build):
    """Same inputs, same prompt: a rebuild finds every request of the first build in the cache."""
    warehouse, first = pal_build
    config = warehouse.parent / "pal.yaml"
    again = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(warehouse), "--format", "json",
                          "--publish-unchanged")  # a version of its own, whose calls are compared below
    assert again["llm"]["requests"] == 0 and again["llm"]["cache_hits"] == again["llm"]["calls"]
    keys = {v: {k for (k,) in run_query(warehouse, "pal", "SELECT DISTINCT cache_key FROM llm_calls", v)[1]}
            for v in (first["version"], again["version"])}
    assert keys[first["version"]] == keys[again["version"]]
    assert again["row_counts"] == first["row_counts"]


def test_candidate_order_carries_no_signal(simulator, tmp_path):
    """A model that always likes the first two candidates it is shown leaves no trace in the order."""
    def first_two_liked(variables):
        c = variables["candidates"]
        return json.dumps({"analysis": "a", "liked": [{"solution": s, "reason": "Fits."} for s in c[:2]],
                           "disliked": [{"solution": s, "reason": "No."} for s in c[2:4]]})

    simulator.simulator.script("pal_solution_preferences", [first_two_liked] * 500)
    _, output = _run_pal(simulator, tmp_path, personas=2, months=[2, 2])
    liked: dict[str, set[int]] = {}
    for row in output.rows["candidate_solutions"]:
        if row.feedback == "pos":
            liked.setdefault(row.topic_id, set()).add(row.candidate_index)
    assert len(liked) >= 20
    first_two = sum(positions == {0, 1} for positions in liked.values())
    assert first_two / len(liked) < 0.2, (first_two, len(liked))  # 1 in 28 by chance
    mean = sum(i for p in liked.values() for i in p) / (2 * len(liked))
    assert 2.5 < mean < 4.5, mean  # 3.5 when positions are uniform


def test_one_bad_profile_costs_only_its_own_persona(simulator, tmp_path):
    def one_student(variables):
        sentences = "The user works long hours. The user likes it."
        profiles = [{"name": f"P{i}", "gender": "female", "age": 30 + i,
                     "occupation": "She is a university student. She studies law." if i == 0 else sentences,
                     "health_status": sentences, "family_members": sentences, "hobbies": sentences,
                     "personality": {t: ("low", "medium", "high")[(i + j) % 3] for j, t in enumerate(
                         ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism"))}}
                    for i in range(variables["batch_size"])]
        return json.dumps({"profiles": profiles})

    simulator.simulator.script("pal_profile", [one_student])
    _, output = _run_pal(simulator, tmp_path, personas=3, repairs=0)
    assert output.stage_stats["pal.profile"]["flagged"] == 1
    assert {p.persona_id for p in output.rows["pal_profiles"]} == {"p1", "p2"}


def test_a_missing_preference_drops_the_persona_not_the_labels(simulator, tmp_path):
    def missing_one(variables):
        ids = [r["requirement_id"] for r in variables["requirements"]][1:]
        text = "The user likes plans. The user likes lists. The user likes notes. The user likes calm."
        return json.dumps({"items": [{"requirement_id": i, "analysis": "a", "pos": text, "neg": text} for i in ids]})

    simulator.simulator.record = True
    simulator.simulator.script("pal_preferences", [missing_one])
    _, output = _run_pal(simulator, tmp_path, personas=1, repairs=0)
    assert output.stage_stats["pal.preferences"]["dropped"] == 1
    assert not output.rows.get("pal_profiles") and not output.rows.get("topics")
    assert not [b for b in simulator.simulator.recorded if b["memsynth"]["stage"] == "pal.solution_preferences"]


def test_the_assistant_knows_the_users_preferences_only_in_the_query_split(simulator, tmp_path):
    """History dialogues may draw on the background (the requirement framework's evidence comes
    from it), never on the preferences; in the query month the assistant knows both."""
    simulator.simulator.record = True
    _run_pal(simulator, tmp_path, personas=1, months=[2, 2])
    prompts = {}
    for body in simulator.simulator.recorded:
        if body["memsynth"]["stage"] == "pal.dialogue":
            prompts.setdefault(body["memsynth"]["variables"]["split"], body["messages"][-1]["content"])
    assert "knows the user's background" in prompts["history"] and "but not their preferences" in prompts["history"]
    assert "not their preferences" not in prompts["query"]


def test_a_judge_verdict_is_repaired_like_a_failed_check_then_drops_the_item(simulator, tmp_path):
    """The judge keeps rejecting one aspect's preferences: the runner asks again with the judge's
    reason, then drops the item like one failing a check, and the persona with it."""
    sim = simulator.simulator
    sim.record = True
    said: list[str] = []

    def generic(variables: dict) -> str:  # the first persona's work preferences, at every review
        first = [i["requirement_id"] for i in variables["answer"]["items"]]
        said.append(said[0] if said else first[0])
        personal = first[0] != said[0]
        return json.dumps({"items": [{"requirement_id": r, "personal": personal, "reason": "anyone would agree"}
                                     for r in first]})

    sim.script("pal_preferences_review", [generic] * 8)  # every review of the shard (4 aspects, 1 repair)
    _, output = _run_pal(simulator, tmp_path, personas=1, repairs=1)
    calls = [c for c in output.rows["llm_calls"] if c.stage == "pal.preferences"]
    rejected = [c for c in calls if c.outcome == "judge_rejected"]
    assert len(rejected) == 2 and "[preferences_review]" in rejected[0].error
    # The repair prompt carried the judge's reason.
    repairs = [b for b in sim.recorded if b["memsynth"]["stage"] == "pal.preferences" and len(b["messages"]) > 2]
    assert any("anyone would agree" in b["messages"][-1]["content"] for b in repairs)
    failures = [f for f in output.rows["stage_failures"] if f.stage == "pal.preferences"]
    assert len(failures) == 1 and "[preferences_review]" in failures[0].problems[0]
    assert output.stage_stats["pal.preferences_review"]["items"] >= 2
    # A dropped aspect's preferences drop the persona: nothing of it reaches the tables.
    assert not output.rows.get("preferences")
