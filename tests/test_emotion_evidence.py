"""Emotion scoring's `score.speaker_own_words`: a memory is scored on "the emotions {speaker}
expresses in it" (prompts/emotions/score[.zh].j2), so an analysis whose quoted evidence is the
other speaker's words is rejected. Held to what a strong model wrote: every acceptable score
passes, every held-out mistake labelled as scoring the other speaker is rejected."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.generation.emotions import EmotionScores, others_words, speaker_own_words
from tests.answer_sets import MODEL_ANSWERS, stage_answers

CORPUS = MODEL_ANSWERS / "emotions"


def _answers():
    for where, data, answer in stage_answers("emotions", "score"):
        yield where, data["variables"], answer


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_scores_pass_and_scores_of_the_other_speaker_fail():
    labelled = []
    for where, variables, answer in _answers():
        try:
            out = EmotionScores.model_validate(answer["answer"])
        except ValueError:
            assert answer["label"] == "violation"
            continue
        found = list(speaker_own_words(out, variables))
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif "Melanie's" in answer["rule"] or "not from anything Caroline" in answer["rule"]:
            labelled.append(f"{where}/{answer['id']}")
            assert found, (where, answer["id"], answer["rule"])
    assert len(labelled) >= 5, labelled


def _memory(language: str) -> dict:
    if language == "zh":
        return {"language": "zh", "kind": "memory", "speaker": "陈静",
                "text": "陈静：我昨天去了互助小组，感觉特别有力量。\n许磊：哇，太棒了！发生了什么？\n陈静：大家的故事让我很感动。"}
    return {"language": "en", "kind": "memory", "speaker": "Caroline",
            "text": "Caroline: I went to a support group yesterday.\nMelanie: Wow, that's cool!\nCaroline: It was so powerful."}


def test_the_other_speaker_s_words_are_named_in_the_build_s_language_and_own_words_pass():
    zh = _memory("zh")
    out = EmotionScores.model_validate({"scores": [
        {"dim": e, "analysis": "许磊那句“哇，太棒了”说明她很惊喜。" if e == "surprise" else "她说“很感动”。", "score": 3}
        for e in ("joy", "acceptance", "fear", "surprise", "sadness", "disgust", "anger", "anticipation")]})
    found = list(speaker_own_words(out, zh))
    assert len(found) == 1 and "哇，太棒了" in found[0] and "只按陈静自己表达" in found[0], found
    assert others_words(_memory("en"), 'She calls it "so powerful".') == []
    assert others_words(_memory("en"), 'Her "Wow, that\'s cool!" is surprise.') == ["wow, that's cool"]
    # a straight-quoted span with an apostrophe inside (held-out r19)
    assert others_words(_memory("en"), "Her words, echoed by Melanie's 'Wow, that's cool', show joy.") == [
        "wow, that's cool"]
    # The other's words as what the speaker takes in or answers are her own reaction (held-out
    # r12's acceptable "领了许磊“先养好”的好意"); offered as the feeling itself, they are not.
    assert others_words(zh, "她领了许磊“哇，太棒了”的好意，心里踏实。") == []
    assert others_words(_memory("en"), 'She thanks Melanie for her "Wow, that\'s cool" and goes on.') == []
    assert others_words(_memory("en"), 'Melanie\'s "Wow, that\'s cool" is surprise; she accepts it.') == ["wow, that's cool"]
    # the question her feeling answers (a31); asking it herself is no answer
    assert others_words(_memory("en"), "Asked 'Wow, that's cool', she lays out her plans with eagerness.") == []
    assert others_words(zh, "被问到“哇，太棒了”，她马上说起计划。") == []
    assert others_words(_memory("en"), "Melanie asked 'Wow, that's cool' and it was surprise.") == ["wow, that's cool"]
    # A query is what the speaker alone said so far: no other speaker to quote.
    assert others_words({**_memory("en"), "kind": "query"}, 'Her "Wow" is surprise.') == []


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["陈静", "：", ":", "\n", "“", "”", "\"", "哇", "ｗｏｗ", "🙂", "\u202e", "\u0301", "\x00", "\ud800"])
_TEXT = st.lists(_PIECE, max_size=12).map("".join)


@settings(max_examples=200, deadline=None)
@given(speaker=_TEXT, text=_TEXT, analysis=_TEXT)
def test_any_unicode_is_read_without_failing(speaker, text, analysis):
    """Names, lines and analyses in any Unicode (CJK, full-width colons, emoji, RTL, NUL, lone
    surrogates, stray quotes): a list of spans, each quoted in the analysis, never a crash."""
    found = others_words({"kind": "memory", "speaker": speaker, "text": text}, analysis)
    assert all(isinstance(f, str) and len(f) >= 2 for f in found)
