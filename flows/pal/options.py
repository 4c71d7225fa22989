"""pal options, and the sampling constants taken from the seed's released code."""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memsynth.core.config import PROJECT_ROOT
from memsynth.generation.emotions import emotions_option

LOG_TYPES: dict[str, dict[str, str]] = json.loads(
    (PROJECT_ROOT / "data" / "pal" / "log_types.json").read_text(encoding="utf-8"))["types"]

# Mem-PAL data_synthesis_v2 (situation.py, dialogue.py): how sessions and skeletons are drawn.
# Hours are inclusive and uniform (random.randint), as in situation.py.
START_HOURS = (7, 12)  # a situation starts at a random hour in this range…
END_HOURS = (12, 21)  # …and ends (the dialogue's time) at a random hour in this one
HISTORY_SOLUTIONS = {1: 0.2, 2: 0.4, 3: 0.4}  # solutions proposed per history topic
QUERY_SOLUTIONS = {1: 0.5, 2: 0.5}  # liked solutions proposed per query topic
NEEDS_PREDICTED = {1: 0.5, 2: 0.5}  # requirement predictions per topic
DISCUSSION_TURNS = {0: 0.5, 1: 0.5}  # discussion turns per proposed solution


class PalOptions(BaseModel):
    """`recipe_options` of a pal config."""

    model_config = ConfigDict(extra="forbid")
    emotions: bool = emotions_option()
    months: tuple[int, int] = Field(
        (8, 12), description="timeline length [min, max], drawn per persona; the last month is the query month")
    situations_per_month: tuple[int, int] = Field((4, 6), description="situations asked for per month")
    profile_batch_size: int = Field(5, ge=1, le=20, description="profiles written together, told to differ")
    allow_students_retirees: bool = Field(False, description="the seed excludes students and retirees")
    min_logs: int = Field(20, ge=1, description="logs asked for and required per situation (the seed: no less than 20)")
    dialogue_rate: float = Field(0.6, gt=0, le=1, description="chance that a situation becomes a dialogue session")
    max_skipped: int = Field(3, ge=0, description="situations in a row that may pass without a dialogue")

    @model_validator(mode="after")
    def _ranges(self) -> PalOptions:
        if not 1 <= self.months[0] <= self.months[1] <= 36:
            raise ValueError("months: give [min, max] with 1 <= min <= max <= 36")
        if not 1 <= self.situations_per_month[0] <= self.situations_per_month[1] <= 10:
            raise ValueError("situations_per_month: give [min, max] with 1 <= min <= max <= 10")
        return self
