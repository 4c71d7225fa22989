"""stratmem's stages: template `prompts/stratmem/<name>.j2`, output model in `schemas/stratmem.py`, checks."""

from __future__ import annotations

from pydantic import BaseModel

from flows.stratmem import checks as c
from flows.stratmem import form_checks as fc
from flows.stratmem import pool_checks as pc
from memsynth.generation import checklib as lib
from memsynth.generation.stage import Check, Stage
from schemas.stratmem import ExtractedMemories, MergedMemories, RoleLabels, UserQuery, VirtualPersona


# max_tokens: the stage's budget (memsynth.llm.budget), about twice the largest answer a
# strong model wrote to its prompt (../shared/model-answers, indented JSON): tests/test_budgets.py.
def _stage(name: str, output: type[BaseModel], *checks: Check, temperature: float | None = None,
           max_tokens: int | None = None) -> Stage:
    return Stage("stratmem", name, output, checks=checks, temperature=temperature,
                 max_tokens=max_tokens)


EXTRACT = _stage("extract", ExtractedMemories, c.memory_facts, c.dated_facts, c.yesterday_dated, c.known_speakers,
                 c.names_the_person, max_tokens=1024)
MERGE = _stage("merge", MergedMemories, c.covers_candidates, c.memory_facts, c.dated_facts, c.names_the_person,
               pc.same_facts_joined, pc.states_only_candidate_numbers, max_tokens=1792)
QUERY = _stage("query", UserQuery, c.a_question, c.valid_targets, c.does_not_quote_memories, fc.speaks_to_the_character,
               fc.said_by_the_speaker, fc.one_question, fc.asks_the_character, pc.aims_at_its_targets, max_tokens=256)
# The prompt's sentence counts: a summary of 3 to 5 (the release's 657 have 4 or 5), a
# one-sentence rationale.
PERSONA = _stage("persona", VirtualPersona, c.persona_fields, lib.sentences("summary", min=3, max=5),
                 fc.persona_described, c.persona_from_sessions, fc.persona_places_from_sessions, fc.short_traits,
                 fc.domains_of_the_character, max_tokens=1024)
# Three independent labellers are three samples of this prompt: at the build's temperature
# they can disagree, as the seed's experts did.
LABEL = _stage("label", RoleLabels, c.labels_every_memory, lib.sentences("labels[].rationale", max=1),
               max_tokens=1024)

STAGES = (EXTRACT, MERGE, QUERY, PERSONA, LABEL)
