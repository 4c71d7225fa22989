"""longmem builds on the simulator in English and Chinese with no simulated answers of its own;
its release is LongMemEval's JSON, read unchanged by LongMemEval's evaluate_qa.py (run in place
from ../shared against the simulator as judge); its gold checks reject their mutants."""

from __future__ import annotations

import copy
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from flows.longmem import gold
from flows.longmem.seed_format import ORACLE_FILE, S_FILE, LongMemEvalFile
from tests.conftest import ROOT, cli_json_here, memsynth_cli, start_simulator

LONGMEMEVAL = ROOT.parent / "shared" / "reference-data" / "longmemeval"
CJK = re.compile(r"[\u4e00-\u9fff]")
pytestmark = pytest.mark.xdist_group("longmem_build")
WAREHOUSES: dict[str, str] = {}
FACTS: dict[str, dict[str, dict]] = {}


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> dict[str, tuple[Path, dict, list[dict], dict]]:
    """One small build and release per language: (release folder, summary, S instances, truths)."""
    out: dict[str, tuple[Path, dict, list[dict], dict]] = {}
    for language in ("en", "zh"):
        base = tmp_path_factory.mktemp(f"longmem-{language}")
        config = base / "c.yaml"
        config.write_text(yaml.safe_dump({
            "dataset": "lm", "recipe": "longmem", "seed": 5, "reference_date": "2024-06-30", "language": language,
            "personas": {"count": 2}, "shard_size": 1, "llm": {"model": "m"},
            "recipe_options": {"haystack_sessions": 6, "exchanges": 2, "per_type": 1, "abstentions": 1}}))
        wh = str(base / "wh")
        summary = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", wh, "--format", "json")
        done = memsynth_cli("release", "create", "--dataset", "lm", "--tag", "v1.0.0", "--out", str(base / "out"),
                            "--warehouse", wh)
        assert done.returncode == 0, done.stderr
        files = sorted((base / "out" / "lm-v1.0.0" / "longmemeval").rglob(S_FILE))
        instances = [i for f in files for i in json.loads(f.read_text(encoding="utf-8"))]
        facts = {r["fact_id"]: r for r in cli_json_here("query", "SELECT * FROM longmem_facts", "--dataset", "lm",
                                                     "--warehouse", wh, "--format", "json")}
        questions = cli_json_here("query", "SELECT question_id, fact_id, terms FROM longmem_questions", "--dataset", "lm",
                                  "--warehouse", wh, "--format", "json")
        truths = {q["question_id"]: {"kind": facts[q["fact_id"]]["kind"] if q["fact_id"] else "absent",
                                     "values": facts[q["fact_id"]]["values"] if q["fact_id"] else [],
                                     "terms": q["terms"], "abstention": q["fact_id"] is None} for q in questions}
        out[language] = (files[0].parent, summary, instances, truths)
        WAREHOUSES[language], FACTS[language] = wh, facts
    return out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_longmem_builds_on_the_simulator_with_every_gold_check_holding(released, language):
    _, summary, instances, truths = released[language]
    assert not (ROOT / "flows" / "longmem" / "simulated.py").exists()
    for stage in ("longmem.evidence", "longmem.filler"):
        assert summary["stages"][stage]["ok"] == summary["stages"][stage]["items"] > 0
    assert all(c["pass_rate"] == 1.0 for name, c in summary["checks"].items() if name.startswith("longmem.gold"))
    # 2 personas x (6 types + 1 abstention), each in LongMemEval's shape and types
    LongMemEvalFile.model_validate(instances)
    assert len(instances) == 14 and sum(i["question_id"].endswith("_abs") for i in instances) == 2
    assert {i["question_type"] for i in instances} == {
        "single-session-user", "single-session-assistant", "single-session-preference", "multi-session",
        "knowledge-update", "temporal-reasoning"}
    assert summary["statistics"]["sessions_per_haystack"] == 6.0
    for item in instances:
        assert item["haystack_dates"] == sorted(item["haystack_dates"]) < [item["question_date"]]
        text = item["question"] + "".join(t["content"] for s in item["haystack_sessions"] for t in s)
        assert bool(CJK.search(text)) == (language == "zh")
        assert not any(gold.problems(item, truths[item["question_id"]]).values())


