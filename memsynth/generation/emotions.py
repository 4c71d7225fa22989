"""Emotion annotation (Emotional RAG, seed 001 §II-B): each memory fragment and benchmark
query scored 1–10 on Plutchik's eight emotions by an LLM stage.

A recipe says which of its rows are memories and queries (`Recipe.emotion_items`); the
scores land in the `emotions` table, during a build (`recipe_options.emotions: true`) or on
an existing version (`memsynth annotate emotions`, see `annotate`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from memsynth.core.tables import Ref, Table
from memsynth.generation import checklib as lib
from memsynth.generation.stage import ItemResult, Stage, check, say

# Plutchik's eight, in the order the seed's vectors use.
EMOTIONS = ("joy", "acceptance", "fear", "surprise", "sadness", "disgust", "anger", "anticipation")
Emotion = Literal["joy", "acceptance", "fear", "surprise", "sadness", "disgust", "anger", "anticipation"]


class DimensionScore(BaseModel):
    dim: Emotion
    analysis: str = Field(min_length=1, description="the evidence, in one sentence")
    score: int = Field(ge=1, le=10, description="1 absent … 10 overwhelming")


class EmotionScores(BaseModel):
    scores: list[DimensionScore] = Field(min_length=8, max_length=8, description="one per emotion")


@check("every_emotion_once")
def every_emotion_once(out: EmotionScores, v: Mapping[str, Any]) -> Iterator[str]:
    given = [s.dim for s in out.scores]
    missing = [e for e in EMOTIONS if e not in given]
    doubled = sorted({e for e in given if given.count(e) > 1})
    if missing:
        yield say(v, f"no score for {', '.join(missing)}", f"缺少这些情绪的分数：{'、'.join(missing)}")
    if doubled:
        yield say(v, f"{', '.join(doubled)} scored more than once", f"这些情绪打了不止一次分：{'、'.join(doubled)}")


_TURN = re.compile(r"^\s*([^:：\n]{1,40}?)\s*[:：]\s*(.*)$")
# Straight single quotes too ('Wow' reactions), where no letter touches them from outside (an
# apostrophe in "Melanie's" opens nothing, and one between letters inside, 'you've got guts',
# closes nothing).
_QUOTED = re.compile(r"“([^”]*)”|\"([^\"]*)\"|「([^」]*)」|『([^』]*)』|‘([^’]*)’"
                     r"|(?<![A-Za-z])'((?:[^'\n]|(?<=[A-Za-z])'(?=[A-Za-z])){2,60}?)'(?![A-Za-z])")


def _said(text: str) -> str:
    return " ".join(text.casefold().split()).strip(" .,!?;:。，！？；：…'\"")


def others_words(v: Mapping[str, Any], analysis: str) -> list[str]:
    """The spans an analysis quotes from another speaker's lines of a memory, and never from
    the scored speaker's own ("Wow" said by the friend, scored as her surprise)."""
    own: list[str] = []
    other: list[str] = []
    for line in str(v.get("text", "")).splitlines():
        if turn := _TURN.match(line):
            (own if turn.group(1).strip() == str(v.get("speaker", "")).strip() else other).append(turn.group(2))
    if v.get("kind") != "memory" or not own or not other:
        return []
    theirs, mine = _said("\n".join(other)), _said("\n".join(own))
    spans = (_said(next(g for g in m.groups() if g is not None)) for m in _QUOTED.finditer(analysis)
             if not _received(analysis[:m.start()]))
    return [span for span in spans if len(span) >= 2 and span in theirs and span not in mine]


# What the speaker takes in, answers or thanks is her own reaction: "她领了许磊“先养好”的好意",
# "she takes his 'rest first' to heart" quote the other's words as the object of her feeling,
# "Asked 'What now?', she…" the question her feeling answers, where "Melanie's repeated 'Wow'"
# offers them as the feeling itself.
_RECEIVING = re.compile(r"(领了|领受|接受|接纳|听进|听了|听从|回应|答应|感谢|谢谢|谢过|采纳|认同|被问到?|听到|"
                        r"\b(?:accept|take|took|welcome|thank|heed|respond|repl|answer|agree)\w*"
                        # the question she answers ("Asked 'What now?', she lays out her plans": a31)
                        r"|^\s*asked\b|\b(?:when|being|once) asked\b)", re.I)
