"""enpmr's items for emotion annotation: each memory's session (the fragment a retriever
returns) and each benchmark dialogue up to its memory turn (the query)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memsynth.core.tables import Ref
from memsynth.generation.emotions import EmotionItem, EmotionSource

TABLES = ("memory_sessions", "benchmark")
REFS = (Ref("item_id", "memories", "memory_id", when=("item_kind", "memory")),
        Ref("item_id", "benchmark", "dialogue_id", when=("item_kind", "query")))
SPEAKER = {"en": "the user", "zh": "用户"}
# A zh text labels its turns in Chinese, so it reads as Chinese throughout.
ZH_LABELS = {"user": "用户", "ai": "AI"}


def _line(turn: Mapping[str, Any], language: str) -> str:
    if language == "zh":
        return f"{ZH_LABELS.get(turn['role'], turn['role'])}：{turn['content']}"
    return f"{turn['role']}: {turn['content']}"


def session_texts(rows: Sequence[Mapping[str, Any]], language: str) -> dict[str, tuple[str, str]]:
    """memory id → (persona id, its session as `role: content` lines), in turn order."""
    turns: dict[str, list[Mapping[str, Any]]] = {}
    for row in rows:
        turns.setdefault(row["memory_id"], []).append(row)
    return {mid: (ts[0]["persona_id"], "\n".join(_line(t, language)
                                                  for t in sorted(ts, key=lambda t: t["turn_index"])))
            for mid, ts in turns.items()}


def query_text(dialogue: Mapping[str, Any], language: str) -> str:
    """The dialogue before its memory turn: what a retriever is given (seed 000 §5.1)."""
    return "\n".join(_line(t, language) for t in dialogue["turns"][: dialogue["memory_turn"] - 1])


def emotion_items(tables: Mapping[str, Sequence[Mapping[str, Any]]], language: str) -> list[EmotionItem]:
    speaker = SPEAKER[language]
    items = [EmotionItem(mid, "memory", pid, speaker, text)
             for mid, (pid, text) in session_texts(tables["memory_sessions"], language).items()]
    items += [EmotionItem(d["dialogue_id"], "query", d["persona_id"], speaker, query_text(d, language))
              for d in tables["benchmark"]]
    return items


SOURCE = EmotionSource(TABLES, REFS, emotion_items)
