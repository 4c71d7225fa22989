"""stratmem options, and the figures of StratMem-Bench's release the defaults follow."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memsynth.generation.emotions import emotions_option

# The real release's given types (A 345, B 19, C 293 of 657): the queries were mostly
# written to need a memory; what they turned out to need is the inferred type.
GIVEN_TYPE_WEIGHTS = {"A": 0.525, "B": 0.029, "C": 0.446}
# Real histories: 378 of 657 empty; the others hold 10-43 lines of the next session.
EMPTY_HISTORY_SHARE = 0.575
HISTORY_LINES = (10, 43)
LABELLERS = 3  # the seed's three annotators
TEST_SPLIT_NICE = 2  # nice memories kept per instance in the test split (the seed's §5.2)


class StratmemOptions(BaseModel):
    """`recipe_options` of a stratmem config."""

    model_config = ConfigDict(extra="forbid")
    emotions: bool = emotions_option()
    source: str = Field(
        "locomo:../../shared/reference-data/locomo/locomo10.json",
        description="where the sessions come from: `locomo:FILE` (LoCoMo-format conversations, the path "
                    "relative to the config) or `dataset:NAME[@VERSION]` (an enpmr or pal dataset of the "
                    "build's warehouse: a persona's memory sessions or dialogue sessions)")
    windows: list[int] = Field([1, 2, 3], description="window sizes w: the pool is w consecutive sessions' "
                                                       "memories, the history the session after them")
    max_sessions: int | None = Field(None, ge=2, description="use only each conversation's first N sessions")
    pool_size: tuple[int, int] = Field(
        (5, 12), description="memories per instance [min, max], drawn per instance: the query's targets "
                             "plus other memories of the window (the release: 5-20, 8.79 on average)")
    given_type_weights: dict[str, float] = Field(
        GIVEN_TYPE_WEIGHTS, description="how often a query is written for must-only (A), nice-only (B) "
                                        "and must+nice (C) use")
    assistant_name: str = Field("", description="the virtual character of a dataset source (default: "
                                                "Assistant, 助手 in zh)")

    @field_validator("windows")
    @classmethod
    def _windows(cls, value: list[int]) -> list[int]:
        if not value or any(not 1 <= w <= 10 for w in value) or len(set(value)) != len(value):
            raise ValueError("give distinct window sizes between 1 and 10")
        return sorted(value)

    @model_validator(mode="after")
    def _check(self) -> StratmemOptions:
        if not 1 <= self.pool_size[0] <= self.pool_size[1] <= 40:
            raise ValueError("pool_size: give [min, max] with 1 <= min <= max <= 40")
        if set(self.given_type_weights) - {"A", "B", "C"} or not any(self.given_type_weights.values()) \
                or min(self.given_type_weights.values()) < 0:
            raise ValueError("given_type_weights: non-negative weights for A, B and C")
        kind, _, rest = self.source.partition(":")
        if kind not in ("locomo", "dataset") or not rest:
            raise ValueError("source: give locomo:FILE or dataset:NAME[@VERSION]")
        return self