def test_a_count_answer_and_a_temporal_answer_are_computed_from_the_haystack(released):
    _, _, instances, truths = released["en"]
    by_type = {i["question_type"]: i for i in instances if not i["question_id"].endswith("_abs")}
    count = by_type["multi-session"]
    assert count["answer"] == str(len(set(truths[count["question_id"]]["values"])))
    temporal = by_type["temporal-reasoning"]
    from flows.longmem.plan import day_of
    first, second = sorted(day_of(d) for s, d in zip(temporal["haystack_session_ids"], temporal["haystack_dates"])
                           if s in temporal["answer_session_ids"])
    assert temporal["answer"] == f"{(second - first).days} days"
    update = by_type["knowledge-update"]
    assert update["answer"] == truths[update["question_id"]]["values"][-1]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_haystack_holds_the_personas_other_evidence_sessions_as_distractors(released, language):
    """As LongMemEval's S haystacks hold other user sessions beside filler: each haystack holds
    evidence sessions of the persona's other facts, under plain ids and without has_answer, while
    its own evidence sessions alone are named answer_ (the sampler's convention) and carry it."""
    _, _, instances, _ = released[language]
    owner = {sid: f for f in FACTS[language].values() for sid in f["session_ids"]}
    for item in instances:
        answers = set(item["answer_session_ids"])
        assert {s for s in item["haystack_session_ids"] if "answer" in s} == answers
        assert answers and all(s.startswith("answer_") for s in answers) or item["question_id"].endswith("_abs")
        own = {s.removeprefix("answer_") for s in answers}
        distractors = [s for s in item["haystack_session_ids"] if s in owner and s not in own]
        assert distractors, item["question_id"]
        assert all(owner[s]["persona_id"] == owner[distractors[0]]["persona_id"] for s in distractors)
        for sid, turns in zip(item["haystack_session_ids"], item["haystack_sessions"]):
            assert any(t.get("has_answer") for t in turns) == (sid in answers), (item["question_id"], sid)


def test_the_haystack_share_of_distractors_follows_the_option():
    from flows.longmem.options import LongmemOptions
    from flows.longmem.plan import haystack_share

    assert haystack_share(1, 20, LongmemOptions()) == (20, 24)  # about half of 44, as many as there are
    assert haystack_share(2, 30, LongmemOptions()) == (22, 21)
    assert haystack_share(2, 30, LongmemOptions(distractor_share=0)) == (0, 43)
    assert haystack_share(0, 5, LongmemOptions(haystack_sessions=6)) == (3, 3)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_persona_draws_its_own_facts(language):
    """Ten personas at the shipped configs' options: for every kind, the attributes drawn differ
    between personas (not one set for all), and so do the values."""
    import datetime as dt

    from flows.longmem.options import LongmemOptions
    from flows.longmem.plan import draw
    from memsynth.generation.recipe import persona_rng

    options = LongmemOptions(**yaml.safe_load((ROOT / "configs" / "longmem.yaml").read_text())["recipe_options"])
    plans = [draw(f"p-{i}", options, language, dt.date(2024, 6, 30), persona_rng(11, f"p-{i}", "plan"))
             for i in range(10)]
    for kind in ("user", "assistant", "preference", "count", "update", "temporal"):
        drawn = {frozenset(f.entry["key"] for f in plan.facts if f.kind == kind) for plan in plans}
        assert len(drawn) > 1, (kind, drawn)
    assert len({frozenset((f.entry["key"], *f.values) for f in plan.facts) for plan in plans}) == 10
    if language == "zh":
        assert all(CJK.search(v) for plan in plans for f in plan.facts for v in f.values)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_catalog_lets_every_session_keep_off_what_it_must_avoid(language):
    """A session avoids the abstentions' terms and the persona's other facts' terms and values:
    no fact's own value or topic may name them (its session could never pass `avoids`), and no
    filler topic may name any fact's."""
    from flows.longmem.plan import catalog
    from flows.longmem.text import named

    book = catalog(language)
    absent = [t for a in book.ABSENT for t in a["terms"]]
    for entry in book.ATTRIBUTES:
        own = [entry["topic"], *entry.get("values", ()), *entry.get("events", ())]
        others = [w for o in book.ATTRIBUTES if o is not entry for w in (*o["terms"], *o.get("values", ()))]
        for text in own:
            assert not named(text, absent + others), (entry["key"], text, named(text, absent + others))
    every = absent + [w for e in book.ATTRIBUTES for w in (*e["terms"], *e.get("values", ()))]
    for topic in book.FILLER_TOPICS:
        assert not named(topic, every), (topic, named(topic, every))


def _mutants(item: dict, truth: dict) -> dict[str, dict]:
    """Per gold check, a copy of a good instance that check must reject."""
    kind = truth["kind"]
    out = {}
    m = copy.deepcopy(item)
    if m["answer_session_ids"]:
        first = m["haystack_session_ids"].index(m["answer_session_ids"][0])
        for t in m["haystack_sessions"][first]:
            t.pop("has_answer", None)
        out["answer_sessions_hold_evidence"] = m
    m = copy.deepcopy(item)
    filler = next(i for i, s in enumerate(m["haystack_session_ids"]) if s not in m["answer_session_ids"])
    m["haystack_sessions"][filler][0]["content"] += " " + truth["terms"][0]
    out["filler_leaves_the_attribute_alone" if not truth["abstention"] else "abstention_attribute_appears_nowhere"] = m
    if kind == "update":
        out["update_answer_is_latest"] = {**copy.deepcopy(item), "answer": truth["values"][0]}
    if kind == "temporal":
        days = int(re.search(r"\d+", item["answer"]).group())
        out["temporal_answer_follows_dates"] = {**copy.deepcopy(item), "answer": re.sub(r"\d+", str(days + 3),
                                                                                        item["answer"], count=1)}
    if kind == "count":
        out["count_matches_sessions"] = {**copy.deepcopy(item), "answer": str(len(item["answer_session_ids"]) + 1)}
    m = copy.deepcopy(item)
    m["haystack_dates"] = list(reversed(m["haystack_dates"]))
    out["sessions_in_time_order"] = m
    return out


