"""Every stage's prompt, rendered from fixed variables, is compared byte for byte with its
golden file (`python -m tests.golden` rewrites them); zh prompts carry no English prose."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.golden import HERE, LANGUAGES, every_golden, golden_file, golden_stages

GOLDENS = every_golden()
# Tokens a Chinese prompt may hold: identifiers the answer must echo (JSON keys and enum
# values of the recipes' schemas, ids such as `work-1`, JSON's true and false), date formats and abbreviations.
ALLOWED = {"JSON", "Schema", "AI", "BLRI", "YYYY", "MM", "DD", "HH", "XX", "true", "false"}


def _vocabulary(schema: dict[str, Any], out: set[str]) -> None:
    if isinstance(schema, dict):
        out.update(schema.get("properties", {}))
        out.update(v for v in schema.get("enum", []) if isinstance(v, str))
        if isinstance(schema.get("const"), str):
            out.add(schema["const"])
        for value in schema.values():
            _vocabulary(value, out)
    elif isinstance(schema, list):
        for value in schema:
            _vocabulary(value, out)


def schema_vocabulary() -> set[str]:
    words: set[str] = set()
    for stages in golden_stages().values():
        for stage in stages:
            _vocabulary(stage.output.model_json_schema(), words)
    return {part for w in words for part in re.split(r"[^A-Za-z]+", w) if part} | words


def identifiers() -> set[str]:
    """Everything a zh prompt may spell in Latin letters: schema vocabulary, check tags."""
    tags = {"schema", "json", "truncated"} | {c.name for stages in golden_stages().values() for s in stages
                                              for c in s.checks}
    return ALLOWED | schema_vocabulary() | {part for t in tags for part in t.split("_")}


def english_fragments(text: str, allowed: set[str]) -> list[str]:
    """Runs of Latin letters (two or more) that are not allowed identifiers."""
    return [w for w in re.findall(r"[A-Za-z]{2,}", text) if w not in allowed]


@pytest.mark.parametrize("path", sorted(GOLDENS), ids=lambda p: str(p.relative_to(HERE)))
def test_prompt_matches_its_golden_file(path):
    assert path.is_file(), f"{path} is missing: run `python -m tests.golden`"
    assert path.read_text(encoding="utf-8") == GOLDENS[path], (
        f"{path.relative_to(HERE)} differs from the template's rendering: review the change, "
        "then run `python -m tests.golden` and commit the diff")


def test_every_stage_has_a_golden_prompt_in_every_language():
    for group, stages in golden_stages().items():
        for stage in stages:
            for language in LANGUAGES:
                assert golden_file(group, stage.name, language) in GOLDENS
    on_disk = {p for p in HERE.rglob("*.txt")}
    assert on_disk == set(GOLDENS), f"stale golden files: {sorted(on_disk - set(GOLDENS))}"


@pytest.mark.parametrize("path", sorted(p for p in GOLDENS if p.name.endswith(".zh.txt")),
                         ids=lambda p: str(p.relative_to(HERE)))
def test_no_english_in_a_chinese_prompt(path):
    allowed = identifiers()
    text = GOLDENS[path].replace("### system", "").replace("### user", "")
    # The schema a json_object request carries is data, not wording.
    text = re.sub(r"<json-schema.*?</json-schema>", "", text, flags=re.S)
    assert english_fragments(text, allowed) == []


def test_the_scan_catches_english():
    allowed = ALLOWED | schema_vocabulary()
    assert english_fragments("请给出 `items`，日期格式 YYYY-MM-DD。", allowed) == []
    assert {"Write", "every", "English"} <= set(
        english_fragments("请给出 items. Write every text value in English.", allowed))
    assert english_fragments("日期 YYYY-MM-DD，类型 web_search", allowed) == []


def _shape(value: Any) -> Any:
    """What a stage's variables must hold: every dict's keys, down through lists' first items."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(value[0])] if value and isinstance(value[0], (dict, list)) else []
    return None


def _same_shape(fixture: Any, recorded: Any, where: str) -> list[str]:
    if isinstance(recorded, dict) and isinstance(fixture, dict):
        problems = [f"{where}: the fixture lacks {sorted(set(recorded) - set(fixture))}"] if set(recorded) - set(
            fixture) else []
        problems += [f"{where}: the chain sends no {sorted(set(fixture) - set(recorded))}"] if set(fixture) - set(
            recorded) else []
        return problems + [p for k in set(recorded) & set(fixture)
                           for p in _same_shape(fixture[k], recorded[k], f"{where}.{k}")]
    if isinstance(recorded, list) and isinstance(fixture, list) and recorded and fixture:
        return _same_shape(fixture[0], recorded[0], f"{where}[0]")
    return []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("recipe", [g for g in golden_stages() if g != "emotions"])
def test_the_fixtures_give_each_chain_stage_the_variables_the_chain_gives_it(recipe, language):
    from memsynth.generation.registry import recipe_class
    from tests.golden import recorded_variables
    from tests.golden.fixtures import variables

    recorded = recorded_variables(recipe, language)
    fixture = variables(recipe, language)
    problems = [p for stage in recipe_class(recipe).stages
                for p in _same_shape(_shape(fixture[stage.name]), _shape(recorded[stage.name]), stage.name)]
    assert problems == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_fixtures_give_each_evaluation_stage_the_variables_it_is_sent(language):
    from memsynth.generation.registry import recipe_class
    from tests.golden import recorded_evaluation_variables
    from tests.golden.fixtures import variables

    recorded = recorded_evaluation_variables(language)
    assert set(recorded) == {(g, s.name) for g, stages in golden_stages().items() for s in stages
                             if g == "emotions" or s not in recipe_class(g).stages}
    problems = [p for (group, stage), sent in recorded.items()
                for p in _same_shape(_shape(variables(group, language)[stage]), _shape(sent), f"{group}.{stage}")]
    assert problems == []
