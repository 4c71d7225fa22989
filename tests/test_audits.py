"""Audit judges (memsynth.generation.audit): what each recipe audits, the seeded sample, the
prompt, the simulator's verdicts, the `audits` table of a build, the review app's audit
questions and `memsynth agreement` on them, and `build --estimate` pricing the audit calls."""

from __future__ import annotations

import json
import shutil
from collections import Counter, defaultdict

import pytest

from memsynth.generation.audit import (
    STRUCTURAL,
    AuditStage,
    audit_rows,
    audit_variables,
    audited_rules,
    rule_lines,
    sampled,
)
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.registry import audit_plan, audit_rules, audited_stages, audits, names, recipe_class
from memsynth.generation.rules import prompt_lines
from memsynth.generation.stage import ItemResult, evaluate
from memsynth.quality.review.agreement import cohen_kappa, dataset_agreement
from memsynth.quality.review.items import ReviewSource
from memsynth.simulator.audits import VIOLATION_SHARE, verdicts
from memsynth.simulator.text import TextMaker
from memsynth.warehouse.annotations import AnnotationLog, Judgment
from memsynth.warehouse.catalog import run_query
from memsynth.warehouse.ducklake import dataset_dir
from tests.conftest import write_config

RECIPES = ("enpmr", "pal", "stratmem")
GOLD = {"enpmr": {"scene", "support_dialogue"}, "pal": {"solution_preferences"}, "stratmem": {"label"}}


@pytest.mark.parametrize("recipe", RECIPES)
def test_every_stage_is_audited_on_every_rule_its_prompt_lines_name_but_those_code_holds_whole(recipe):
    cls = recipe_class(recipe)
    plan = audit_plan(recipe)
    assert plan is not None
    planned = audit_rules(recipe)
    audited = {rule for ids in planned.values() for rule in ids}
    semantic = {r.id for r in cls.rules if r.judges or r.prompt_only}
    assert semantic - audited - set(plan.not_audited) == set()
    table = {r.id: r for r in cls.rules}
    assert set(plan.not_audited) <= set(table)
    # A rule left to the checks names checks: an audit only stays away from what code reads.
    assert all(table[i].checks for i in plan.checked), [i for i in plan.checked if not table[i].checks]
    assert set(plan.stages) <= {s.name for s in cls.all_stages()}
    # Left unaudited: only the replies of the model under evaluation, each named.
    evaluated = {s.name for s in audited_stages(recipe) if s not in cls.all_stages()}
    assert set(plan.unaudited_stages) <= evaluated and not set(plan.unaudited_stages) & set(planned)
    assert set(plan.gold) == GOLD[recipe]
    prompts = PromptLibrary()
    left_out = STRUCTURAL | set(plan.checked) | set(plan.not_audited)
    for stage in cls.all_stages():  # every id a prompt line names is audited, or left out with a reason
        named = {i for t in prompts.files(stage.template_for("en")).values() for line in prompt_lines(t)
                 for i in line.ids}
        assert named - left_out <= set(planned.get(stage.name, ())), (stage.name, named - left_out)
    stages = audits(recipe)
    assert set(stages) == set(planned)
    for name, audit in stages.items():  # one call per stage covers all its rules, as a judge
        assert audit.kind == "judge" and audit.template_for("zh") == "_audit.zh.j2"
        assert [r.id for r in audit.rules] == list(planned[name])


def test_a_stage_whose_prompt_names_a_new_rule_is_audited_on_it_unless_a_check_holds_it_whole():
    from dataclasses import replace

    plan, stages = audit_plan("enpmr"), audited_stages("enpmr")
    assert "goal-fields" in audited_rules("enpmr", plan, stages)["goal"]  # "name: a specific, measurable milestone"
    assert "memory-counts" not in audited_rules("enpmr", plan, stages)["goal"]  # counted by code
    loose = replace(plan, checked={})
    assert "memory-counts" in audited_rules("enpmr", loose, stages)["goal"]
    assert "goal-fields" not in audited_rules("enpmr", replace(plan, not_audited={"goal-fields": "x"}), stages)["goal"]


