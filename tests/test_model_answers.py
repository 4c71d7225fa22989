"""Answers a strong model wrote to our prompts are the test set of every check, as released data is.

Reads ../shared/model-answers (or $MEMSYNTH_MODEL_ANSWERS) in place through `memsynth
check-answers`, prints per recipe, language and stage how many acceptable answers pass and how
many violations are rejected (run with -s to see it), and holds the checks to the targets:
at least 98 % of acceptable answers pass, each rejection of one argued below from the seed;
at least 90 % of violations are rejected, each one no check can see named against the judge
criterion of the recipe's rules that enforces it at build time.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path

import pytest

from memsynth.generation.registry import recipe_class
from tests.conftest import memsynth_cli

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = Path(os.environ.get("MEMSYNTH_MODEL_ANSWERS", ROOT.parent / "shared" / "model-answers"))
needs_corpus = pytest.mark.skipif(not ANSWERS.is_dir(), reason=f"model answers not found at {ANSWERS}")

# Acceptable answers the checks reject, and why that is right.
# Keyed recipe/id: an id such as profile-zh-a1 is in more than one recipe's files.
ARGUED = {
    "enpmr/support_dialogue-zh-a4": (
        "8 utterances, written when the zh prompt said '2 到 6 轮', which a Chinese reader can take as "
        "exchanges. The seed's dialogue is a list of utterances whose 'Memory Turn' indexes it (Fig. 11), "
        "'2-6 turns' averaging four (§3.2): the unit is the utterance, and the prompt now says so "
        "('共 2 到 6 条发言'). Under it this answer breaks the bound."),
}
# Violations no check can see: the rule (of the recipe's rules) whose judge criterion catches them.
JUDGED = {
    "scene-zh-v1": ("enpmr", "scene-need"),  # the scene's need is physiological, not esteem
    "preferences-zh-v4": ("pal", "preferences-personal"),  # preferences anyone would share
    "requirements-zh-v5": ("pal", "needs-on-topic"),  # a family need under a health topic
    "solution_preferences-zh-v5": ("pal", "choices-follow-preferences"),  # liked what the neg rejects
    # These break a line our responder prompt had ("only where it serves"), since removed: the
    # seed gives none, as an evaluated system's irrelevant memories are what StratMem-Bench
    # measures, by its judges (eval_detect, eval_miq).
    "eval_respond-en-v1": ("stratmem", "irrelevant-suppressed"),
    "eval_respond-zh-v1": ("stratmem", "irrelevant-suppressed"),
}


def _verdicts() -> list[dict]:
    result = memsynth_cli("check-answers", str(ANSWERS), "--format", "json")
    assert result.returncode in (0, 1), result.stderr[-2000:]
    return json.loads(result.stdout)


@needs_corpus
def test_model_answers_calibrate_every_check():
    verdicts = _verdicts()
    table: dict[tuple[str, str, str], Counter[str]] = {}
    for v in verdicts:
        row = table.setdefault((v["recipe"], v["language"], v["stage"]), Counter())
        row[f"{v['label']}_total"] += 1
        row[v["label"]] += v["agrees"]
    print("\nmodel answers: acceptable passed, violations rejected")
    for (recipe, language, stage), row in sorted(table.items()):
        print(f"  {recipe:<9}{language:<4}{stage:<28}{row['acceptable']:>3}/{row['acceptable_total']:<4}"
              f"{row['violation']:>3}/{row['violation_total']}")
    acceptable = [v for v in verdicts if v["label"] == "acceptable"]
    violations = [v for v in verdicts if v["label"] == "violation"]
    passed = sum(v["passed"] for v in acceptable)
    rejected = sum(not v["passed"] for v in violations)
    print(f"  acceptable passed {passed}/{len(acceptable)} ({passed / len(acceptable):.1%}), "
          f"violations rejected {rejected}/{len(violations)} ({rejected / len(violations):.1%})")

    refused = {f"{v['recipe']}/{v['id']}": v["problems"] for v in acceptable if not v["passed"]}
    assert set(refused) <= set(ARGUED), f"acceptable answers rejected without an argument: {refused}"
    missed = {v["id"]: v["rule"] for v in violations if v["passed"]}
    assert set(missed) <= set(JUDGED), f"violations no check rejects and no judge is named for: {missed}"
    assert passed / len(acceptable) >= 0.98
    assert rejected / len(violations) >= 0.90


@needs_corpus
def test_every_missed_violation_names_a_judge_criterion_of_its_recipe():
    for answer, (recipe, rule_id) in JUDGED.items():
        rules = {r.id: r for r in recipe_class(recipe).rules}
        assert rule_id in rules, (answer, rule_id)
        assert rules[rule_id].judges, f"{recipe} rule {rule_id} names no judge criterion"


@needs_corpus
def test_a_rejected_answer_gets_the_repair_message_a_build_would_send_in_its_language():
    by_id = {v["id"]: v for v in _verdicts()}
    zh = by_id["support_dialogue-zh-v1"]
    assert not zh["passed"] and zh["repair"].startswith("你上一次的回答无法使用")
    assert any("换个说法也不行" in p for p in zh["problems"])
    en = by_id["highlight-en-v1"]
    assert en["repair"].startswith("Your previous answer could not be used")
    assert "at least 6 items" in en["repair"]


def _answer_file(path: Path, **overrides) -> Path:
    data = {"recipe": "stratmem", "stage": "query", "language": "en",
            "variables": {"language": "en", "reference_date": "2024-01-01", "human": "Ana", "virtual_person": "Bo",
                          "query_time": "2 pm on 3 May, 2023", "history": [], "given_type": "A",
                          "memories": [{"number": 1, "fact": "Bo adopted a grey cat called Pebble on 2023-04-02."}]},
            "answers": [{"id": "good", "label": "acceptable", "answer": {"query": "How is the new cat settling in?",
                                                                       "targets": [1]}},
                        {"id": "copied", "label": "violation",
                         "answer": {"query": "Do you remember that Bo adopted a grey cat called Pebble on 2023-04-02?",
                                    "targets": [1]}}]}
    data.update(overrides)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_check_answers_judges_a_file_and_exits_by_its_verdicts(tmp_path):
    path = _answer_file(tmp_path / "query.json")
    result = memsynth_cli("check-answers", str(path))
    assert result.returncode == 1, result.stderr
    assert "stratmem.query [en] good: passed (labelled acceptable)" in result.stdout
    assert "stratmem.query [en] copied: rejected (labelled violation)" in result.stdout
    assert "[does_not_quote_memories]" in result.stdout
    assert "acceptable passed 1/1; violations rejected 1/1" in result.stdout
    shown = memsynth_cli("check-answers", str(path), "--show-repair")
    assert "Reply again with the complete corrected JSON only" in shown.stdout
    good_only = _answer_file(tmp_path / "good.json", answers=[{"id": "g", "answer": {"query": "How is your new cat doing?",
                                                                                    "targets": [1]}}])
    assert memsynth_cli("check-answers", str(good_only)).returncode == 0


@pytest.mark.parametrize(("overrides", "message"), [
    ({"recipe": "nope"}, "unknown recipe 'nope'"),
    ({"stage": "nope"}, "recipe 'stratmem' has no stage 'nope'"),
    ({"variables": {"language": "en", "reference_date": "2024-01-01"}}, "cannot take these variables"),
    ({"answers": "x"}, "answers must be a list"),
])
def test_check_answers_refuses_a_bad_file_in_one_line(tmp_path, overrides, message):
    result = memsynth_cli("check-answers", str(_answer_file(tmp_path / "bad.json", **overrides)))
    assert result.returncode == 2
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_check_answers_refuses_a_missing_path_and_non_json(tmp_path):
    missing = memsynth_cli("check-answers", str(tmp_path / "none.json"))
    assert missing.returncode == 2 and "no such file or folder" in missing.stderr
    (tmp_path / "x.json").write_text("{not json", encoding="utf-8")
    broken = memsynth_cli("check-answers", str(tmp_path / "x.json"))
    assert broken.returncode == 2 and "not JSON" in broken.stderr
