"""stratmem's stages: template `prompts/stratmem/<name>.j2`, output model in `schemas/stratmem.py`, checks."""

from __future__ import annotations

from pydantic import BaseModel

from flows.stratmem import checks as c
from memsynth.generation.stage import Check, Stage
from schemas.stratmem import ExtractedMemories, MergedMemories, RoleLabels, UserQuery, VirtualPersona


def _stage(name: str, output: type[BaseModel], *checks: Check, temperature: float | None = None) -> Stage:
    return Stage("stratmem", name, output, checks=checks, temperature=temperature)


EXTRACT = _stage("extract", ExtractedMemories, c.memory_facts, c.known_speakers, c.names_the_person)
MERGE = _stage("merge", MergedMemories, c.covers_candidates, c.memory_facts, c.names_the_person)
QUERY = _stage("query", UserQuery, c.a_question, c.valid_targets, c.does_not_quote_memories)
PERSONA = _stage("persona", VirtualPersona, c.persona_fields, c.persona_from_sessions)
# Three independent labellers are three samples of this prompt: at the build's temperature
# they can disagree, as the seed's experts did.
LABEL = _stage("label", RoleLabels, c.labels_every_memory)

STAGES = (EXTRACT, MERGE, QUERY, PERSONA, LABEL)
