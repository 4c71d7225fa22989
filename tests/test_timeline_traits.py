"""pal `timeline.no_traits`: a month reports events, "not the user's personality or preferences"
(timeline[.zh].j2), held to what a strong model wrote: every acceptable timeline passes, and every
timeline labelled with that line's personality clause is rejected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.pal.prose_checks import no_traits
from memsynth.quality.textrules.forms import traits
from schemas.pal import Timeline
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "pal"
LABEL = ("性格", "personality")


def _answers():
    for where, data, answer in stage_answers("pal", "timeline"):
        yield where, data["language"], answer


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_timelines_pass_and_labelled_character_fails():
    labelled = []
    for where, language, answer in _answers():
        try:
            out = Timeline.model_validate(answer["answer"])
        except ValueError:
            assert answer["label"] == "violation"
            continue
        found = list(no_traits(out, {"language": language}))
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif label_says(answer["rule"], LABEL):
            labelled.append(f"{where}/{answer['id']}")
            assert found, (where, answer["id"], answer["rule"])
    assert len(labelled) >= 6, labelled


def test_traits_read_character_not_events_nor_quotes():
    assert traits("用户做事向来一丝不苟，报告都要核对三遍。") == ["向来", "一丝不苟"]
    # held-out r9: the trait itself, with no word of "always"
    assert traits("用户做事一丝不苟又容易紧张，不愿意让同事帮忙看报告。") == ["一丝不苟", "容易紧张"]
    assert traits("A perfectionist, the user rewrote the report twice.") == ["perfectionist"]
    assert traits("用户把注意力转向内部审核，对外向客户解释了延期。") == []  # 转向内部, 对外向客户: not traits
    assert traits("By nature the user keeps to herself.") == ["By nature"]
    assert traits("The user has always been careful with money.") == ["has always been"]
    assert traits("用户的父亲住院了，用户请了三天假。周末用户带女儿去爬山。") == []
    assert traits("经理说：“你这个人脾气太急。”用户没有回话。") == []  # a colleague's words, quoted
    assert traits("The user always takes the 7:40 tram and met a client on Tuesday.") == []
    # held-out r14: how the user goes about things or with people, with no trait noun or "always"
    assert traits("用户平时不善言辞，做事又追求稳妥，这个月多是一个人加班。") == ["不善言辞", "做事又追求"]
    assert traits("用户待人随和，办事也利落。") == ["待人随和", "办事也利落"]
    assert traits("The user tends to be cautious with new suppliers.") == ["tends to be"]
    assert traits("用户周末回老家帮父母做事，又申请了个性化的康复方案。") == []  # 做事 with no manner; 个性化
    # held-out r18: a liking held all along; a liking of this month's is an event
    assert traits("用户本就不喜欢人多热闹的场合，聚餐时大多坐在角落里。") == ["本就不喜欢"]
    assert traits("The user had never liked crowded parties.") == ["had never liked"]
    assert traits("女儿这个月喜欢上了合唱，用户陪她去了两次排练。") == []


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["向来", "性格", "ｂｙ ｎａｔｕｒｅ", "🙂", "\u202e", "\u0301", "\x00", "\ud800", "“", "”", "by nature", "\""])


@settings(max_examples=200, deadline=None)
@given(pieces=st.lists(_PIECE, max_size=10))
def test_any_unicode_is_read_without_failing(pieces):
    """CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates, stray quotes: a list of
    trait words each found in the text, never a crash; a trait word put outside any quote is found."""
    text = "".join(pieces)
    assert all(t in text for t in traits(text))
    if "“" not in text and "\"" not in text and "”" not in text:
        assert "向来" in traits(f"{text}。用户向来如此。")
