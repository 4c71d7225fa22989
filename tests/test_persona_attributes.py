"""enpmr persona `age_in_band` and `names_the_region`: "roughly the age, where they live"
(persona[.zh].j2), held to what a strong model wrote: every acceptable description passes, every
held-out one labelled with a dropped region or an age outside the band is rejected, and so is
every acceptable one with its region taken out."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.form_checks import age_in_band, names_the_region
from flows.enpmr.mutants import _without_region
from schemas.enpmr import PersonaDescription
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
# The labels' words for the two mistakes.
REGION = ("where they live", "where she lives", "居住地", "住在")
AGE = ("age band", "年龄段", "roughly the age", "大致年龄")


def _problems(description: str, variables: dict) -> list[str]:
    out = PersonaDescription.model_construct(description=description)
    return [*age_in_band(out, variables), *names_the_region(out, variables)]


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_descriptions_pass_and_labelled_ages_and_dropped_regions_fail():
    labelled = []
    for where, data, answer in stage_answers("enpmr", "persona"):
        description = answer["answer"]["description"]
        if answer["label"] == "acceptable":
            assert _problems(description, data["variables"]) == [], (where, answer["id"])
        elif label_says(answer["rule"], REGION + AGE) and "restate" not in answer["rule"] \
                and "罗列" not in answer["rule"]:
            labelled.append(f"{where}/{answer['id']}")
            assert _problems(description, data["variables"]), (where, answer["id"], answer["rule"])
    assert len(labelled) >= 12, labelled


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_an_acceptable_description_without_its_region_is_rejected_in_the_build_s_language():
    made = 0
    for where, data, answer in stage_answers("enpmr", "persona"):
        if answer["label"] != "acceptable":
            continue
        v = data["variables"]
        found = _problems(_without_region(answer["answer"], v), v)
        made += 1
        assert found and v["region"] in found[0], (where, answer["id"], found)
        assert ("没有写此人住在哪里" in found[0]) == (v["language"] == "zh"), found
    assert made >= 15


@pytest.mark.parametrize("region, description, named", [
    ("northern England", "A nurse in Leeds, England, aged 31.", True),
    ("the US Midwest", "She teaches in a small Midwest town.", True),
    ("the US Midwest", "She teaches in a small town.", False),
    ("Yorkshire", "A night-shift nurse in Leeds who sings in a church choir.", True),
    ("northern England", "A nurse who took up the choir in March and sings on Sundays.", False),
    ("成都", "她在成都市一家医院工作。", True),
    ("成都", "她在一家医院工作。", False),
])
def test_a_broad_english_region_is_named_by_a_word_of_it_or_a_place_in_it(region, description, named):
    v = {"language": "zh" if "成" in region else "en", "region": region, "age_band": "30-34"}
    assert (list(names_the_region(PersonaDescription.model_construct(description=description), v)) == []) == named


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["成都", "Ｍａｎｃｈｅｓｔｅｒ", "🙂", "\u202e", "\u0301", "\x00", "\ud800", " ", "England", "35岁", "aged 35"])
_TEXT = st.lists(_PIECE, max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(region=_TEXT, description=_TEXT, language=st.sampled_from(["en", "zh"]))
def test_any_unicode_is_read_without_failing(region, description, language):
    """CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates: a verdict, never a crash;
    a description that holds its region word for word names it."""
    v = {"language": language, "region": region, "age_band": "30-34"}
    _problems(description, v)
    assert list(names_the_region(PersonaDescription.model_construct(description=f"{description} {region}"), v)) == []


@pytest.mark.parametrize("language, description, stated", [
    ("en", "A night-shift nurse in Leeds who sings in a church choir.", False),
    ("en", "A night-shift nurse in Leeds in her late thirties who sings in a church choir.", True),
    ("zh", "一位在成都心内科上夜班的护士，周末在社区合唱团唱歌。", False),
    ("zh", "一位在成都心内科上夜班的护士，三十多岁，周末在社区合唱团唱歌。", True),
])
def test_a_description_must_say_roughly_how_old(language, description, stated):
    """"Roughly the age" (persona[.zh].j2): r13, r14 and r16 each wrote a description with none."""
    found = list(age_in_band(PersonaDescription.model_construct(description=description),
                             {"language": language, "age_band": "35-39"}))
    assert (found == []) == stated
    if not stated:
        assert "35-39" in found[0] and ("大致年龄" in found[0]) == (language == "zh")