@pytest.mark.parametrize("language", ["en", "zh"])
def test_each_gold_check_rejects_its_mutants(released, language):
    _, _, instances, truths = released[language]
    rejected: set[str] = set()
    for item in instances:
        truth = truths[item["question_id"]]
        for check, mutant in _mutants(item, truth).items():
            assert list(gold.CHECKS[check](mutant, truth)), (check, item["question_id"])
            rejected.add(check)
    assert rejected == set(gold.CHECKS)


def test_longmemeval_evaluate_qa_reads_the_release_unchanged(released, tmp_path):
    """LongMemEval's own script, run in place, judges hypotheses against our S and oracle files
    through an OpenAI-compatible endpoint (the simulator, reached as OPENAI_BASE_URL)."""
    folder, _, instances, _ = released["en"]
    script = LONGMEMEVAL / "src" / "evaluation" / "evaluate_qa.py"
    hyps = tmp_path / "hyp.jsonl"
    hyps.write_text("".join(json.dumps({"question_id": i["question_id"], "hypothesis": i["answer"]}) + "\n"
                            for i in instances))
    sim = start_simulator()
    try:
        for ref in (S_FILE, ORACLE_FILE):
            env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
            env.update(OPENAI_BASE_URL=sim.base_url, OPENAI_API_KEY="not-a-key")
            done = subprocess.run([sys.executable, str(script), "gpt-4o", str(hyps), str(folder / ref)],
                                  cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
            assert done.returncode == 0, done.stderr[-2000:]
            assert "Accuracy:" in done.stdout and "Warning: skipping" not in done.stdout
            logged = [json.loads(line) for line in (tmp_path / "hyp.jsonl.eval-results-gpt-4o").read_text().splitlines()]
            assert sorted(e["question_id"] for e in logged) == sorted(i["question_id"] for i in instances)
            assert all(isinstance(e["autoeval_label"]["label"], bool) for e in logged)
    finally:
        sim.stop()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_eval_longmem_scores_accuracy_per_type_and_session_and_turn_recall(released, language):
    released[language]  # noqa: B018  (the build)
    run = cli_json_here("eval", "longmem", "--dataset", "lm", "--llm", "simulator", "--warehouse", WAREHOUSES[language],
                        "--format", "json")
    scores = {(s["system"], s["metric"]): s for s in run["scores"] if s["scope"] == "all"}
    model = next(system for system, metric in scores if metric == "accuracy")
    assert scores[model, "accuracy"]["n"] == 14 and 0 <= scores[model, "accuracy"]["value"] <= 100
    assert scores[model, "abstention accuracy"]["n"] == 2
    assert all(scores[model, f"accuracy {t}"]["n"] >= 2 for t in ("single-session-user", "temporal-reasoning"))
    for level in ("session", "turn"):
        assert scores["bm25", f"{level} recall_any@1"]["n"] == 12
        # a 6-session haystack holds every answer session in its first 10
        assert level == "turn" or scores["bm25", "session recall_all@10"]["value"] == 100
        assert scores["bm25", f"{level} recall_any@1"]["value"] <= scores["bm25", f"{level} recall_any@10"]["value"]


def test_eval_counts_only_the_questions_own_evidence_turns_as_relevant():
    """Turn recall's relevant turns are the question's own evidence: another fact's evidence
    session in its haystack (a distractor) keeps its has_answer in the table, not in the eval."""
    from flows.longmem.evaluation import _haystacks

    def session(sid):
        return {"session_id": sid, "date": "2024/01/02 (Tue) 10:00",
                "turns_json": json.dumps([{"role": "user", "content": "x", "has_answer": True}])}

    class Ctx:
        def read(self, *tables):
            return {"longmem_questions": [{"question_id": "q", "haystack_session_ids": ["own_1", "other_1"],
                                           "answer_session_ids": ["own_1"]}],
                    "longmem_sessions": [session("own_1"), session("other_1")]}

    [(_, haystack)] = _haystacks(Ctx())
    assert [any(t.get("has_answer") for t in s["turns"]) for s in haystack] == [True, False]
