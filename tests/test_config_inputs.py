"""Configs and imported files as a careless or hostile user writes them: impossible or
far-off dates, YAML that does not parse, nesting thousands deep, aliases that expand. Each is
one error line (saying where, for YAML) and a non-zero exit, before any request is sent."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsynth.core.config import EARLIEST_DATE, LATEST_DATE, read_config
from memsynth.core.errors import ConfigError
from memsynth.core.inputs import MAX_DEPTH, loads_json, loads_yaml, printable
from tests.conftest import write_config
from tests.release_probe import UNSAFE, assert_one_line_error, run_cli

FUNCTION_SCOPED = [HealthCheck.function_scoped_fixture]


def _config_text(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(("date", "expected"), [
    ("2024-02-30", "c.yaml:2:17: '2024-02-30' is not a date (day is out of range for month)"),
    ("2023-13-01", "c.yaml:2:17: '2023-13-01' is not a date (month must be in 1..12)"),
    ('"2024-02-30"', "reference_date: Input should be a valid date"),
    ("0001-01-02", "reference_date: 0001-01-02 is outside 1900-01-01 … 2100-12-31"),
    ("1899-12-31", "reference_date: 1899-12-31 is outside"),
    ("2101-01-01", "reference_date: 2101-01-01 is outside"),
    ("9999-12-31", "reference_date: 9999-12-31 is outside"),
])
def test_a_bad_reference_date_is_one_line_before_any_request(tmp_path, simulator, date, expected):
    config = _config_text(tmp_path, f"dataset: d\nreference_date: {date}\npersonas: {{count: 1}}\n"
                                    f"llm: {{base_url: '{simulator.base_url}', model: m, stage_variables: true}}\n")
    code, out, err = run_cli("build", str(config), "--warehouse", str(tmp_path / "wh"))
    assert_one_line_error(code, out, err, expected)
    assert simulator.simulator.counters.requests == 0
    assert not (tmp_path / "wh").exists()


def test_the_range_ends_are_accepted(tmp_path):
    for date in (EARLIEST_DATE, LATEST_DATE):
        config = write_config(tmp_path / "c.yaml", dataset="d", reference_date=date.isoformat())
        assert read_config(config).reference_date == date


@settings(max_examples=150, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(year=st.integers(1, 9999), month=st.integers(1, 12), day=st.integers(1, 31), quoted=st.booleans())
def test_property_any_date_is_accepted_in_range_or_refused_in_one_line(tmp_path, year, month, day, quoted):
    text = f"{year:04d}-{month:02d}-{day:02d}"
    config = _config_text(tmp_path, f"dataset: d\nreference_date: {json.dumps(text) if quoted else text}\n")
    try:
        real = dt.date(year, month, day)
    except ValueError:
        real = None
    if real is not None and EARLIEST_DATE <= real <= LATEST_DATE:
        assert read_config(config).reference_date == real
        return
    with pytest.raises(ConfigError) as caught:
        read_config(config)
    assert "\n" not in str(caught.value) and str(config) in str(caught.value)


@pytest.mark.parametrize(("text", "where"), [
    ("dataset: x\nllm: {model: [\n", "c.yaml:3:1: not valid YAML"),
    ("dataset: x\nseed: 1\n  shard_size: 2\n", "c.yaml:3:13: not valid YAML"),
    ("dataset: x\nllm:\n\tmodel: m\n", "c.yaml:3:1: not valid YAML"),
    ("dataset: 'x\n", "c.yaml:2:1: not valid YAML"),
    ("dataset: x\ndescription: a\x1b[2Jb\n", "c.yaml:2:15: character U+001B is not allowed in YAML"),
])
def test_a_yaml_syntax_error_names_the_file_line_and_column(tmp_path, text, where):
    config = _config_text(tmp_path, text)
    assert_one_line_error(*run_cli("build", str(config), "--estimate"), where)


def test_a_5000_deep_yaml_list_in_a_config_is_one_line(tmp_path):
    block = "dataset: x\nrecipe_options:\n  a:\n" + "".join("  " * (i + 2) + "-\n" for i in range(5000))
    flow = "dataset: x\nrecipe_options: {a: " + "[" * 5000 + "]" * 5000 + "}\n"
    for text in (block, flow):
        config = _config_text(tmp_path, text)
        assert_one_line_error(*run_cli("build", str(config), "--estimate"),
                              f"nested more than {MAX_DEPTH} levels deep")


def test_config_aliases_still_work_but_cannot_expand_without_bound(tmp_path):
    config = _config_text(tmp_path, "dataset: x\nllm: {model: &m gpt-4o-mini, models: {big: {model: *m}}}\n")
    assert read_config(config).llm.models["big"].model == "gpt-4o-mini"
    laughs = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    laughs += [f"{n}: &{n} [{', '.join(['*' + p] * 10)}]" for p, n in zip("abcdefgh", "bcdefghi")]
    config = _config_text(tmp_path, "dataset: x\nrecipe_options:\n" + "".join(f"  {line}\n" for line in laughs))
    assert_one_line_error(*run_cli("build", str(config), "--estimate"), "more than 100,000 values")


# Random text over YAML's own punctuation: whatever it is, the reader answers with a value
# or one ConfigError line; never another exception.
YAMLISH = st.text(st.sampled_from(list("[]{}:,-&*!|>'\"#%@`?\n\t abc1é好😀\x1b\u2028") + ["\ud800"]), max_size=120)


@settings(max_examples=300, deadline=None)
@given(text=YAMLISH)
def test_property_any_yaml_text_is_a_value_or_one_line(text):
    try:
        loads_yaml(text, "c.yaml")
    except ConfigError as exc:
        line = printable(exc)
        assert line.startswith("c.yaml") and "\n" not in line and not UNSAFE & set(line)


DEPTHS = st.integers(1, 4000)
OPEN = st.sampled_from(["[", '{"a": '])


def _nested(depth: int, opener: str) -> str:
    return opener * depth + "1" + ("]" if opener == "[" else "}") * depth


@settings(max_examples=120, deadline=None)
@given(depth=DEPTHS, opener=OPEN)
def test_property_json_of_any_depth_is_read_or_refused_in_one_line(depth, opener):
    text = _nested(depth, opener)
    try:
        value = loads_json(text, "f.json")
    except ConfigError as exc:
        assert depth > MAX_DEPTH and str(exc) == f"f.json: nested more than {MAX_DEPTH} levels deep"
        return
    assert depth <= MAX_DEPTH and value is not None


def _answer_file(answer) -> dict:
    return {"recipe": "stratmem", "stage": "query", "language": "zh",
            "variables": {"language": "zh", "reference_date": "2024-01-01", "human": "林悦", "virtual_person": "Bo",
                          "query_time": "2 pm on 3 May, 2023", "history": [], "given_type": "A",
                          "memories": [{"number": 1, "fact": "林悦在 2023-04-02 领养了一只灰猫。"}]},
            "answers": [{"id": "a", "answer": answer}]}


@settings(max_examples=25, deadline=None, suppress_health_check=FUNCTION_SCOPED)
@given(depth=DEPTHS, opener=OPEN, command=st.sampled_from(["personas", "characters", "answers", "answer-text",
                                                           "config"]))
def test_property_nested_input_to_every_reader_is_never_a_traceback(tmp_path, depth, opener, command):
    """`personas import`, `import characters`, `check-answers` and `build` on input nested to
    a random depth: a line and a non-zero exit (or, for an answer, a verdict), never RecursionError."""
    nested = _nested(depth, opener)
    path = tmp_path / "in.json"
    if command == "personas":
        path.write_text(nested + "\n", encoding="utf-8")
        args = ["personas", "import", str(path), "--warehouse", str(tmp_path / "wh")]
    elif command == "characters":
        path.write_text(nested, encoding="utf-8")
        args = ["import", "characters", str(path), "--dataset", "c", "--warehouse", str(tmp_path / "wh")]
    elif command in ("answers", "answer-text"):
        body = json.dumps(_answer_file("@"), ensure_ascii=False)
        inner = json.dumps(nested) if command == "answer-text" else nested
        path.write_text(body.replace('"@"', inner), encoding="utf-8")
        args = ["check-answers", str(path)]
    else:
        path = tmp_path / "c.yaml"
        path.write_text(f"dataset: x\nrecipe_options: {{a: {nested}}}\n", encoding="utf-8")
        args = ["build", str(path), "--estimate"]
    code, out, err = run_cli(*args)  # an exception escaping main fails the test
    assert code != 0 and "RecursionError" not in out + err
    if err:
        assert_one_line_error(code, out, err)
    else:  # check-answers judged the answer: rejected, with its problems on stdout
        assert command.startswith("answer") and code == 1 and "rejected" in out
    assert not (tmp_path / "wh").exists()


def test_5000_deep_files_to_personas_characters_and_check_answers_are_one_line(tmp_path):
    deep = "[" * 5000 + "]" * 5000
    (tmp_path / "p.jsonl").write_text(deep + "\n", encoding="utf-8")
    (tmp_path / "c.json").write_text(deep, encoding="utf-8")
    (tmp_path / "a.json").write_text(json.dumps(_answer_file("@")).replace('"@"', deep), encoding="utf-8")
    wh = str(tmp_path / "wh")
    assert_one_line_error(*run_cli("personas", "import", str(tmp_path / "p.jsonl"), "--warehouse", wh),
                          "p.jsonl:1: nested more than 64 levels deep")
    assert_one_line_error(*run_cli("import", "characters", str(tmp_path / "c.json"), "--dataset", "c",
                                   "--warehouse", wh), "c.json: nested more than 64 levels deep")
    assert_one_line_error(*run_cli("import", "stratmem", str(tmp_path / "c.json"), "--dataset", "s",
                                   "--warehouse", wh), "c.json is not a StratMem-Bench file: Invalid JSON: recursion")
    from flows.stratmem.source import read_locomo

    with pytest.raises(ConfigError, match="c.json: nested more than 64 levels deep"):
        read_locomo(tmp_path / "c.json")  # a stratmem build's recipe_options.source
    code, out, err = run_cli("check-answers", str(tmp_path / "a.json"))
    assert code == 2
    assert_one_line_error(code, out, err, "a.json: nested more than 64 levels deep")
    text_answer = '{"query": ' + deep + "}"  # the answer as a model's text: parsed by the stage
    (tmp_path / "s.json").write_text(json.dumps(_answer_file(text_answer)), encoding="utf-8")
    code, out, err = run_cli("check-answers", str(tmp_path / "s.json"))
    assert (code, err) == (1, "") and "a: rejected\n  - [json] " in out  # worded in Chinese for a zh answer


def test_the_shipped_configs_still_read(tmp_path):
    for config in sorted((Path(__file__).resolve().parent.parent / "configs").glob("*.yaml")):
        assert read_config(config).dataset, config
        assert yaml.safe_load(config.read_text(encoding="utf-8")) == loads_yaml(config.read_text(encoding="utf-8"),
                                                                                  str(config))
