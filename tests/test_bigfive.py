"""A profile's personality along all five Big Five dimensions (issue 51: held-out r3 and r4 each
dropped one, agreeableness and neuroticism, and the checks let both through):
memsynth.quality.textrules.bigfive and enpmr's big_five_covered."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flows.enpmr.form_checks import big_five_covered
from memsynth.quality.textrules.bigfive import DIMENSIONS, missing_dimensions
from schemas.enpmr import Profile
from tests.conftest import ROOT

CORPORA = [ROOT.parent / "shared" / "model-answers", *sorted((ROOT / "tests/data/heldout").glob("[ra]*/"))]


def _profiles(label: str) -> list[tuple[str, str, list[str]]]:
    """(id, language, personality) of every `label` enpmr profile answer of the corpora."""
    out = []
    for corpus in CORPORA:
        for path in sorted(corpus.glob("enpmr/*/profile.json")):
            data = json.loads(path.read_text(encoding="utf-8"))
            for answer in data["answers"]:
                value = answer.get("answer")
                value = json.loads(value) if isinstance(value, str) else value
                if answer.get("label") == label and isinstance(value, dict):
                    out.append((f"{corpus.name}/{answer['id']}", data["language"], value["personality"]))
    return out


ACCEPTABLE = _profiles("acceptable")


def _check(traits: list[str], language: str) -> list[str]:
    return list(big_five_covered.fn(Profile.model_construct(personality=traits), {"language": language}))


def test_the_corpora_give_acceptable_profiles_in_both_languages():
    assert {language for _, language, _ in ACCEPTABLE} == {"en", "zh"} and len(ACCEPTABLE) >= 8


@pytest.mark.parametrize(("name", "language", "traits"), ACCEPTABLE, ids=[a[0] for a in ACCEPTABLE])
def test_every_acceptable_profile_covers_the_five(name, language, traits):
    assert _check(traits, language) == []


# A profile may give a dimension two traits ("traits described along the Big Five dimensions"; a27
# wrote openness twice): the mutants drop one of a five-trait profile's.
FIVE = [a for a in ACCEPTABLE if len(a[2]) == 5]


@pytest.mark.parametrize("dropped", range(5))
@pytest.mark.parametrize(("name", "language", "traits"), FIVE, ids=[a[0] for a in FIVE])
def test_a_profile_without_one_of_its_traits_is_told_which_dimension_is_missing(name, language, traits, dropped):
    """The corpora's profiles give one trait a dimension, in the prompt's order: without the
    trait, the check names its dimension, in the answer's language."""
    problems = _check(traits[:dropped] + traits[dropped + 1:], language)
    assert len(problems) == 1
    if language == "en":
        assert DIMENSIONS[dropped] in problems[0]
    else:
        assert ("开放性", "尽责性", "外向性", "宜人性", "神经质")[dropped] in problems[0] and "大五人格" in problems[0]


@pytest.mark.parametrize(("traits", "language"), [
    (["curious and open-minded", "organised and reliable", "an introvert at heart", "kind to a fault",
      "emotionally stable under pressure"], "en"),
    (["Openness: high", "Conscientiousness: high", "Extraversion: low", "Agreeableness: medium", "Neuroticism: low"],
     "en"),
    (["好奇心强，爱尝试新事物", "做事严谨有条理", "性格内向", "随和，好说话", "情绪稳定，很少焦虑"], "zh"),
    (["Openness：喜欢新技术", "Conscientiousness：做事有计划", "外向性偏低", "宜人性高", "神经质中等"], "zh"),
])
def test_a_dimension_described_without_its_name_is_covered(traits, language):
    assert missing_dimensions(traits, language) == []


def test_three_traits_of_the_schema_minimum_are_told_the_two_they_miss():
    assert missing_dimensions(["curious about everything", "meticulous with paperwork", "outgoing at parties"],
                              "en") == ["agreeableness", "neuroticism"]


_TEXT = st.lists(st.one_of(st.text(st.characters(), max_size=12), st.sampled_from(
    ["开放", "内向", "Neuroticism", "ＯＰＥＮＮＥＳＳ", "😀", "\u202e", "\u0301", "\x00", "\ud800"])), max_size=6).map("".join)


@given(st.lists(_TEXT, max_size=6), st.lists(_TEXT, max_size=3), st.sampled_from(["en", "zh"]))
def test_more_text_never_uncovers_a_dimension_and_nothing_crashes(traits, more, language):
    """Any Unicode (CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates): an answer,
    never a crash; and a trait added never makes a covered dimension missing."""
    missing = missing_dimensions(traits, language)
    assert set(missing) <= set(DIMENSIONS)
    assert set(missing_dimensions(traits + more, language)) <= set(missing)
