"""enpmr (ENPMR-Bench): stage output models and table rows.

Stage outputs are what the LLM must answer; rows are what lands in the warehouse.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field

from memsynth.core.tables import Ref, Table

# --- stage outputs -----------------------------------------------------------------


class Profile(BaseModel):
    """`profile`: a persona description turned into lists of concrete facts."""

    name: str = Field(min_length=1, description="full name (a pseudonym is fine)")
    age: int = Field(ge=16, le=100)
    gender: str = Field(min_length=1)
    occupation: str = Field(min_length=1)
    education: str = Field(min_length=1)
    personality: list[str] = Field(min_length=3, description="traits along the Big Five")
    habits: list[str] = Field(min_length=3, description="daily habits and routines")
    social: list[str] = Field(min_length=2, description="relationships and social circle")
    emotional_pattern: list[str] = Field(min_length=2, description="typical emotional expressions")
    goals: list[str] = Field(min_length=2, description="medium- to long-term goals")
    communication_style: list[str] = Field(min_length=2)
    preferences: list[str] = Field(min_length=10, description="diet, exercise and other likes/dislikes")


class LifeTheme(BaseModel):
    theme: str = Field(min_length=1, description="short title of a life theme")
    description: str = Field(min_length=1)
    start_date: dt.date = Field(description="when the theme began, YYYY-MM-DD")


class LifeThemes(BaseModel):
    """`life_themes`: at least ten distinct themes of the five years before the reference date."""

    themes: list[LifeTheme] = Field(min_length=10)


class PersonaDescription(BaseModel):
    """`persona`: a PersonaHub-style description written from sampled attributes."""

    description: str = Field(min_length=40, description="two or three sentences about the person")


class Relationship(BaseModel):
    name: str = Field(min_length=1, description="the other person's name")
    relationship_type: str = Field(min_length=1, description="e.g. mentor, sister, teammate")
    relationship_quality: Literal["good", "bad"]
    occupation: str = Field(min_length=1)
    characteristic: str = Field(min_length=1, description="what they are like and how they support (or strain) the user")
    date: dt.date


class Relationships(BaseModel):
    """`relationship`: people who mattered within one life theme."""

    items: list[Relationship] = Field(min_length=4)


class Power(BaseModel):
    name: str = Field(min_length=1, description="a concrete sub-skill")
    description: str = Field(min_length=1)
    performance: Literal["proficient", "not proficient"]
    acquisition_method: str = Field(min_length=1)
    date: dt.date


class Powers(BaseModel):
    """`power`: sub-skills within one life theme, in date order."""

    items: list[Power] = Field(min_length=6)


class Goal(BaseModel):
    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    status: Literal["achieved", "not achieved"]
    date: dt.date


class Goals(BaseModel):
    """`goal`: goals within one life theme, in date order, the unfinished one last."""

    items: list[Goal] = Field(min_length=3)


class Highlight(BaseModel):
    name: str = Field(min_length=1, description="the moment of recognition or breakthrough")
    description: str = Field(min_length=1)
    recognized_by: str = Field(min_length=1, description="who recognised it")
    date: dt.date


class Highlights(BaseModel):
    """`highlight`: moments of recognition or breakthrough within one life theme."""

    items: list[Highlight] = Field(min_length=6)


class Preference(BaseModel):
    name: str = Field(min_length=1, description="short label of the like or dislike")
    description: str = Field(min_length=1)
    date: dt.date = Field(description="when the user first mentioned it")


class Preferences(BaseModel):
    """`preferences`: dated preference memories drawn from the profile."""

    items: list[Preference] = Field(min_length=10)


class Turn(BaseModel):
    role: Literal["user", "ai"]
    content: str = Field(min_length=1)


class MemorySession(BaseModel):
    """`memory_session`: a user–AI snippet in which the user's words reveal one memory."""

    turns: list[Turn] = Field(min_length=10, max_length=20)


class Scene(BaseModel):
    """`scene`: a present-day situation that leaves the user with the need and fits the target memory."""

    scene: str = Field(min_length=1)


class ScenarioCheck(BaseModel):
    """`scenario_consistency`: the self-check of a scene before any dialogue is written."""

    fits_target: bool = Field(description="the target memory is a natural thing to recall here")
    expresses_need: bool = Field(description="the scene leaves the user with the stated unmet need")
    fits_a_negative: bool = Field(description="one of the other memories would fit the scene as well")
    score: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1)


class SupportDialogue(BaseModel):
    """`support_dialogue`: a short dialogue in the scene where the AI recalls the target memory."""

    turns: list[Turn] = Field(min_length=2, max_length=6)
    memory_turn: int = Field(ge=1, description="1-based index of the AI turn that recalls the memory")


