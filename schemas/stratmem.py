"""stratmem (StratMem-Bench): stage output models and table rows.

Stage outputs are what the LLM must answer; rows are what lands in the warehouse.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from memsynth.core.tables import Ref, Table

Role = Literal["must", "nice", "irr"]
# A must-only, B nice-only, C must+nice: the scenario an instance tests.
InstanceType = Literal["A", "B", "C"]
ROLES: tuple[Role, ...] = ("must", "nice", "irr")

# --- stage outputs -----------------------------------------------------------------


class ExtractedFact(BaseModel):
    fact: str = Field(min_length=1, description="one self-contained sentence naming who, with absolute dates")
    about: str = Field(min_length=1, description="the speaker the fact is about")


class ExtractedMemories(BaseModel):
    """`extract`: the memory items one session gives, from its turns and its notes."""

    memories: list[ExtractedFact] = Field(min_length=1)


class MergedFact(BaseModel):
    fact: str = Field(min_length=1)
    sources: list[int] = Field(min_length=1, description="the numbers of the candidates this item stands for")


class MergedMemories(BaseModel):
    """`merge`: a window's candidates, duplicates merged and every item made unambiguous."""

    memories: list[MergedFact] = Field(min_length=1)


class UserQuery(BaseModel):
    """`query`: the user's next message, and the memories it is written to need."""

    query: str = Field(min_length=1)
    targets: list[int] = Field(min_length=1, description="numbers of the memories the query is aimed at")


class VirtualPersona(BaseModel):
    """`persona`: the virtual character, as the window's sessions show them."""

    virtual_person_name: str = Field(min_length=1)
    summary: str = Field(min_length=1)
    traits: list[str] = Field(min_length=1)
    style: list[str] = Field(min_length=1)
    domains: list[str] = Field(min_length=1)
    values: list[str] = Field(min_length=1)


class RoleLabel(BaseModel):
    index: int
    role: Role
    rationale: str = Field(min_length=1, description="one sentence")


class RoleLabels(BaseModel):
    """`label`: one annotator's role for every memory of the pool, for this query."""

    labels: list[RoleLabel] = Field(min_length=1)


# --- table rows ----------------------------------------------------------------------


class InstanceRow(BaseModel):
    instance_id: str
    persona_id: str  # the source conversation (a LoCoMo sample, or a dataset's persona)
    source_id: str
    ordinal: int  # the instance's place in its export (a real file's order, on import)
    window_size: int | None  # w: the sessions the pool was drawn from (None: imported)
    first_session: int | None
    history_session: int | None  # the session the history and query time come from
    given_type: InstanceType
    inferred_type: InstanceType
    query: str
    query_time: str  # as LoCoMo writes a session's time: "1:14 pm on 25 May, 2023"
    query_at: dt.datetime | None
    history: list[str]  # "Speaker: text" lines; empty when the query opens the session
    human: str
    virtual_person: str
    persona: dict  # virtual_person_persona, as exported
    agreement: float | None  # share of the pool's memories the three labellers agreed on


class MemoryRow(BaseModel):
    instance_id: str
    persona_id: str
    memory_index: int
    fact: str
    role: Role
    votes: list[str]  # the three labellers' roles (empty when imported)
    rationale: str | None
    session_index: int | None  # the source session the fact was extracted from
    session_at: dt.datetime | None
    in_test_split: bool  # kept by the test split's nice down-sampling


_PERSONA = Ref("persona_id", "personas", "persona_id")
INSTANCES = Table("stratmem_instances", InstanceRow, key="instance_id", refs=(_PERSONA,))
MEMORIES = Table("stratmem_memories", MemoryRow,
                 refs=(Ref("instance_id", "stratmem_instances", "instance_id"),))


# --- evaluation (seed 002 §4–5): a reply, the judge's memory-use verdicts, and MIQ ---------

class Reply(BaseModel):
    response: str = Field(min_length=1, description="the virtual character's reply to the message")


class UseVerdict(BaseModel):
    index: int = Field(description="the memory's number")
    evidence: str = Field(description="the words of the reply that carry the memory's detail, quoted exactly; "
                                      "empty when it is not used")
    used: bool


class UseJudgment(BaseModel):
    verdicts: list[UseVerdict] = Field(min_length=1)


class IntegrationScore(BaseModel):
    failures: list[Literal["topic_drift", "forced_association", "contradiction_or_fabrication",
                           "overexpansion", "misattribution"]] = Field(
        description="the failure types the reply shows (empty: none)")
    analysis: str = Field(min_length=1)
    score: int = Field(ge=1, le=5, description="5 no failure, 4 minor friction, 3 marginal deviation, "
                                               "2 clear failure, 1 severe failure")
