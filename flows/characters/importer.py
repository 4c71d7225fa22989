"""A role-playing file as a dataset version: `memsynth import characters FILE --dataset D`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from flows.characters.recipe import STATISTICS
from flows.characters.source import language_of, memory_units, read_scenes
from memsynth.core.errors import ConfigError
from memsynth.core.records import PERSONAS, PersonaRow
from memsynth.warehouse.imports import publish_import
from schemas.characters import FRAGMENTS, QUERIES


def import_file(path: Path, warehouse: Path, dataset: str) -> dict[str, Any]:
    """Publish `path` as the next version of `dataset`: a persona per role, its memory unit, its queries."""
    scenes = read_scenes(path)
    fragments, queries = memory_units(scenes)
    if not fragments:
        raise ConfigError(f"{path}: no role ever answers a line, so there is no memory unit "
                          "(is each scene's `role` spelled as its speaker is?)")
    roles = list(dict.fromkeys(scene.role for scene in scenes))
    personas = [PersonaRow(persona_id=role, description=role, source="characters", ordinal=i)
                for i, role in enumerate(roles)]
    return publish_import(path, warehouse, dataset, "characters",
                          ((PERSONAS, personas), (FRAGMENTS, fragments), (QUERIES, queries)),
                          language=language_of(scenes), statistics=STATISTICS)
