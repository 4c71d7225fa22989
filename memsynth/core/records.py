"""The engine's own tables, written by every build: personas, LLM calls, stage failures."""

from __future__ import annotations

from pydantic import AwareDatetime, BaseModel

from memsynth.core.tables import Table


class PersonaRow(BaseModel):
    persona_id: str
    description: str
    source: str
    # The persona's place in the build (pool order, then written ones): growing a build
    # keeps every earlier persona's ordinal, so releases number users stably from it.
    ordinal: int | None = None


class LLMCallRow(BaseModel):
    call_id: str
    stage: str
    template_hash: str
    model: str
    cache_key: str
    persona_id: str | None
    item_key: str
    repair_index: int
    prompt_tokens: int
    completion_tokens: int
    # Of prompt_tokens, those the provider served from its prompt cache (usage's
    # prompt_tokens_details.cached_tokens): billed at the cached-input price.
    cached_prompt_tokens: int = 0
    latency_s: float
    attempts: int
    cache_hit: bool
    outcome: str  # ok | invalid_json | invalid_schema | check_failed | judge_rejected | truncated | transport_error
    error: str
    started_at: AwareDatetime


REJECTED_ANSWER_CHARS = 4000


class StageFailureRow(BaseModel):
    """An item that never passed: dropped, or kept but flagged, with the reasons."""

    stage: str
    item_key: str
    persona_id: str | None
    action: str  # dropped | flagged
    problems: list[str]
    # The last answer the item was refused for (its first REJECTED_ANSWER_CHARS characters),
    # so why an item failed can be read in SQL; None when no answer came (transport, integrity).
    rejected_answer: str | None = None


PERSONAS = Table("personas", PersonaRow, key="persona_id")
LLM_CALLS = Table("llm_calls", LLMCallRow)
STAGE_FAILURES = Table("stage_failures", StageFailureRow)