def test_the_sample_is_seeded_and_near_its_rate():
    keys = [f"p{i}/t{i % 7}/session" for i in range(4000)]
    first = [k for k in keys if sampled(7, "enpmr.memory_session", k, 0.1)]
    assert first == [k for k in keys if sampled(7, "enpmr.memory_session", k, 0.1)]  # the same on a rerun
    assert 0.085 < len(first) / len(keys) < 0.115
    assert first != [k for k in keys if sampled(8, "enpmr.memory_session", k, 0.1)]  # another seed, another sample
    assert all(sampled(7, "s", k, 1.0) for k in keys[:50]) and not any(sampled(7, "s", k, 0.0) for k in keys[:50])


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_audit_prompt_holds_the_task_the_answer_and_every_rule_in_the_build_language(language):
    audit = audits("enpmr")["scene"]
    task = [{"role": "system", "content": "写一个场景 SYSTEM"}, {"role": "user", "content": "TASK-TEXT 李雷"}]
    prompts = PromptLibrary()
    messages = prompts.render(audit.template_for(language), audit_variables(audit, task, {"scene": "雨夜。"}, language))
    assert [m["role"] for m in messages] == ["system", "user"]
    text = messages[1]["content"]
    assert "TASK-TEXT 李雷" in text and "雨夜。" in text  # Chinese sent as is, not escaped
    for rule in audit.rules:
        assert f"{rule.id}" in text and rule.rule in text
    language_line = prompts.render_text("_language.zh.j2" if language == "zh" else "_language.j2", {})
    assert language_line in messages[0]["content"]
    # Each rule judged by its own words and on its own concern, no stricter: a strong judge had
    # flagged acceptable answers for what a rule allows and for other rules' problems.
    scope = {"en": ("on its own concern only", "not to a stricter standard"), "zh": ("只就它自己管的事", "不要更严")}
    assert all(s in text for s in scope[language])


@pytest.mark.parametrize(("language", "line"), [("en", "a specific, measurable milestone"),
                                               ("zh", "一个具体、可衡量的里程碑")])
def test_each_audited_rule_shows_the_prompt_lines_that_state_it_rendered_for_the_item(language, line):
    """The judge holds the answer to the prompt's own words, not only to the table's summary."""
    from tests.golden import fixture_variables

    cls = recipe_class("enpmr")
    audit = audits("enpmr")["goal"]
    stage = next(s for s in cls.all_stages() if s.name == "goal")
    variables = dict(fixture_variables("enpmr", language)["goal"])
    prompts = PromptLibrary()
    task = prompts.render(stage.template_for(language), variables)
    lines = rule_lines(prompts, stage.template_for(language), variables, task)
    assert any(line in text for text in lines["goal-fields"])
    counts = " ".join(lines["memory-counts"])
    assert str(variables["min_items"]) in counts and "{{" not in counts  # rendered with the item's variables
    text = prompts.render(audit.template_for(language), audit_variables(audit, task, {"items": []}, language, lines))
    said = text[1]["content"].split("<task>")[1].split("</answer>")[1]  # the rules part, after the answer
    assert line in said
    assert "memory-counts" not in said  # a check counts: the audit does not ask


@pytest.mark.parametrize("given_type", ["A", "B", "C"])
def test_an_audited_rule_shows_only_the_lines_of_the_branch_its_item_was_given(given_type):
    """A judge shown every branch of an {% if %} would hold a type-A query to type C's line."""
    from tests.golden import fixture_variables

    stage = next(s for s in recipe_class("stratmem").all_stages() if s.name == "query")
    prompts = PromptLibrary()
    variables = {**fixture_variables("stratmem", "en")["query"], "given_type": given_type}
    task = prompts.render(stage.template_for("en"), variables)
    shown = rule_lines(prompts, stage.template_for("en"), variables, task)["query-given-type"]
    branches = [line for line in (prompts.files("stratmem/query.j2")["stratmem/query.j2"]).splitlines()
                if line.startswith("{# rule: query-given-type #}Aim it")]
    sent = " ".join(" ".join(m["content"] for m in task).split())
    taken = [b for b in branches if " ".join(b.split("#}", 1)[1].split()) in sent]
    assert len(taken) == 1 and len(branches) == 3
    assert [line for line in shown if any(line in " ".join(b.split()) for b in branches)] == [
        " ".join(taken[0].split("#}", 1)[1].split())]


