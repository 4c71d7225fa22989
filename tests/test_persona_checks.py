"""A profile keeps the numbers its persona gives: the age, and a weekly routine's count."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.persona_checks import keeps_persona_age, keeps_persona_routines
from memsynth.quality.textrules.frequency import weekly_counts
from schemas.enpmr import Profile

PERSONA_EN = ("Megan Doyle is a 32-year-old stroke physiotherapist in Manchester. She swims at the local baths "
              "twice a week before work and cooks a big Sunday dinner for her parents.")
PERSONA_ZH = "周晓岚今年32岁，在成都当康复治疗师。她每周挤出两个早上去游泳馆游一千米，周末常做一桌川菜。"


def _profile(age: int = 32, habits: list[str] | None = None) -> Profile:
    return Profile.model_construct(age=age, habits=habits or [], social=[], emotional_pattern=[], goals=[],
                                   communication_style=[], preferences=[])


def _problems(check, profile: Profile, persona: str) -> list[str]:
    return list(check.fn(profile, {"persona": persona, "language": "zh" if "岁" in persona else "en"}))


@pytest.mark.parametrize(("text", "times"), [
    ("每周挤出两个早上去游泳馆", [2]), ("每周一、三、五早上去游泳馆", [3]), ("周二和周五下班去打球", [2]),
    ("每周去三趟菜市场", [3]), ("周一到周五上班", []), ("和老周一起游泳", []),
    ("swims twice a week", [2]), ("on Tuesdays and Fridays", [2]), ("three mornings a week", [3]),
    ("walks her father twice round the block", []),
])
def test_weekly_counts(text, times):
    assert [c.times for c in weekly_counts(text)] == times


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_weekly_counts_take_any_text(text):
    for count in weekly_counts(text):
        assert 1 <= count.times <= 7 and count.said in text


@pytest.mark.parametrize(("persona", "habit", "ok"), [
    (PERSONA_EN, "Swims 1,000 m at the local baths at 6:30 on Tuesdays and Fridays", True),
    (PERSONA_EN, "Swims at the local baths three times a week", False),
    (PERSONA_EN, "Goes to the gym three times a week", True),  # another routine
    (PERSONA_ZH, "每周二、周五早上6:30去游泳馆游1000米", True),
    (PERSONA_ZH, "每周一、三、五早上六点半去游泳馆游一千米", False),  # held-out r26, r27
    (PERSONA_ZH, "每周三次早上上班前去游泳", False),
    (PERSONA_ZH, "每周三次晚上去练瑜伽", True),
])
def test_a_weekly_routine_keeps_the_persona_count(persona, habit, ok):
    problems = _problems(keeps_persona_routines, _profile(habits=[habit]), persona)
    assert (problems == []) is ok, problems
    if not ok:
        assert ("人物设定" in problems[0]) == ("岁" in persona)


@pytest.mark.parametrize(("persona", "age", "ok"), [
    (PERSONA_EN, 32, True), (PERSONA_EN, 44, False), (PERSONA_ZH, 32, True), (PERSONA_ZH, 35, False),
    ("Megan is in her early thirties and lives in Manchester.", 32, True),
    ("Megan is in her early thirties and lives in Manchester.", 38, False),
    # a parent's age beside hers: no single age, the judge's reading
    ("Megan, 32, looks after her father, 68, in Manchester.", 44, True),
    ("Megan looks after her father in Manchester.", 44, True),
])
def test_the_profile_keeps_the_persona_age(persona, age, ok):
    problems = _problems(keeps_persona_age, _profile(age=age), persona)
    assert (problems == []) is ok, problems
