"""longmem's options, and LongMemEval's own figures the build summary prints beside ours."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

TYPES = ("single-session-user", "single-session-assistant", "single-session-preference",
         "multi-session", "knowledge-update", "temporal-reasoning")
# catalog kind -> LongMemEval question type
TYPE_OF_KIND = {"user": TYPES[0], "assistant": TYPES[1], "preference": TYPES[2], "count": TYPES[3],
                "update": TYPES[4], "temporal": TYPES[5]}
# LongMemEval (500 questions, 30 of them abstentions; S haystacks about 115k tokens, ~40-50 sessions).
SEED_COUNTS = {"single-session-user": 70, "single-session-assistant": 56, "single-session-preference": 30,
               "multi-session": 133, "knowledge-update": 78, "temporal-reasoning": 133}
SEED_QUESTIONS = 500
SEED_ABSTENTIONS = 30
SEED_TOKENS_PER_HAYSTACK = 115_000


class LongmemOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")

    haystack_sessions: int = Field(45, ge=2, le=600,
                                   description="sessions in each question's haystack (S: 40-50; M: about 500)")
    exchanges: int = Field(6, ge=1, le=20, description="user-assistant exchanges in each session")
    per_type: int = Field(2, ge=0, le=3,
                          description="questions of each of the six types per persona (at most the catalog holds)")
    abstentions: int = Field(1, ge=0, le=3, description="abstention (_abs) questions per persona")
    count_items: tuple[int, int] = Field((2, 4), description="multi-session: sessions (items) a count spans, low-high")
    distractor_share: float = Field(0.5, ge=0, le=1,
                                    description="share of a haystack's other sessions that are the persona's evidence "
                                                "sessions for other facts, the rest filler (LongMemEval S: about half)")
    span_days: int = Field(180, ge=14, le=3650, description="days of history before the reference date")
