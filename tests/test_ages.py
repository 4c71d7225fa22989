"""A persona's stated age against its band (issue 51: "roughly the age"; held-out answers made a
30-34 persona 37 and 三十六岁): memsynth.quality.textrules.ages and enpmr's age_in_band."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.enpmr.form_checks import age_in_band
from memsynth.quality.textrules.ages import band, restate_ages, stated_ages, without_ages
from schemas.enpmr import PersonaDescription

READ = [
    ("Claire Whitworth, 37, is a rehabilitation therapist in Salford.", [(37, 37)]),
    ("Megan Doyle is a 32-year-old therapist.", [(32, 32)]),
    ("A nurse in her late thirties.", [(36, 39)]),
    ("Now in his early 40s, he coaches on Sundays.", [(40, 43)]),
    ("She turned 40 last spring.", [(40, 40)]),
    ("何静今年三十六岁，在成都做康复治疗师。", [(36, 36)]),
    ("林悦，32岁，成都人。", [(32, 32)]),
    ("一位三十多岁的护士。", [(31, 39)]),
    ("他年近五十，仍在跑马拉松。", [(47, 49)]),
    ("年龄在30-34岁之间。", [(30, 34)]),
    # No age: numbers of other things, and decades that are not ages.
    ("She loves 80s music and swims 20 lengths at 6 am.", []),
    ("她每周游1000米，坚持了5年。", []),
]


@pytest.mark.parametrize(("text", "ages"), READ)
def test_stated_ages_reads_each_form_of_an_age_and_nothing_else(text, ages):
    assert stated_ages(text) == ages


def _check(description: str, age_band: str = "30-34", language: str = "en") -> list[str]:
    return list(age_in_band.fn(PersonaDescription.model_construct(description=description), {"age_band": age_band,
                                                                              "language": language}))


@pytest.mark.parametrize(("description", "language"), [
    ("Claire Whitworth, 37, is a rehabilitation therapist in Salford. She cares for her father.", "en"),
    ("She is a physio in her late thirties who lives in Leeds. She dreams of a smaller caseload.", "en"),
    ("何静今年三十六岁，在成都一家区医院做治疗师。她盼着母亲早日康复。", "zh"),
    # a year past the band: the held-out writers label it a mistake (r5, r8)
    ("She is 35 and a physio in Leeds.", "en"),
    ("周晓岚今年35岁，在成都做康复治疗师。", "zh"),
    ("At 37, Megan is a rehabilitation therapist on a stroke ward in Manchester.", "en"),  # held-out r10
])
def test_an_age_outside_the_band_is_rejected_in_the_answer_s_language(description, language):
    problems = _check(description, language=language)
    assert len(problems) == 1 and "30-34" in problems[0]
    assert ("年龄段" in problems[0]) == (language == "zh")


@pytest.mark.parametrize("description", [
    "Joanne Pritchard, 33, is a therapist in Manchester. She visits her parents most evenings.",
    "A 32-year-old nurse and mother of a 6-year-old, she lives in Leeds.",  # her child's age beside hers
    "She is a physio in her thirties who lives in Leeds.",  # roughly
    "周晓岚今年三十二岁，是成都的治疗师。",
])
def test_an_age_in_or_near_the_band_keeps_the_rule(description):
    assert _check(description) == []


def test_a_description_with_no_age_breaks_the_rule():
    """"Roughly the age" is asked: a description that states none (r13, r14, r16) is rejected."""
    problems = _check("She is a physio in Leeds who swims at dawn.")
    assert len(problems) == 1 and "never says how old" in problems[0]


def test_a_band_is_read_from_the_attributes():
    assert band("30-34") == (30, 34) and band(" 65–72 ") == (65, 72) and band("thirties") is None


@given(st.text(max_size=200))
def test_reading_any_text_never_fails_and_gives_ordered_ranges(text):
    for low, high in stated_ages(text):
        assert 0 <= low <= high <= 99
    restate_ages(text, 47)


@given(st.sampled_from([t for t, ages in READ if ages]), st.integers(min_value=20, max_value=79))
def test_restating_moves_every_age_into_the_new_one_s_decade(text, age):
    moved = stated_ages(restate_ages(text, age))
    assert moved and all(low // 10 == age // 10 or (low <= age <= high) for low, high in moved)


def test_an_acceptable_description_without_its_ages_states_none():
    """The `age_dropped` mutant (flows/enpmr/mutants.py) takes out every age a description states."""
    for text in ("Claire Whitworth, 37, is a nurse in Leeds.", "A physio in her early thirties, she swims at dawn.",
                 "周晓岚今年三十二岁，是成都的治疗师。", "她是成都的康复治疗师，三十出头，周末去游泳。"):
        left = without_ages(text)
        assert stated_ages(left) == [] and len(left) < len(text), (text, left)


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
def test_taking_ages_out_of_any_text_never_fails(text):
    assert isinstance(without_ages(text), str)
