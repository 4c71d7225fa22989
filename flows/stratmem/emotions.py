"""stratmem's items for emotion annotation: each pool memory (`<instance>#<index>`) and
each instance's query."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memsynth.core.tables import Ref
from memsynth.generation.emotions import EmotionItem, EmotionSource

TABLES = ("stratmem_instances", "stratmem_memories")
# A pool memory has no id column of its own to refer to; it leaves with its instance.
REFS = (Ref("item_id", "stratmem_instances", "instance_id", when=("item_kind", "query")),)


def about(fact: str, human: str, virtual_person: str) -> str:
    """Whom a fact is about: the speaker it names first (facts name their person), else the
    virtual character, whose memory it is."""
    found = [(fact.find(name), name) for name in (human, virtual_person) if name and name in fact]
    return min(found)[1] if found else virtual_person


def emotion_items(tables: Mapping[str, Sequence[Mapping[str, Any]]], language: str) -> list[EmotionItem]:
    instances = {i["instance_id"]: i for i in tables["stratmem_instances"]}
    items = [EmotionItem(f"{m['instance_id']}#{m['memory_index']}", "memory", m["persona_id"],
                         about(m["fact"], instances[m["instance_id"]]["human"],
                               instances[m["instance_id"]]["virtual_person"]), m["fact"])
             for m in tables["stratmem_memories"] if m["instance_id"] in instances]
    items += [EmotionItem(i["instance_id"], "query", i["persona_id"], i["human"], i["query"])
              for i in instances.values()]
    return items


SOURCE = EmotionSource(TABLES, REFS, emotion_items)