# Rules a strong judge read more strictly than the seed means (tests/test_judge_figures.py):
# each now says what it allows, in the line the judge reads.
ALLOWS = {("enpmr", "session-invents-nothing"): "not an invention", ("stratmem", "merge-keeps-all"): "are fine",
          ("pal", "preferences-personal"): "does not break it", ("stratmem", "query-no-quote"): "not a quote",
          ("enpmr", "user-never-mentions"): "does not state it", ("stratmem", "roles"): "not where careful",
          ("enpmr", "scene-fits-target"): "does not fit it by that alone", ("pal", "candidates"): "is one solution"}


@pytest.mark.parametrize(("recipe", "rule"), sorted(ALLOWS))
def test_an_over_read_rule_says_what_it_allows(recipe, rule):
    by_id = {r.id: r for r in recipe_class(recipe).rules}
    assert ALLOWS[recipe, rule] in by_id[rule].rule
    assert any(rule in ids for ids in audit_rules(recipe).values())  # the judge reads it


def test_the_audit_answer_needs_one_verdict_per_rule_and_becomes_rows():
    audit = audits("pal")["dialogue"]
    variables = audit_variables(audit, [{"role": "user", "content": "t"}], {"turns": []}, "en")
    ids = [r.id for r in audit.rules]
    good = {"verdicts": [{"rule": i, "verdict": "pass", "reason": "fine"} for i in ids]}
    output, problems, outcome = evaluate(audit, json.dumps(good), "stop", variables)
    assert outcome == "ok" and not problems
    twice = {"verdicts": [{"rule": ids[0], "verdict": "pass", "reason": "x"}] * len(ids)}
    assert evaluate(audit, json.dumps(twice), "stop", variables)[2] == "check_failed"
    unknown = {"verdicts": [{"rule": "no-such-rule", "verdict": "pass", "reason": "x"}] * len(ids)}
    assert evaluate(audit, json.dumps(unknown), "stop", variables)[2] == "invalid_schema"
    result = ItemResult(audit.qualified_name, "k/audit", "p1", output, "ok")
    rows = audit_rows(audit, result, "k", "p1", "judge-m", gold=False)
    assert [(r.item, r.stage, r.rule, r.verdict, r.judge_model) for r in rows] == [
        ("k", "pal.dialogue", i, "pass", "judge-m") for i in ids]


def test_the_simulator_answers_audits_mostly_pass_with_a_seeded_share_of_violations():
    import random

    rules = [{"id": f"r{i}", "rule": "x"} for i in range(5)]
    seen = Counter()
    for seed in range(600):
        answer = verdicts({}, {"rules": rules, "language": "zh"}, TextMaker(random.Random(seed), "zh"))
        assert [v["rule"] for v in answer["verdicts"]] == [r["id"] for r in rules]
        seen.update(v["verdict"] for v in answer["verdicts"])
    share = seen["violation"] / sum(seen.values())
    assert 0.5 * VIOLATION_SHARE < share < 2 * VIOLATION_SHARE
    # Every installed recipe's audit stages are answered and checked by the simulator.
    from memsynth.simulator.stages import recipe_answers, stages_by_schema

    for name in names():
        for audit in audits(name).values():
            assert audit.schema_name in recipe_answers() and isinstance(stages_by_schema()[audit.schema_name], AuditStage)


