"""longmem's models: what the model writes (a chat as exchanges) and the rows a build keeps."""

from __future__ import annotations

from pydantic import BaseModel, Field


class Exchange(BaseModel):
    """One user message and the assistant's reply to it."""

    user: str = Field(min_length=1, max_length=1200)
    assistant: str = Field(min_length=1, max_length=2400)


class Chat(BaseModel):
    """A task-oriented user–assistant session, in order."""

    exchanges: list[Exchange] = Field(min_length=1, max_length=20)


class FactRow(BaseModel):
    """One structured fact of a persona, and the sessions that reveal it (in date order)."""

    fact_id: str
    persona_id: str
    key: str
    kind: str
    attribute: str
    values: list[str]  # update: old then new; count: one item per session; temporal: the events
    dates: list[str]  # the date each value was revealed (YYYY/MM/DD)
    speaker: str  # who reveals it: user, or assistant
    session_ids: list[str]


class SessionRow(BaseModel):
    session_id: str
    persona_id: str
    date: str  # LongMemEval's form: 2023/05/20 (Sat) 02:21
    kind: str  # evidence or filler
    fact_id: str | None
    turns_json: str  # [{"role", "content", "has_answer"?}]


class QuestionRow(BaseModel):
    question_id: str
    persona_id: str
    question_type: str
    question: str
    answer: str
    question_date: str
    fact_id: str | None
    haystack_session_ids: list[str]
    answer_session_ids: list[str]
    terms: list[str]  # what names the asked attribute (gold checks: filler and abstention)
    haystack_tokens: int  # estimated: a token per 4 characters of alphabetic text, per CJK character


class Reply(BaseModel):
    """The answer of the system under test to a question about the history."""

    answer: str = Field(min_length=1, max_length=2000)


class Verdict(BaseModel):
    """The judge's verdict on one answer, against the gold answer (or rubric)."""

    correct: bool
