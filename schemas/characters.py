"""characters (role-playing memory units, Emotional RAG's data): table rows.

A role's memory unit is its question–answer pairs: a line by someone else, then the role's
reply (seed 001 §III-A: "we extracted all the question-answer pairs to establish a memory
unit"). Queries are the lines a role is asked to answer next.
"""

from __future__ import annotations

from pydantic import BaseModel

from memsynth.core.tables import Ref, Table


class FragmentRow(BaseModel):
    fragment_id: str  # <role>#<n>, n in first-seen order
    persona_id: str  # the role
    role: str
    ordinal: int
    asker: str  # who spoke the question line
    question: str
    answer: str  # the role's reply
    text: str  # "asker：question\nrole：answer", what is embedded and scored
    scenes: list[str]  # every scene (CharacterEval id, or scene file) the pair occurs in


class QueryRow(BaseModel):
    query_id: str  # the CharacterEval id (or <scene>#last)
    persona_id: str
    role: str
    ordinal: int
    scene: str
    speaker: str
    query: str  # the scene's last line, which the role is to answer
    context: list[str]  # the scene's lines before it, "speaker：text"


_PERSONA = Ref("persona_id", "personas", "persona_id")
FRAGMENTS = Table("character_fragments", FragmentRow, key="fragment_id", refs=(_PERSONA,))
QUERIES = Table("character_queries", QueryRow, key="query_id", refs=(_PERSONA,))
