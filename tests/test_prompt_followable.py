"""Prompts a careful model can follow (issue 51, item 7), asserted on every rendered prompt:
each judge flag says which of its values is the failure, and a score rule names its flags;
every system prompt holds the language line; a memory's date line states the theme's start
as its bound; a relationship memory's session may name its person; every top-level key of a
stage's answer is named in its prompt."""

from __future__ import annotations

import itertools
import re
from typing import Any

import pytest
from pydantic import BaseModel

from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.stage import localized
from tests.golden import LANGUAGES, golden_stages, render
from tests.golden.fixtures import variables as fixture_variables

STAGES = [(group, stage) for group, stages in golden_stages().items() for stage in stages]
POLARITY = {"en": {True: "(true is a failure)", False: "(false is a failure)"},
            "zh": {True: "（为 true 即不合格）", False: "（为 false 即不合格）"}}


def prompt(group: str, stage: Any, language: str, **override: Any) -> list[dict[str, str]]:
    return PromptLibrary().render(stage.template_for(language), {**fixture_variables(group, language)[stage.name],
                                                                  **override})


def bool_fields(model: type[BaseModel]) -> list[str]:
    """The model's bool fields, and those of the models its lists hold (one level down)."""
    out = []
    for name, field in model.model_fields.items():
        if field.annotation is bool:
            out.append(name)
        for arg in getattr(field.annotation, "__args__", ()):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                out += bool_fields(arg)
    return out


def failing_values() -> dict[str, dict[str, bool]]:
    """Judge stage -> flag -> the value its check or verdict treats as the failure: found by
    trying every assignment, the one that draws no complaint being all-good."""
    from flows.enpmr import checks as enpmr
    from flows.pal import judges
    from schemas.enpmr import Faithfulness, ScenarioCheck
    from schemas.pal import PreferencesReview, RequirementsReview, SolutionPreferencesReview

    def scored(model, check):
        return lambda flags: list(check(model.model_construct(**flags, score=5, reason="r"), {}))

    judged = {
        "faithfulness": (["grounded_in_target", "uses_negatives", "user_reveals_target", "recalled_early"],
                         scored(Faithfulness, enpmr.faithfulness_score_agrees)),
        "scenario_consistency": (["fits_target", "expresses_need", "fits_a_negative"],
                                 scored(ScenarioCheck, enpmr.scenario_score_agrees)),
        "preferences_review": (["personal"], lambda f: list(judges.generic_preferences(
            PreferencesReview.model_validate({"items": [{"requirement_id": "work-1", "reason": "r", **f}]}), {}))),
        "requirements_review": (["needs_on_topic"], lambda f: list(judges.needs_off_topic(
            RequirementsReview.model_validate({"topics": [{"requirement_id": "work-1", "reason": "r", **f}]}), {}))),
        "solution_preferences_review": (["liked_fit", "disliked_clash"], lambda f: list(
            judges.choices_against_preferences(SolutionPreferencesReview.model_validate({"reason": "r", **f}), {}))),
    }
    out = {}
    for stage, (flags, complaints) in judged.items():
        good = [dict(zip(flags, values, strict=True)) for values in itertools.product([True, False], repeat=len(flags))
                if not complaints(dict(zip(flags, values, strict=True)))]
        assert len(good) == 1, f"{stage}: no single assignment passes"
        out[stage] = {flag: not value for flag, value in good[0].items()}
    # longmem's grade is the benchmark's verdict, not a flag a check reads: false is a wrong answer.
    out["eval_judge"] = {"correct": False}
    return out


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_judge_flag_says_which_value_fails_and_the_score_rule_names_each(language):
    failing = failing_values()
    judges = [(g, s) for g, s in STAGES if s.kind == "judge" and bool_fields(s.output)]
    assert {s.name for _, s in judges} == set(failing), "a judge with flags the test cannot derive the polarity of"
    for group, stage in judges:
        text = "\n".join(m["content"] for m in prompt(group, stage, language))
        for flag in bool_fields(stage.output):
            line = next(line for line in text.splitlines() if re.match(rf"- {flag}[:：]", line))
            assert POLARITY[language][failing[stage.name][flag]] in line, f"{stage.name}.{flag}: {line}"
            assert POLARITY[language][not failing[stage.name][flag]] not in line
        score = [line for line in text.splitlines() if re.match(r"- score[:：]", line)]
        for line in score:  # a score rule names every flag it depends on, with its failing value
            for flag in bool_fields(stage.output):
                value = "true" if failing[stage.name][flag] else "false"
                assert re.search(rf"{flag}[^;；]*?{value}", line), (flag, line)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("group", "stage"), STAGES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_every_system_prompt_holds_the_language_line(group, stage, language):
    line = PromptLibrary().render_text(localized("_language.j2", language), {})
    messages = prompt(group, stage, language)
    assert messages[0]["role"] == "system"
    assert line in messages[0]["content"]


def _named(text: str, key: str) -> bool:
    """`key` in backticks, or as the field of a bullet ("- key:")."""
    return f"`{key}`" in text or re.search(rf"(^|\n)- {re.escape(key)}[:：]", text) is not None


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize(("group", "stage"), STAGES, ids=lambda x: x if isinstance(x, str) else x.name)
def test_every_top_level_key_of_the_answer_is_named_in_the_prompt(group, stage, language):
    modes = [{"mode": m} for m in ("base", "cot", "golden")] if stage.name == "eval_respond" and group == "enpmr" \
        else [{}]
    for override in modes:
        text = render(prompt(group, stage, language, **override))
        missing = [k for k in stage.output.model_fields if not _named(text, k)]
        assert missing == [], f"{stage.qualified_name} {override}: the prompt never names {missing}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_memory_date_is_bounded_by_the_theme_start_in_its_own_line(language):
    """The date line itself says the bound, so 'when this person became important' cannot be
    read as a date before the theme (the check dates_in_theme rejects one)."""
    bound = {"en": "no earlier than the theme's start", "zh": "不早于主题的开始日期"}[language]
    for group, stage in STAGES:
        if "dates_in_theme" in {c.name for c in stage.checks}:
            text = render(prompt(group, stage, language))
            date_line = next(line for line in text.splitlines() if re.match(r"- date[:：]", line))
            assert bound in date_line, f"{stage.name}: {date_line}"


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_relationship_session_may_name_its_person_and_the_check_agrees(language):
    from flows.enpmr import checks as enpmr
    from flows.enpmr.stages import MEMORY_SESSION
    from schemas.enpmr import MemorySession

    said = {"en": "the user names them as anyone would", "zh": "用户可以像平常一样叫出这个名字"}[language]
    assert said in render(prompt("enpmr", MEMORY_SESSION, language, category="relationship"))
    assert said not in render(prompt("enpmr", MEMORY_SESSION, language, category="goal"))
    name = {"en": "Margaret Anne de la Cruz Okafor", "zh": "玛格丽特·安妮·奥卡福"}[language]
    line = {"en": f"I had coffee with {name} today, she was kind.", "zh": f"今天和{name}喝了咖啡，她人真好。"}[language]
    turns = [{"role": "user" if i % 2 == 0 else "ai", "content": line if i == 0 else "ok"} for i in range(10)]
    session = MemorySession(turns=turns)
    v = {"language": language, "memory": {"name": name, "details": "d", "date": "2024-01-01"}}
    assert not list(enpmr.does_not_recite_title(session, {**v, "category": "relationship"}))
    assert list(enpmr.does_not_recite_title(session, {**v, "category": "goal"}))  # a title quoted is still one
