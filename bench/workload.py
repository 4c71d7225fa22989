"""The throughput workload every client sends: the same model and prompt.

Only pydantic is imported, so the peers' virtual environments can load this file too.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

SYSTEM = "Answer with JSON."


class Fact(BaseModel):
    """The bench's output model: a few fields, as in a small stage."""

    name: str
    description: str
    score: int = Field(ge=1, le=10)
    tags: list[str] = Field(min_length=1, max_length=4)


def user_prompt(i: int) -> str:
    return f"Describe fact number {i}."
