"""characters' items for emotion annotation: each memory fragment, and each query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memsynth.core.tables import Ref
from memsynth.generation.emotions import EmotionItem, EmotionSource

TABLES = ("character_fragments", "character_queries")
REFS = (Ref("item_id", "character_fragments", "fragment_id", when=("item_kind", "memory")),
        Ref("item_id", "character_queries", "query_id", when=("item_kind", "query")))


def emotion_items(tables: Mapping[str, Sequence[Mapping[str, Any]]], language: str) -> list[EmotionItem]:
    items = [EmotionItem(f["fragment_id"], "memory", f["persona_id"], f["role"], f["text"])
             for f in tables["character_fragments"]]
    items += [EmotionItem(q["query_id"], "query", q["persona_id"], q["speaker"], q["query"])
              for q in tables["character_queries"]]
    return items


SOURCE = EmotionSource(TABLES, REFS, emotion_items)
