"""enpmr `support_dialogue.memory_turn_recalls_target`: "memory_turn: the 1-based index in `turns` of
that AI turn" (support_dialogue[.zh].j2), held to what a strong model wrote: every acceptable
memory turn passes, and so does no mutant that points memory_turn at an earlier AI turn, the
mistake of counting the AI's turns alone (turn 2 for the fourth), which every held-out round made."""

from __future__ import annotations

import pytest

from flows.enpmr.checks import memory_turn_recalls_target
from schemas.enpmr import DialogueTurn, SupportDialogue
from tests.answer_sets import MODEL_ANSWERS, stage_answers


def _problems(answer: dict, variables: dict) -> list[str]:
    return list(memory_turn_recalls_target(SupportDialogue.model_construct(**answer), variables))


@pytest.mark.skipif(not MODEL_ANSWERS.is_dir(), reason=f"the shared corpus is not at {MODEL_ANSWERS}")
def test_acceptable_memory_turns_pass_and_an_earlier_ai_turn_is_rejected():
    made = 0
    for where, data, answer in stage_answers("enpmr", "support_dialogue"):
        if answer["label"] != "acceptable":
            continue
        dialogue, v = answer["answer"], data["variables"]
        dialogue = {**dialogue, "turns": [DialogueTurn.model_validate(t) for t in dialogue["turns"]]}
        assert _problems(dialogue, v) == [], (where, answer["id"])
        for earlier in range(1, dialogue["memory_turn"]):
            if dialogue["turns"][earlier - 1].role == "ai":  # the user's turn is another check's
                made += 1
                assert _problems({**dialogue, "memory_turn": earlier}, v), (where, answer["id"], earlier)
    assert made >= 30, made