_CLAUSE_END = re.compile(r"[，,。.;；:：!！?？]")


def _received(before: str) -> bool:
    """Whether the clause a quote stands in (the text since its last clause mark) has the
    speaker receiving the quoted words."""
    clause = _CLAUSE_END.split(before[-40:])[-1]
    return bool(_RECEIVING.search(clause))


@check("speaker_own_words")
def speaker_own_words(out: EmotionScores, v: Mapping[str, Any]) -> Iterator[str]:
    """A memory is scored on "the emotions {speaker} expresses in it": evidence quoted from the
    other speaker's lines is someone else's feeling."""
    speaker = v.get("speaker", "")
    for s in out.scores:
        if found := others_words(v, s.analysis):
            yield say(v, f"{s.dim}: the analysis quotes {', '.join(repr(f) for f in found)}, which another speaker said; "
                         f"score only what {speaker} expresses",
                      f"{s.dim}：分析引用的“{'”“'.join(found)}”是另一个人说的；只按{speaker}自己表达的情绪打分")


# Eight one-sentence analyses and scores: a strong model writes under 400 tokens (the
# model answers' largest, indented); the schema bounds no sentence, so the budget is declared.
SCORE = Stage("emotions", "score", EmotionScores,
              checks=(every_emotion_once, lib.sentences("scores[].analysis", max=1, name="one_sentence_analysis"),
                      speaker_own_words),
              policy="drop", temperature=0.0, max_tokens=768)


@dataclass(frozen=True)
class EmotionItem:
    """A text to score: a memory fragment or a benchmark query."""

    item_id: str
    item_kind: Literal["memory", "query"]
    persona_id: str
    speaker: str
    text: str

    def variables(self) -> dict[str, Any]:
        return {"kind": self.item_kind, "speaker": self.speaker, "text": self.text}


@dataclass(frozen=True)
class EmotionSource:
    """What a recipe scores: the tables its `items` function reads (rows as dicts, and the
    build's language), and the references from an `emotions` row to the row it scores."""

    tables: tuple[str, ...]
    refs: tuple[Ref, ...]
    items: Callable[[Mapping[str, Sequence[Mapping[str, Any]]], str], list[EmotionItem]]


class EmotionRow(BaseModel):
    item_id: str
    item_kind: str  # memory | query
    persona_id: str
    joy: int
    acceptance: int
    fear: int
    surprise: int
    sadness: int
    disgust: int
    anger: int
    anticipation: int
    reason: str  # each dimension's analysis, one line each ("joy: …")


def emotions_option() -> Any:
    """The `emotions` field of a recipe's options."""
    return Field(False, description="score every memory and benchmark query on Plutchik's eight emotions, "
                                    "1-10 (Emotional RAG), into the emotions table")


def emotions_table(refs: tuple[Ref, ...]) -> Table:
    """The `emotions` table, with a recipe's references from its items to their rows."""
    return Table("emotions", EmotionRow, refs=refs)


def emotion_row(item: EmotionItem, result: ItemResult) -> EmotionRow | None:
    """The item's row from its stage result; None when the item failed."""
    if not result.usable:
        return None
    scores = {s.dim: s for s in result.output.scores}
    return EmotionRow(item_id=item.item_id, item_kind=item.item_kind, persona_id=item.persona_id,
                      **{e: scores[e].score for e in EMOTIONS},
                      reason="\n".join(f"{e}: {scores[e].analysis}" for e in EMOTIONS))


def item_key(item: EmotionItem) -> str:
    return f"emotions/{item.item_kind}/{item.item_id}"
