"""enpmr `eval_respond.draws_on_its_memory`: "bring in the one memory that is most relevant here"
and "put its number in `memory`" (eval_respond[.zh].j2), held to what a strong model wrote: every
acceptable turn passes, every held-out turn labelled with a second memory or a wrong number is
rejected, and so are mutants of the acceptable turns that make either mistake."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.overlap_checks import draws_on_its_memory
from memsynth.quality.textrules.meaning import own_units_held
from schemas.enpmr import SupportReply
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
# The labels' quotes of the two prompt lines: a second memory (said to be brought in beside the
# first: a label that quotes the line for a less relevant choice is the judge's), a wrong number.
SECOND = ("the one memory", "只选一段", "那一段记忆")
BESIDE = ("also", "alongside", "mixing", "draws on two", "两段", "之外", "又")
NUMBER = ("Put its number", "把记忆的编号写进")


def _problems(answer: dict, variables: dict) -> list[str]:
    return list(draws_on_its_memory(SupportReply.model_validate(answer), variables))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_turns_pass_and_labelled_second_memories_and_wrong_numbers_fail():
    labelled = []
    for where, data, answer in stage_answers("enpmr", "eval_respond"):
        numbers = {m["number"] for m in data["variables"]["memories"]}
        if answer["label"] == "acceptable":
            assert _problems(answer["answer"], data["variables"]) == [], (where, answer["id"])
        elif (label_says(answer["rule"], NUMBER) or label_says(answer["rule"], SECOND)
              and label_says(answer["rule"], BESIDE)) and answer["answer"]["memory"] in numbers:
            labelled.append(f"{where}/{answer['id']}")
            assert _problems(answer["answer"], data["variables"]), (where, answer["id"], answer["rule"])
    assert len(labelled) >= 12, labelled


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_a_neighbouring_number_or_a_second_memory_in_an_acceptable_turn_is_rejected():
    """Every neighbouring number; a second memory's account at least 95 % of the time (a one-line
    account of few words of its own, "Carol watched the video and changed only one hand
    position", is the judge's to see)."""
    made, missed = 0, []
    for where, data, answer in stage_answers("enpmr", "eval_respond"):
        v = data["variables"]
        if answer["label"] != "acceptable" or len(v["memories"]) < 2:
            continue
        named = answer["answer"]["memory"]
        for other in (m for m in v["memories"] if abs(m["number"] - named) == 1):
            made += 1
            assert _problems({**answer["answer"], "memory": other["number"]}, v), (where, answer["id"], other)
        for other in v["memories"]:
            if other["number"] == named:
                continue
            account = other["text"].split("：" if v["language"] == "zh" else ": ", 1)[-1]
            made += 1
            reply = f"{answer['answer']['response']} {account}"
            if not _problems({**answer["answer"], "response": reply}, v):
                missed.append((where, answer["id"], other["number"]))
    assert made >= 200 and len(missed) <= 0.05 * made, (made, missed)


def test_the_repair_message_says_which_memory_in_the_build_s_language():
    memories = [{"number": 1, "date": "2023-05-02", "text": "在“进修”期间，用户擅长“镜像疗法”：设计每组四人的镜像疗法小组课。"},
                {"number": 2, "date": "2023-06-10", "text": "在“进修”期间的高光时刻“陈大爷走到病房门口”：陈大爷扶着助行器走到了病房门口，他女儿送来锦旗。"}]
    v = {"language": "zh", "memories": memories, "history": [{"role": "user", "content": "我今天被家属当众质疑了。"}]}
    found = _problems({"memory": 1, "response": "还记得陈大爷吗？他扶着助行器走到了病房门口，女儿还送来锦旗。"}, v)
    assert len(found) == 1 and "第 2 条" in found[0] and "第 1 条" in found[0], found
    assert _problems({"memory": 2, "response": "还记得陈大爷吗？他扶着助行器走到了病房门口，女儿还送来锦旗。"}, v) == []


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["陈大爷", "ｗａｌｋｅｄ", "🙂", "\u202e", "\u0301", "\x00", "\ud800", " ", "Bennett", "锦旗"])
_TEXT = st.lists(_PIECE, max_size=6).map("".join)


@settings(max_examples=150, deadline=None)
@given(sources=st.lists(_TEXT, max_size=6), text=_TEXT, known=_TEXT)
def test_any_unicode_is_read_without_failing(sources, text, known):
    """CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates: counts, never a crash;
    a text that is one source word for word holds all of that source's own units the context lacks."""
    held = own_units_held(sources, text, known)
    assert len(held) == len(sources) and all(h >= 0 for h in held)
    if sources:
        alone = own_units_held(sources, sources[0])
        assert alone[0] >= max(alone[1:], default=0) or len(set(sources)) < len(sources), (sources, alone)
