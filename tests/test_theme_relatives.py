"""enpmr `life_themes.one_theme_per_relative`: "so that they overlap as little as possible"
(life_themes[.zh].j2), held to what a strong model wrote: every acceptable list passes, every
held-out list labelled with two themes of one relative's story is rejected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.form_checks import one_theme_per_relative
from memsynth.quality.textrules.people import KIN_EN, KIN_ZH, kin_named
from schemas.enpmr import LifeTheme, LifeThemes
from tests.answer_sets import MODEL_ANSWERS, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
RULE = ("overlap as little as possible", "尽量少重叠")


def _problems(answer: dict, variables: dict) -> list[str]:
    # Built without the list's length bound (the schema's own check): two themes show the rule.
    themes = [LifeTheme.model_validate(t) for t in answer["themes"]]
    return list(one_theme_per_relative(LifeThemes.model_construct(themes=themes), variables))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_lists_pass_and_one_relative_told_twice_fails():
    labelled, relatives = [], 0
    for where, data, answer in stage_answers("enpmr", "life_themes"):
        try:
            found = _problems(answer["answer"], data["variables"])
        except ValueError:  # the schema rejects it first
            assert answer["label"] == "violation"
            continue
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif any(r in answer["rule"] for r in RULE):
            labelled.append(f"{where}/{answer['id']}")
            titles = [t["theme"] for t in answer["answer"]["themes"]]
            kin = [k for t in titles for k in kin_named(t)]
            if len(kin) != len(set(kin)):
                relatives += 1
                assert found, (where, answer["id"])
    assert len(labelled) >= 12 and relatives >= 11, (labelled, relatives)


@pytest.mark.parametrize(("titles", "language", "ok"), [
    (["Dad's hip replacement", "Caring for Dad after his operation"], "en", False),
    (["Dad's hip replacement", "Monthly curry nights with Priya"], "en", True),
    (["Mother-in-law moves in", "Learning to swim"], "en", True),
    (["父亲髋部骨折后的照护", "陪父亲做术后康复训练"], "zh", False),
    (["父亲髋部骨折后的照护", "和姑娘们的周末徒步"], "zh", True),  # 娘 of 姑娘 is no mother
    (["妈妈学会用智能手机", "母亲的退休生活"], "zh", False),
])
def test_two_titles_of_one_relative_are_one_theme(titles, language, ok):
    themes = [{"theme": t, "description": "它很重要。" if language == "zh" else "It mattered.", "start_date": "2021-01-01"}
              for t in titles]
    found = _problems({"themes": themes}, {"language": language})
    assert (found == []) is ok, found
    if not ok:
        assert ("同一位亲人" in found[0]) == (language == "zh")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=30) | st.sampled_from(
    ["Ｄａｄ", "爸🙂妈", "\u202eDad", "\ud800父亲", "mum\x00", "Mother-in-law's garden"]))
def test_kin_named_reads_any_text(text):
    """CJK, full-width, emoji, RTL, NUL, lone surrogates: indexes of a kin group, never a crash."""
    groups = KIN_ZH if any("\u4e00" <= c <= "\u9fff" for c in text) else KIN_EN
    assert all(0 <= k < len(groups) for k in kin_named(text))
