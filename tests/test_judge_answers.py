"""Judges measured, not assumed: `memsynth check-answers --judge` on the shared corpus, with
verdicts from the simulator or from a file, and `--render-audits` writing the audit prompts
without anything that gives a label away."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsynth.core.errors import MemsynthError
from memsynth.generation.registry import recipe_class
from memsynth.quality.audit_check import audit_cases, judge_figures, read_label_rules, read_verdicts
from tests.conftest import ROOT
from tests.release_probe import assert_one_line_error, run_cli

ANSWERS = ROOT.parent / "shared" / "model-answers"
FEW = [str(ANSWERS / "enpmr" / "en" / "support_dialogue.json"), str(ANSWERS / "enpmr" / "zh" / "scene.json"),
       str(ANSWERS / "pal" / "zh" / "dialogue.json"), str(ANSWERS / "stratmem" / "zh" / "label.json")]


def _corpus() -> list[dict]:
    out = []
    for path in sorted(ANSWERS.rglob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        out += [{**a, "recipe": data["recipe"], "stage": data["stage"], "language": data["language"]}
                for a in data["answers"]]
    return out


def test_render_audits_writes_every_audited_answer_without_its_label(tmp_path):
    folder = tmp_path / "prompts"
    code, out, err = run_cli("check-answers", str(ANSWERS), "--render-audits", str(folder))
    assert code == 0, err
    index = json.loads((folder / "index.json").read_text(encoding="utf-8"))["prompts"]
    cases = audit_cases([ANSWERS])
    assert len(index) == len(cases) > 60 and f"wrote {len(cases)} audit prompts" in out
    assert {p["stage"] for p in index} >= {"scene", "support_dialogue", "dialogue", "label", "solution_preferences"}
    files = sorted(p for p in folder.iterdir() if p.name != "index.json")
    assert [p.stem for p in files] == sorted(p["key"] for p in index)
    # Listed by opaque key, not in the corpus's order (acceptable answers first in each file).
    assert [p["key"] for p in index] == sorted(p["key"] for p in index)
    corpus = _corpus()
    mistakes = [a["rule"] for a in corpus if a["label"] == "violation" and len(a["rule"]) > 12]
    ids = [a["id"] for a in corpus]
    for path in [*files, folder / "index.json"]:
        text = path.read_text(encoding="utf-8")
        assert not any(m in text for m in mistakes), path  # the rule a mistake breaks is nowhere
        assert not any(f'"{i}"' in text for i in ids), path  # nor the answer's id, which says a1 or v1
        assert '"label":' not in text
    one = json.loads(files[0].read_text(encoding="utf-8"))
    assert [m["role"] for m in one["messages"]] == ["system", "user"] and one["response_schema"]["properties"]
    # A folder that holds anything is refused in one line, and left as it was.
    code, out, err = run_cli("check-answers", str(ANSWERS), "--render-audits", str(folder))
    assert_one_line_error(code, out, err, "not an empty folder")


def _verdicts_file(tmp_path: Path, cases, *, wrongly_flag: int = 1) -> tuple[Path, int, int]:
    """A judge that flags every violation on its first rule and `wrongly_flag` acceptable answers."""
    verdicts, flagged = {}, 0
    for case in cases:
        bad = case.label == "violation" or (case.label == "acceptable" and flagged < wrongly_flag)
        flagged += case.label == "acceptable" and bad
        verdicts[case.key] = {rule: {"verdict": "violation" if bad and n == 0 else "pass", "reason": "見た 🙂"}
                              for n, rule in enumerate(case.rules)}
    path = tmp_path / "verdicts.json"
    path.write_text(json.dumps(verdicts, ensure_ascii=False), encoding="utf-8")
    return path, sum(c.label == "violation" for c in cases), sum(c.label == "acceptable" for c in cases)


def test_judge_from_a_verdicts_file_counts_flags_per_rule(tmp_path):
    cases = audit_cases(FEW)
    path, violations, acceptable = _verdicts_file(tmp_path, cases)
    # Label each violation with its stage's first audited rule, except one with a rule its audit lacks.
    mistakes = [c for c in cases if c.label == "violation"]
    labels = {c.key: [c.rules[0]] for c in mistakes}
    labels[mistakes[-1].key] = ["dialogue-form" if mistakes[-1].recipe == "enpmr" else "json-only"]
    rules_file = tmp_path / "label-rules.json"
    rules_file.write_text(json.dumps(labels), encoding="utf-8")
    code, out, err = run_cli("check-answers", *FEW, "--verdicts", str(path), "--label-rules", str(rules_file),
                             "--format", "json")
    assert code == 1, err  # the checks reject the violations, as without --judge
    judge = json.loads(out)["judge"]
    assert (judge["audited"], judge["unjudged"]) == (len(cases), 0)
    assert (judge["violations_flagged"], judge["violations"]) == (violations, violations)
    assert (judge["acceptable_flagged"], judge["acceptable"]) == (1, acceptable)
    assert (judge["in_scope"], judge["in_scope_flagged_rule"], judge["check_only"]) == (violations - 1,) * 2 + (1,)
    assert (judge["check_only_flagged"], judge["check_only_rejected"], judge["unlabelled"]) == (1, 1, 0)
    rows = {r["rule"]: r for r in judge["rules"]}
    for rule, row in rows.items():
        labelled = sum(1 for c in mistakes[:-1] if c.rules[0] == rule)
        assert (row["labelled_in_scope"], row["labelled_flagged"]) == (labelled, labelled), row
    assert sum(r["acceptable_flagged"] for r in judge["rules"]) == 1
    # A judge that flags the wrong rule is a miss of the labelled one, though it flagged something.
    mislabelled = {c.key: [c.rules[1]] for c in mistakes if len(c.rules) > 1}
    rules_file.write_text(json.dumps(mislabelled), encoding="utf-8")
    figures = judge_figures(cases, read_verdicts(path, cases), (), read_label_rules(rules_file, cases))
    assert figures["in_scope"] == figures["in_scope_flagged"] == len(mislabelled) > 0
    assert figures["in_scope_flagged_rule"] == 0 and len(figures["missed"]) == len(mislabelled)
    assert figures["unlabelled"] == violations - len(mislabelled)
    # The text form prints the table and the totals.
    code, out, err = run_cli("check-answers", *FEW, "--judge", "--verdicts", str(path))
    assert f"violations flagged by any rule {violations}/{violations}" in out
    assert f"acceptable answers wrongly flagged 1/{acceptable}" in out and "recall-grounded" in out
    assert "--label-rules FILE" in out
    code, out, err = run_cli("check-answers", *FEW, "--verdicts", str(path), "--label-rules", str(rules_file))
    assert f"judge recall on violations of audited rules: the labelled rule flagged 0/{len(mislabelled)}" in out


def test_label_rules_without_a_judge_is_one_line(tmp_path):
    path = tmp_path / "r.json"
    path.write_text("{}", encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", FEW[0], "--label-rules", str(path)), "--verdicts")


@pytest.mark.parametrize(("content", "message"), [
    ("[1]", "expected an object"),
    ('{"enpmr/en/support_dialogue/support_dialogue-en-a1": ["user-never-mentions"]}', "not labelled a violation"),
    ('{"enpmr/en/support_dialogue/support_dialogue-en-v1": "user-never-mentions"}', "list of rule ids"),
    ('{"enpmr/en/support_dialogue/support_dialogue-en-v1": ["no-such-rule"]}', "no rule of enpmr"),
    ('{"support_dialogue-en-v9": ["user-never-mentions"]}', "names no audited answer"),
])
def test_a_bad_label_rules_file_is_one_line(tmp_path, content, message):
    path, _, _ = _verdicts_file(tmp_path, audit_cases(FEW[:1]))
    rules = tmp_path / "r.json"
    rules.write_text(content, encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", FEW[0], "--verdicts", str(path), "--label-rules", str(rules)),
                          message)


def test_judge_on_the_simulator_audits_every_answer_through_the_endpoint(tmp_path):
    code, out, err = run_cli("check-answers", *FEW, "--judge", "--llm", "simulator", "--warehouse",
                             str(tmp_path / "wh"), "--format", "json")
    assert code == 1, err
    judge = json.loads(out)["judge"]
    assert judge["judge"] == "memsynth simulator"
    assert judge["audited"] == len(audit_cases(FEW)) and judge["unjudged"] == 0
    assert {r["rule"] for r in judge["rules"]} >= {"recall-grounded", "scene-fits-target", "roles",
                                                   "direct-rejection"}
    assert any((tmp_path / "wh" / "_cache").iterdir())  # cached like any call


@pytest.mark.parametrize(("content", "message"), [
    ("{not json", "verdicts.json"),
    ('["a"]', "expected an object"),
    ('{"nobody": {}}', "names no audited answer"),
    ('{"preferences-zh-a1": {}}', "use its key"),  # enpmr's and pal's preference answers share the id
])
def test_a_bad_verdicts_file_is_one_line(tmp_path, content, message):
    path = tmp_path / "verdicts.json"
    path.write_text(content, encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", str(ANSWERS), "--verdicts", str(path)), message)


def test_verdicts_name_known_rules_and_values(tmp_path):
    cases = audit_cases(FEW)
    case = cases[0]
    for verdict, message in (({"no-such-rule": "pass"}, "not one of its audit rules"),
                             ({case.rules[0]: {"verdict": "maybe"}}, "must be pass or violation")):
        path = tmp_path / "v.json"
        path.write_text(json.dumps({case.qualified_id: verdict}), encoding="utf-8")
        with pytest.raises(MemsynthError, match=message):
            read_verdicts(path, cases)
    path.write_text(json.dumps({case.qualified_id: {case.rules[0]: "violation"}}), encoding="utf-8")
    got = read_verdicts(path, cases)
    assert got == {case.key: {case.rules[0]: ("violation", "")}}
    figures = judge_figures(cases, got)
    assert figures["audited"] == 1 and figures["unjudged"] == len(cases) - 1


@functools.cache
def _one_file_cases():
    return audit_cases(FEW[:1])


TEXT = st.text(st.characters(codec="utf-8") | st.sampled_from(["\ud800", "‮", "李", "🙂", "ｆ"]), max_size=30) | \
    st.sampled_from(["ｆｕｌｌ", "李雷", "audit-0123456789abcdef", "pass", "violation", "recall-grounded", "verdict"])
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | TEXT,
                       lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSONISH)
def test_any_verdicts_file_is_read_or_refused_cleanly(tmp_path, data):
    cases = _one_file_cases()
    if isinstance(data, dict) and data:  # half the time, aimed at a real answer
        data = {cases[0].key: next(iter(data.values())), **data}
    path = tmp_path / "v.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    try:
        got = read_verdicts(path, cases)
    except MemsynthError as exc:
        assert "\n" not in str(exc)
        return
    assert set(got) <= {c.key for c in cases}
    assert all(v in ("pass", "violation") for rules in got.values() for v, _ in rules.values())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=JSONISH)
def test_any_label_rules_file_is_read_or_refused_cleanly(tmp_path, data):
    cases = _one_file_cases()
    mistake = next(c for c in cases if c.label == "violation")
    if isinstance(data, dict) and data:  # half the time, aimed at a real mistake
        data = {mistake.key: next(iter(data.values())), **data}
    path = tmp_path / "r.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    try:
        got = read_label_rules(path, cases)
    except MemsynthError as exc:
        assert "\n" not in str(exc)
        return
    known = {r.id for r in recipe_class("enpmr").rules}
    assert set(got) <= {c.key for c in cases if c.label == "violation"}
    assert all(ids and set(ids) <= known for ids in got.values())
