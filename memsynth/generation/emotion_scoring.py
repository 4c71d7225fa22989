"""The emotion stage inside a build: a shard's memories and queries scored with their persona."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING

from memsynth.generation.emotions import SCORE, emotion_row, emotions_table, item_key

if TYPE_CHECKING:
    from memsynth.generation.recipe import PersonaContext, Recipe


async def annotate_shard(recipe: Recipe, contexts: Sequence[PersonaContext]) -> None:
    """Score the memories and queries the shard's chains emitted, each with its persona."""
    output = contexts[0].output
    source = recipe.emotion_source
    tables = {name: [row.model_dump(mode="json") for row in output.rows.get(name, [])]
              for name in source.tables}
    items = source.items(tables, contexts[0].language)
    by_persona = {ctx.persona.persona_id: ctx for ctx in contexts}
    results = await asyncio.gather(*(by_persona[i.persona_id].run(SCORE, i.variables(), item_key(i))
                                     for i in items if i.persona_id in by_persona))
    rows = [r for r in (emotion_row(i, res) for i, res in zip(items, results)) if r is not None]
    output.emit(emotions_table(source.refs), rows)
