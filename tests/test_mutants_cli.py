"""`memsynth check-answers --mutants`: the per-rule mutation table of the answer files given.

Read in place from the shared corpus (../shared/model-answers), or from small files written
here; nothing is built.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.release_probe import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parent.parent
ANSWERS = Path(os.environ.get("MEMSYNTH_MODEL_ANSWERS", ROOT.parent / "shared" / "model-answers"))
needs_corpus = pytest.mark.skipif(not ANSWERS.is_dir(), reason=f"model answers not found at {ANSWERS}")
FILES = [str(ANSWERS / "enpmr" / "zh" / "memory_session.json"), str(ANSWERS / "stratmem" / "en" / "query.json")]


def _rows(text: str) -> dict[tuple[str, str], list[str]]:
    """The table's rows by (recipe, rule): [by, mutants, killed, rate, any, judge work...]."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("recipe ")) + 1
    return {(cells[0], cells[1]): cells[2:] for line in lines[start:]
            if (cells := line.replace("<", " ").split()) and not line.startswith("rules with")}


@needs_corpus
def test_mutants_prints_the_table_per_rule_with_its_judge_work():
    code, out, err = run_cli("check-answers", "--mutants", *FILES)
    assert (code, err) == (0, ""), err
    assert out.startswith("4 acceptable answers mutated\n")  # two of each file
    rows = _rows(out)
    by, mutants, killed, rate, _any, *work = rows["enpmr", "session-reveals"]
    assert (by, rate, work) == ("check", "100%", ["-"]) and int(mutants) == int(killed) > 0
    by, mutants, killed, rate, rejected, *work = rows["stratmem", "query-given-type"]
    assert (by, killed, rate, rejected) == ("judge", "0", "-", "0")
    assert work == ["off_pool_query", f"×{mutants}"]
    assert rows["enpmr", "session-invents-nothing"][0] == "prompt"
    assert "rules with no check:" in out and "all judge work by design" in out
    assert not any(recipe == "pal" for recipe, _ in rows)  # only the files given


@needs_corpus
def test_mutants_as_json():
    code, out, err = run_cli("check-answers", "--mutants", "--format", "json", *FILES)
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["mutated"] == 4 and report["refused"] == []
    rules = {(r["recipe"], r["rule"]): r for r in report["rules"]}
    reveals = rules["enpmr", "session-reveals"]
    assert reveals["enforcer"] == "check" and reveals["killed"] == reveals["mutants"] > 0 and reveals["rate"] == 1.0
    given_type = rules["stratmem", "query-given-type"]
    assert (given_type["enforcer"], given_type["killed"], given_type["rate"]) == ("judge", 0, None)
    assert given_type["judge_work"] == {"off_pool_query": given_type["mutants"]}


def _query_file(answers: list[dict], **variables) -> dict:
    return {"recipe": "stratmem", "stage": "query", "language": "zh",
            "variables": {"language": "zh", "reference_date": "2024-01-01", "human": "林悦", "virtual_person": "Bo",
                          "query_time": "2 pm on 3 May, 2023", "history": [], "given_type": "A",
                          "memories": [{"number": 1, "fact": "Bo 在 2023-04-02 领养了一只灰猫。"}], **variables},
            "answers": answers}


def test_an_answer_rejected_as_it_stands_is_named_not_mutated(tmp_path):
    """Its mutants would count as killed whatever they broke."""
    good = {"id": "好", "label": "acceptable", "answer": {"query": "你的灰猫最近怎么样？", "targets": [1]}}
    bad = {"id": "坏", "label": "acceptable", "answer": {"query": "灰猫", "targets": [1]}}  # not a question
    path = tmp_path / "问题.json"
    path.write_text(json.dumps(_query_file([good, bad]), ensure_ascii=False), encoding="utf-8")
    code, out, err = run_cli("check-answers", "--mutants", "--format", "json", str(path))
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert report["mutated"] == 1 and [r["id"] for r in report["refused"]] == ["坏"]
    assert report["refused"][0]["problems"]
    code, out, err = run_cli("check-answers", "--mutants", str(path))
    assert code == 0 and "not mutated, rejected as it stands: stratmem.query 坏:" in out


def test_refusals_are_one_line(tmp_path):
    path = tmp_path / "答案\u202e😀.json"
    path.write_text(json.dumps({"recipe": "stratmem"}), encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", "--mutants", str(path)), "missing stage, variables, answers")
    violation = {"id": "v", "label": "violation", "answer": {"query": "灰猫", "targets": [1]}}
    path.write_text(json.dumps(_query_file([violation])), encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", "--mutants", str(path)), "no acceptable answer to mutate")
    unknown = {**_query_file([]), "stage": "nope", "answers": [{"id": "a", "label": "acceptable", "answer": {}}]}
    path.write_text(json.dumps(unknown), encoding="utf-8")
    assert_one_line_error(*run_cli("check-answers", "--mutants", str(path)), "has no stage 'nope'")
    assert_one_line_error(*run_cli("check-answers", "--mutants", str(tmp_path / "missing")), "no such file")


HOSTILE = st.text(st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["林悦", "ＦＵＬＬ", "😀🙂", "مرحبا", "\u202e", "\ud800", "", "0" * 40])
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | HOSTILE,
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(HOSTILE, inner, max_size=3),
                       max_leaves=12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=JSONISH | st.just({"query": "你的灰猫最近怎么样？", "targets": [1]}), variables=st.dictionaries(st.sampled_from(["memories", "given_type", "human", "query_time",
                                                                  "history", "language"]), JSONISH, max_size=3))
def test_property_any_answer_and_variables_are_a_table_or_one_line(tmp_path, answer, variables):
    """Whatever a file holds: the table (exit 0) or one error line (exit 2), never a traceback."""
    data = _query_file([{"id": "a", "label": "acceptable", "answer": answer}], **variables)
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8", errors="surrogatepass")
    code, out, err = run_cli("check-answers", "--mutants", str(path))
    if code == 0:
        assert err == "" and "acceptable answers mutated" in out
    else:
        assert code == 2
        assert_one_line_error(code, out, err)


def test_a_variable_of_the_wrong_shape_is_one_line_with_or_without_mutants(tmp_path):
    """A prompt rendered from `memories: null` once escaped check-answers as a TypeError."""
    path = tmp_path / "a.json"
    good = {"id": "a", "label": "acceptable", "answer": {"query": "你的灰猫最近怎么样？", "targets": [1]}}
    path.write_text(json.dumps(_query_file([good], memories=None), ensure_ascii=False), encoding="utf-8")
    for extra in ([], ["--mutants"]):
        code, out, err = run_cli("check-answers", *extra, str(path))
        assert code == 2
        assert_one_line_error(code, out, err, "stage stratmem.query cannot take these variables (TypeError")
