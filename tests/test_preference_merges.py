"""enpmr `preferences.one_preference_each`: "one per like or dislike" (preferences.j2), held to what
a strong model wrote: every acceptable list passes, every held-out mistake labelled with that
line is rejected, and two items of any acceptable list written as one are rejected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.form_checks import one_preference_each
from memsynth.quality.mutants import Context, Merged
from memsynth.quality.textrules.meaning import merged_sources
from schemas.enpmr import Preference, Preferences
from tests.answer_sets import MODEL_ANSWERS, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
RULE = ("one per like or dislike", "每条对应一项喜好或厌恶")


def _problems(answer: dict, variables: dict) -> list[str]:
    # Built without validation: a merge of a ten-item list has nine, which the schema alone rejects.
    out = Preferences.model_construct(items=[Preference.model_validate(i) for i in answer["items"]])
    return list(one_preference_each(out, variables))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_lists_pass_and_labelled_merges_fail():
    labelled = []
    for where, data, answer in stage_answers("enpmr", "preferences"):
        try:
            found = _problems(answer["answer"], data["variables"])
        except (KeyError, TypeError, ValueError):  # its items break the schema, which rejects them first
            assert answer["label"] == "violation", (where, answer["id"])
            continue
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif any(r in answer["rule"] for r in RULE) and ("merge" in answer["rule"] or "合并" in answer["rule"]):
            labelled.append(f"{where}/{answer['id']}")
            assert found, (where, answer["id"], answer["rule"])
    assert len(labelled) >= 10, labelled


# Merges the check lets through, found on a round written after it (the audit judge's): r11's pool
# "喜欢清晨人少的泳池" merged into "爱吃麻辣味", where the list's "偏爱蛙泳" item covers the pool
# preference as well as the merged one does, so neither source reads as taken by the merge.
MISSED = {("r11", "preferences-zh-a1", "items[3] merged into items[0]")}


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_any_two_items_of_an_acceptable_list_written_as_one_are_rejected():
    made = 0
    for where, data, answer in stage_answers("enpmr", "preferences"):
        if answer["label"] != "acceptable":
            continue
        ctx = Context("enpmr", "preferences", data["language"], data["variables"], answer["id"])
        for mutant in Merged("items", ("name", "description"))(answer["answer"], ctx):
            made += 1
            if (where, answer["id"], mutant.note) in MISSED:
                assert not _problems(mutant.answer, data["variables"])  # a mended check leaves this list
                continue
            assert _problems(mutant.answer, data["variables"]), (where, answer["id"], mutant.note)
    assert made >= 20


def test_the_repair_message_names_both_preferences_in_the_build_s_language():
    profile = {"preferences": ["爱吃麻辣味", "不吃香菜，闻到就头疼", "早上要喝热豆浆"]}
    items = [{"name": "爱吃麻辣、不吃香菜", "description": "无辣不欢；但香菜一点不碰，闻到就头疼。", "date": "2020-03-14"},
             {"name": "早上一杯热豆浆", "description": "每天早上都要喝一杯热豆浆。", "date": "2020-05-02"}]
    found = _problems({"items": items}, {"language": "zh", "profile": profile})
    assert len(found) == 1 and "爱吃麻辣味" in found[0] and "不吃香菜" in found[0] and "每条只写一项" in found[0], found
    items[0] = {"name": "爱吃麻辣", "description": "无辣不欢，回锅肉要用郫县豆瓣。", "date": "2020-03-14"}
    assert _problems({"items": items}, {"language": "zh", "profile": profile}) == []


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["香菜", "ｔｅａ", "🙂", "\u202e", "\u0301", "\x00", "\ud800", " ", "coriander", "Hates", "不吃"])
_TEXT = st.lists(_PIECE, max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(sources=st.lists(_TEXT, max_size=6), items=st.lists(_TEXT, max_size=6))
def test_any_unicode_is_read_without_failing(sources, items):
    """CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates: a verdict, never a crash;
    and an item that is two distinct sources side by side holds both."""
    for j, a, b in merged_sources(sources, items):
        assert 0 <= j < len(items) and 0 <= a < b < len(sources)
    if len(sources) >= 2:
        both = merged_sources(sources[:2], [f"{sources[0]} {sources[1]}"])
        from memsynth.quality.textrules.meaning import SAME_MEANING, _sentiment, meaning_units, similarity

        a, b = (meaning_units(s) - _sentiment() for s in sources[:2])
        joined = meaning_units(f"{sources[0]} {sources[1]}")
        # Chinese character pairs across the join are new pairs: only units kept whole are held.
        if a and b and a | b <= joined and similarity(a, b) < SAME_MEANING / 2:
            assert both == [(0, 0, 1)], (sources[:2], both)