@pytest.mark.xdist_group("enpmr_build")
def test_a_build_on_the_simulator_writes_the_audits_table_at_its_sample_sizes(quickstart_build):
    warehouse, summary = quickstart_build
    rows = run_query(warehouse, "quickstart", "SELECT item, stage, rule, verdict, judge_model, gold FROM audits")[1]
    model = run_query(warehouse, "quickstart", "SELECT model FROM versions")[1][0][0]
    by_stage: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for item, stage, rule, verdict, judge_model, gold in rows:
        assert verdict in ("pass", "violation") and judge_model == model
        assert gold == (stage in ("enpmr.scene", "enpmr.support_dialogue"))
        by_stage[stage][item].append(rule)
    planned = audit_rules("enpmr")
    for stage, items in by_stage.items():  # one verdict per rule of the stage, each item
        assert all(sorted(r) == sorted(planned[stage.split(".")[1]]) for r in items.values()), stage
    # Gold: every dialogue the build kept was audited.
    dialogues = run_query(warehouse, "quickstart", "SELECT dialogue_id FROM support_dialogues")[1]
    assert set(by_stage["enpmr.support_dialogue"]) == {f"{d}/dialogue" for (d,) in dialogues}
    assert len(dialogues) > 0
    # At audit_rate 0.1: exactly the memory sessions the seeded draw picks.
    sessions = run_query(warehouse, "quickstart", "SELECT DISTINCT memory_id FROM memory_sessions")[1]
    expected = {f"{m}/session" for (m,) in sessions if sampled(7, "enpmr.memory_session", f"{m}/session", 0.1)}
    assert set(by_stage["enpmr.memory_session"]) == expected and expected
    # The calls are the build's like any other (cached, counted, priced).
    calls = dict(run_query(warehouse, "quickstart", "SELECT stage, count(*) FROM llm_calls "
                                                     "WHERE stage LIKE 'enpmr.audit_%' GROUP BY stage")[1])
    assert calls["enpmr.audit_support_dialogue"] >= len(dialogues)
    assert summary["row_counts"]["audits"] == len(rows)


@pytest.mark.xdist_group("enpmr_build")
def test_review_asks_the_audit_rules_and_agreement_gives_their_kappa(quickstart_build, tmp_path):
    warehouse = tmp_path / "wh"
    shutil.copytree(quickstart_build[0], warehouse)
    source = ReviewSource(warehouse, "quickstart")
    try:
        task = source.task(None)
        dialogue = source.query("SELECT dialogue_id FROM benchmark ORDER BY dialogue_id LIMIT 1")[0]["dialogue_id"]
        item = source.item(task, dialogue)
        audits = source.audits(dialogue)
    finally:
        source.close()
    asked = {(q.item_id, q.criterion) for q in item.questions if q.criterion.startswith("audit:")}
    assert asked == {(a["item"], "audit:" + a["rule"]) for a in audits}
    assert {a["stage"] for a in audits} >= {"enpmr.scene", "enpmr.support_dialogue"}
    # An annotator judges every audit verdict of the version, flipping every third one.
    all_audits = run_query(warehouse, "quickstart", "SELECT item, rule, verdict FROM audits ORDER BY item, rule")[1]
    log = AnnotationLog(dataset_dir(warehouse, "quickstart"))
    flip = {"pass": "violation", "violation": "pass"}
    mine = {}
    for n, (i, rule, verdict) in enumerate(all_audits):
        mine[i, rule] = flip[verdict] if n % 3 == 0 else verdict
        log.record(Judgment(i, "audit:" + rule, mine[i, rule], "ann"))
    result = {c["criterion"]: c for c in dataset_agreement(warehouse, "quickstart")["criteria"]}
    for rule in {r for _, r, _ in all_audits}:
        mine_rule = [(i, v) for (i, r), v in sorted(mine.items()) if r == rule]
        judge = dict(((i, r), v) for i, r, v in all_audits)
        expected = cohen_kappa([judge[i, rule] for i, _ in mine_rule], [v for _, v in mine_rule])
        got = result["audit:" + rule]["judge"]["ann"]
        assert got["items"] == len(mine_rule)
        assert got["kappa"] == (None if expected is None else pytest.approx(expected, abs=1e-4))


def test_the_estimate_prices_the_audit_calls(tmp_path):
    from memsynth.build.estimate import estimate_build
    from memsynth.generation.registry import load_config

    config = load_config(write_config(tmp_path / "c.yaml", dataset="est", personas={"count": 1},
                                      llm={"model": "gpt-4o-mini", "stage_variables": True}))
    estimate = estimate_build(config, warehouse=str(tmp_path / "wh"))
    stages = {s["stage"]: s for s in estimate["stages"]}
    for gold in ("enpmr.audit_scene", "enpmr.audit_support_dialogue"):
        assert stages[gold]["calls"] > 0 and stages[gold]["prompt_tokens"] > 0
    assert estimate["cost_usd"]["online"] > 0
