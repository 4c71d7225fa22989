"""pal's items for emotion annotation: each situation's experience (the user's memory of
that time) and each topic's opening request (the query)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memsynth.core.tables import Ref
from memsynth.generation.emotions import EmotionItem, EmotionSource

TABLES = ("situations", "experiences", "topics")
REFS = (Ref("item_id", "experiences", "situation_id", when=("item_kind", "memory")),
        Ref("item_id", "topics", "topic_id", when=("item_kind", "query")))
SPEAKER = {"en": "the user", "zh": "用户"}


def emotion_items(tables: Mapping[str, Sequence[Mapping[str, Any]]], language: str) -> list[EmotionItem]:
    persona = {s["situation_id"]: s["persona_id"] for s in tables["situations"]}
    speaker = SPEAKER[language]
    items = [EmotionItem(e["situation_id"], "memory", persona[e["situation_id"]], speaker, e["text"])
             for e in tables["experiences"] if e["situation_id"] in persona]
    items += [EmotionItem(t["topic_id"], "query", persona[t["situation_id"]], speaker, t["user_query"])
              for t in tables["topics"] if t["situation_id"] in persona]
    return items


SOURCE = EmotionSource(TABLES, REFS, emotion_items)
