"""enpmr options and the seed's fixed facts: counts, needs, the need → memory rule, BLRI."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memsynth.core.config import PROJECT_ROOT
from memsynth.generation.emotions import emotions_option

YEARS_OF_HISTORY = 5
SESSION_TURNS = (10, 20)
DIALOGUE_TURNS = (2, 6)
# The seed: the memory is embedded "in a reply of no more than 50 words" (Fig. 11). Our reading:
# the limit is on the whole memory turn (prompt and check alike), and in Chinese it is 80
# characters, what 50 English words come to (about 1.6 characters a word); the seed's prompts
# are published in translation, so "50 words" may stand for 50 字; we keep 80, the bound the
# model answers of shared/model-answers were written and judged to (README, enpmr recipe).
RECALL_LIMIT = {"en": 50, "zh": 80}
# The evaluation's reply: "no more than 100 words" (seed 000 Figs. 13-15); in Chinese 160
# characters, read as the recall limit is.
REPLY_LIMIT = {"en": 100, "zh": 160}

# Minimum items per life theme. Relationship, power and goal follow the seed's protocol;
# highlights are asked for so that the bank's category shares match ENPMR-Bench's
# (highlight 3,729 / power 3,463 / relationship 2,324 / goal 1,719 / preference 611).
MIN_RELATIONSHIPS = 4
MIN_POWERS, MIN_PROFICIENT, MIN_NOT_PROFICIENT = 6, 4, 2
MIN_GOALS, MIN_ACHIEVED, MIN_NOT_ACHIEVED = 3, 2, 1
MIN_HIGHLIGHTS = 6
MIN_PREFERENCES = 10
SEED_CATEGORY_SHARES = {"highlight": 3729 / 11846, "power": 3463 / 11846, "relationship": 2324 / 11846,
                        "goal": 1719 / 11846, "preference": 611 / 11846}


@dataclass(frozen=True)
class MemoryKind:
    """A category of memory, optionally narrowed by its attributes (a good relationship)."""

    category: str
    where: tuple[tuple[str, str], ...] = ()  # (attribute, value) pairs that must all hold

    def matches(self, category: str, attributes: Mapping[str, Any]) -> bool:
        return category == self.category and all(attributes.get(k) == v for k, v in self.where)


# The seed's Table 1, as data: which memories can meet each unmet need. Feeling understood
# and not alone (LB) or affirmed by others (EN) comes from a relationship that supports
# the user, never from one that strains them.
NEED_TARGETS: dict[str, tuple[MemoryKind, ...]] = {
    "PN": (MemoryKind("preference"),),
    "LB": (MemoryKind("relationship", (("relationship_quality", "good"),)),),
    "EN": (MemoryKind("highlight"), MemoryKind("relationship", (("relationship_quality", "good"),))),
    "SA": (MemoryKind("goal"), MemoryKind("power"), MemoryKind("highlight")),
}

# Names and the deficiency each need shows (Table 1), per language.
NEEDS: dict[str, dict[str, tuple[str, str]]] = {
    "en": {
        "PN": ("physiological needs", "the user is tired, hungry or physically unwell"),
        "LB": ("love and belonging", "the user feels lonely, rejected or that they do not belong"),
        "EN": ("esteem", "the user feels inferior, lacks confidence and is stung by how others judge them"),
        "SA": ("self-actualization", "the user feels lost, without purpose or passion, and doubts their own worth"),
    },
    "zh": {
        "PN": ("生理需求", "用户感到疲惫、饥饿或身体不适"),
        "LB": ("爱与归属", "用户感到孤独、被排斥，或觉得自己不被接纳、没有归属"),
        "EN": ("尊重需求", "用户自卑、缺乏自信，对别人的评价格外敏感"),
        "SA": ("自我实现", "用户感到迷茫，失去目标和热情，怀疑自己的价值"),
    },
}

BLRI = json.loads((PROJECT_ROOT / "data" / "enpmr" / "blri_items.json").read_text(encoding="utf-8"))
BLRI_ITEMS: list[dict[str, Any]] = BLRI["items"]
PERSONA_ATTRIBUTES = PROJECT_ROOT / "data" / "persona_attributes.json"


class EnpmrOptions(BaseModel):
    """`recipe_options` of an enpmr config."""

    model_config = ConfigDict(extra="forbid")
    emotions: bool = emotions_option()
    # The profile schema holds at least 10 (the seed's minimum): fewer could never validate.
    min_life_themes: int = Field(10, ge=10, le=40, description="life themes asked for per persona (10 or more)")
    dialogues_per_persona: int = Field(4, ge=0, le=10_000, description="support dialogues planned per persona")
    need_proportions: dict[str, float] = Field(
        default_factory=lambda: {"SA": 1099, "EN": 401, "PN": 192, "LB": 180},
        description="relative weights of the needs (the seed's 1,099 SA : 401 EN : 192 PN : 180 LB)")
    negatives: tuple[int, int] = Field((2, 3), description="[min, max] negatives per dialogue")
    scenario_min_score: int = Field(3, ge=1, le=5, description="scene self-check score needed to write the dialogue")
    scene_attempts: int = Field(2, ge=1, le=5, description="scenes tried per dialogue before it is given up")
    faithfulness_min_score: int = Field(3, ge=1, le=5, description="faithfulness judge score a dialogue needs")
    blri_scale: tuple[int, int] = Field((-3, 3), description="the scale the BLRI judge rates on")
    blri_zero: bool = Field(False, description="whether 0 is a point of the scale (the inventory has none)")
    blri_threshold: float = Field(2.0, description="dialogues whose mean BLRI score is below this are dropped")
    persona_dedup_threshold: float = Field(0.7, gt=0, le=1, description="MinHash Jaccard for near duplicates")

    @model_validator(mode="after")
    def _consistent(self) -> EnpmrOptions:
        unknown = set(self.need_proportions) - set(NEED_TARGETS)
        if unknown:
            raise ValueError(f"need_proportions: unknown needs {sorted(unknown)} (use PN, LB, EN, SA)")
        if not any(v > 0 for v in self.need_proportions.values()):
            raise ValueError("need_proportions: at least one need must have a positive weight")
        low, high = self.negatives
        if not 0 <= low <= high:
            raise ValueError("negatives: give [min, max] with 0 <= min <= max")
        if self.blri_scale[0] >= self.blri_scale[1]:
            raise ValueError("blri_scale: give [lowest, highest] with lowest < highest")
        return self

    def blri_points(self) -> list[int]:
        """The answers the BLRI scale allows."""
        low, high = self.blri_scale
        return [p for p in range(low, high + 1) if p != 0 or self.blri_zero]
