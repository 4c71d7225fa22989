"""pal `timeline.months_span_aspects`: "not every month need touch all four, but not only one"
(timeline[.zh].j2), held to what a strong model wrote: every acceptable timeline passes, every
held-out month labelled as telling one part of life is rejected, and so is an acceptable month cut
to its sentences of work."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.pal.mutants import _work_only
from flows.pal.prose_checks import months_span_aspects
from memsynth.quality.textrules.aspects import ASPECTS, aspects_of
from schemas.pal import Timeline
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "pal"
RULE = ("不能只写一个方面", "not only one", "只写了一个方面")


def _problems(answer: dict, variables: dict) -> list[str]:
    return list(months_span_aspects(Timeline.model_validate(answer), variables))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_timelines_pass_and_a_month_of_one_part_of_life_fails():
    labelled = []
    for where, data, answer in stage_answers("pal", "timeline"):
        if answer["label"] == "acceptable":
            assert _problems(answer["answer"], data["variables"]) == [], (where, answer["id"])
        elif label_says(answer["rule"], RULE):
            labelled.append(f"{where}/{answer['id']}")
            assert _problems(answer["answer"], data["variables"]), (where, answer["id"], answer["rule"])
    assert len(labelled) >= 6, labelled


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_an_acceptable_month_cut_to_its_work_is_rejected_in_the_build_s_language():
    made = 0
    for where, data, answer in stage_answers("pal", "timeline"):
        if answer["label"] != "acceptable":
            continue
        months = _work_only(answer["answer"], data["variables"])
        if months == answer["answer"]["months"]:
            continue  # its last month has no two sentences of work alone
        made += 1
        found = _problems({"months": months}, data["variables"])
        assert found, (where, answer["id"])
        assert ("只写了一个方面" in found[0]) == (data["variables"]["language"] == "zh")
    assert made >= 5


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    ["周末陪家人散步", "ＷＯＲＫ and family", "\u202e加班\u202c", "\ud800医院", "gym\x00"]))
def test_aspects_are_read_from_any_text(text):
    """CJK, full-width, emoji, RTL, NUL, lone surrogates: a list of known aspects, never a crash."""
    found = aspects_of(text)
    assert set(found) <= set(ASPECTS) and found == [a for a in ASPECTS if a in found]


@pytest.mark.parametrize(("family_members", "names"), [
    ("用户和丈夫陈磊、9岁的儿子乐乐住在一起，陈磊是急救中心的医生。", ["陈磊", "乐乐"]),
    ("用户和妻子育有一个八岁的女儿，妻子是小学语文老师。他的父亲和母亲一起住在盐城老家。", []),
    ("The user lives with her husband Dan, a paramedic, and their son Leo.", ["Dan", "Leo"]),
])
def test_a_profile_s_family_are_named_as_it_names_them(family_members, names):
    from memsynth.quality.textrules.aspects import family_names

    assert family_names(family_members) == names


def test_a_month_that_names_the_family_by_name_tells_of_family():
    month = "用户监考了三天，还有120份卷子要改。陈磊这个月大多上夜班，接送乐乐几乎都落在用户身上。"
    assert aspects_of(month) == ["work", "family"]  # 接送 is family's
    assert aspects_of("用户监考了三天，还有120份卷子要改。陈磊这个月大多上夜班。", ["陈磊"]) == ["work", "family"]


_NAMES_TEXT = st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=8) | st.sampled_from(
    ["丈夫陈磊", "儿子乐乐", "husband Dan", "妻子是", "Ｄａｎ", "🙂", "\u202e", "\ud800", "\x00", "9岁的"]),
    max_size=8).map("".join)


@settings(max_examples=200, deadline=None)
@given(_NAMES_TEXT, _NAMES_TEXT)
def test_family_names_and_the_month_reader_take_any_text(family_members, month):
    """A profile's names are read from any text, never a crash; a month naming one tells of family."""
    from memsynth.quality.textrules.aspects import family_names

    names = family_names(family_members)
    assert all(n and n in family_members for n in names)
    if names:
        assert "family" in aspects_of(f"{month}{names[0]}", names)