class Faithfulness(BaseModel):
    """`faithfulness`: grounded in the target memory, not the negatives, with no leak before the recall?"""

    grounded_in_target: bool
    uses_negatives: bool
    user_reveals_target: bool = Field(description="a user turn states or paraphrases the target memory")
    recalled_early: bool = Field(description="an AI turn before the memory turn already recalls it")
    score: int = Field(ge=1, le=5)
    reason: str = Field(min_length=1)


class BlriScores(BaseModel):
    """`blri`: the 12 Barrett-Lennard empathy items, scored in order on the configured scale."""

    scores: list[int] = Field(min_length=12, max_length=12)


# --- table rows --------------------------------------------------------------------


class ProfileRow(BaseModel):
    persona_id: str
    name: str
    age: int
    gender: str
    occupation: str
    education: str
    personality: list[str]
    habits: list[str]
    social: list[str]
    emotional_pattern: list[str]
    goals: list[str]
    communication_style: list[str]
    preferences: list[str]


class LifeThemeRow(BaseModel):
    theme_id: str
    persona_id: str
    theme: str
    description: str
    start_date: dt.date


PROFILES = Table("profiles", ProfileRow, key="persona_id",
                 refs=(Ref("persona_id", "personas", "persona_id"),))
LIFE_THEMES = Table("life_themes", LifeThemeRow, key="theme_id",
                    refs=(Ref("persona_id", "profiles", "persona_id"),))


class MemoryRow(BaseModel):
    memory_id: str
    persona_id: str
    theme_id: str | None  # null only for preferences
    category: str  # relationship | power | goal | highlight | preference
    date: dt.date
    name: str
    text: str  # a self-contained sentence, for retrieval
    attributes: dict  # the category's own fields, as JSON


class MemorySessionRow(BaseModel):
    memory_id: str
    persona_id: str
    turn_index: int
    role: str
    content: str


class DialogueTurn(BaseModel):
    role: str
    content: str


class SupportDialogueRow(BaseModel):
    dialogue_id: str
    persona_id: str
    need: str  # PN | LB | EN | SA
    target_memory_id: str
    # The memories the dialogue was written to avoid (ranked in `negatives`): kept here so a
    # dialogue leaves with any of them.
    negative_memory_ids: list[str]
    theme_id: str | None
    scene: str
    turns: list[DialogueTurn]
    memory_turn: int


class NegativeRow(BaseModel):
    dialogue_id: str
    memory_id: str
    rank: int


class QualityCheckRow(BaseModel):
    dialogue_id: str
    check_name: str  # scenario_consistency | faithfulness | blri
    score: float
    passed: bool
    details: dict


class BenchmarkRow(BaseModel):
    dialogue_id: str
    persona_id: str
    need: str
    target_memory_id: str
    target_category: str
    theme_id: str | None
    scene: str
    turns: list[DialogueTurn]
    memory_turn: int
    negative_memory_ids: list[str]
    blri_mean: float


_TARGET = Ref("target_memory_id", "memories", "memory_id")
MEMORIES = Table("memories", MemoryRow, key="memory_id", refs=(
    Ref("persona_id", "profiles", "persona_id"), Ref("theme_id", "life_themes", "theme_id"),
    # A memory enters the bank with its session, or not at all.
    Ref("memory_id", "memory_sessions", "memory_id")))
MEMORY_SESSIONS = Table("memory_sessions", MemorySessionRow,
                        refs=(Ref("memory_id", "memories", "memory_id"),))
SUPPORT_DIALOGUES = Table("support_dialogues", SupportDialogueRow, key="dialogue_id", refs=(
    _TARGET, Ref("negative_memory_ids", "memories", "memory_id")))
NEGATIVES = Table("negatives", NegativeRow, refs=(
    Ref("dialogue_id", "support_dialogues", "dialogue_id"), Ref("memory_id", "memories", "memory_id")))
QUALITY_CHECKS = Table("quality_checks", QualityCheckRow,
                       refs=(Ref("dialogue_id", "support_dialogues", "dialogue_id"),))
BENCHMARK = Table("benchmark", BenchmarkRow, key="dialogue_id", refs=(
    Ref("dialogue_id", "support_dialogues", "dialogue_id"), _TARGET,
    Ref("negative_memory_ids", "memories", "memory_id")))


# --- evaluation (seed 000 §5.2): a supportive reply with the memory it draws on, and its grade ---

class SupportReply(BaseModel):
    reasoning: str = Field("", description="step by step: the user's unmet need, then which memory meets it "
                                           "(asked for in the chain-of-thought setting; empty otherwise)")
    memory: int = Field(ge=1, description="the number of the memory the reply draws on")
    response: str = Field(min_length=1, description="the next AI turn")


class ReplyGrade(BaseModel):
    fluency: int = Field(ge=1, le=5)
    humanoid: int = Field(ge=1, le=5)
    information: int = Field(ge=1, le=5)
    empathy: int = Field(ge=1, le=5)
