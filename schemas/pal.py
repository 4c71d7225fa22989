"""pal (PAL-Bench / PAL-Set): stage output models and table rows.

Stage outputs are what the LLM must answer; rows are what lands in the warehouse.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import BaseModel, Field, StrictInt

from memsynth.core.tables import Ref, Table

Level = Literal["low", "medium", "high"]
ASPECTS = ("work", "health", "family", "leisure")
# The eight log types of the seed's Table 6.
LogType = Literal["web_search", "content_publishing", "content_browsing", "message_sending",
                  "message_receiving", "schedule_management", "transaction_record", "device_operation"]
UserAction = Literal["topic_inquiry", "requirement_confirmation", "solution_discussion",
                     "solution_feedback"]
AssistantAction = Literal["requirement_prediction", "solution_proposal", "solution_discussion",
                          "feedback_response"]
SPAN_PATTERN = r"^\d{4}-\d{2}-\d{2} ~ \d{4}-\d{2}-\d{2}$"
MINUTE_PATTERN = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$"

# --- stage outputs -----------------------------------------------------------------


class BigFive(BaseModel):
    openness: Level
    conscientiousness: Level
    extraversion: Level
    agreeableness: Level
    neuroticism: Level


class PalProfile(BaseModel):
    name: str = Field(min_length=1)
    gender: str = Field(min_length=1)
    age: int = Field(ge=18, le=90)
    occupation: str = Field(min_length=1, description="1-3 sentences, calling the person 'the user'")
    health_status: str = Field(min_length=1, description="1-3 sentences, calling the person 'the user'")
    family_members: str = Field(min_length=1, description="1-3 sentences, calling the person 'the user'")
    hobbies: str = Field(min_length=1, description="1-3 sentences, calling the person 'the user'")
    personality: BigFive


class PalProfiles(BaseModel):
    """`profile`: one profile per persona of the batch, in the order given."""

    profiles: list[PalProfile] = Field(min_length=1)


class MonthEntry(BaseModel):
    month: str = Field(pattern=r"^\d{4}-\d{2}$")
    summary: str = Field(min_length=1, description="at least 5 sentences of objective events")


class Timeline(BaseModel):
    """`timeline`: one entry per month, in order."""

    months: list[MonthEntry] = Field(min_length=1)


class RequirementTypes(BaseModel):
    """`requirement_types`: 4-5 short abstract phrases per aspect."""

    work: list[str] = Field(min_length=4, max_length=5)
    health: list[str] = Field(min_length=4, max_length=5)
    family: list[str] = Field(min_length=4, max_length=5)
    leisure: list[str] = Field(min_length=4, max_length=5)


class PreferenceEntry(BaseModel):
    requirement_id: str = Field(pattern=r"^(work|health|family|leisure)-\d+$")
    analysis: str = Field(min_length=1, description="why this user would prefer what they do")
    pos: str = Field(min_length=1, description="3-5 statements (sentences or ；-joined clauses)")
    neg: str = Field(min_length=1, description="3-5 statements (sentences or ；-joined clauses)")


class AspectPreferences(BaseModel):
    """`preferences`: positive and negative preferences for each requirement type of one aspect."""

    items: list[PreferenceEntry] = Field(min_length=1)


class SituationEntry(BaseModel):
    time_span: str = Field(pattern=SPAN_PATTERN, description="YYYY-MM-DD ~ YYYY-MM-DD")
    # 2-3: every PAL-Set dialogue has two or three topics, one per requirement id.
    requirement_ids: list[str] = Field(min_length=2, max_length=3)
    situation: str = Field(min_length=1, description="at least 5 sentences")


class MonthSituations(BaseModel):
    """`situations`: 4-6 consecutive situations of one month."""

    situations: list[SituationEntry] = Field(min_length=4, max_length=6)


class Experience(BaseModel):
    """`experience`: a situation expanded into objective events."""

    experience: str = Field(min_length=1)


class ImplicitNeed(BaseModel):
    need: str = Field(min_length=1)
    evidences: list[str] = Field(min_length=1, max_length=5)


class TopicRequirement(BaseModel):
    """One topic's framework: the vague query, exactly two implicit needs, the full requirement."""

    requirement_id: str = Field(description="the topic's requirement id, as given")
    user_query: str = Field(min_length=1)
    implicit_needs: list[ImplicitNeed] = Field(min_length=2, max_length=2)
    requirement: str = Field(min_length=1)


class SessionRequirements(BaseModel):
    """`requirements`: the frameworks of one session's 2-3 topics, written together."""

    topics: list[TopicRequirement] = Field(min_length=1, max_length=3)


class TopicCandidates(BaseModel):
    requirement_id: str
    solutions: list[str] = Field(min_length=8, max_length=8)


class Candidates(BaseModel):
    """`candidates`: eight diverse one-sentence solutions for each topic of a session."""

    topics: list[TopicCandidates] = Field(min_length=1, max_length=3)


class RatedSolution(BaseModel):
    solution: str = Field(min_length=1, description="copied verbatim from the candidates")
    reason: str = Field(min_length=1, description="one sentence, from the user's point of view")


class SolutionPreferences(BaseModel):
    """`solution_preferences`: the two liked and two disliked candidates, verbatim."""

    analysis: str = Field(min_length=1, description="how the candidates fit this user")
    liked: list[RatedSolution] = Field(min_length=2, max_length=2)
    disliked: list[RatedSolution] = Field(min_length=2, max_length=2)


# --- judges: rules a model must see (asked after the checks pass) -------------------


class PreferenceVerdict(BaseModel):
    requirement_id: str
    personal: bool = Field(description="pos and neg are this user's own: not what nearly anyone would accept, "
                                       "or nearly anyone reject")
    reason: str = Field(min_length=1, description="one sentence")


class PreferencesReview(BaseModel):
    """`preferences_review`: is each requirement type's pos/neg personal to the user?"""

    items: list[PreferenceVerdict] = Field(min_length=1)


class TopicVerdict(BaseModel):
    requirement_id: str
    needs_on_topic: bool = Field(description="both implicit needs belong to the topic's requirement type")
    reason: str = Field(min_length=1, description="one sentence")


class RequirementsReview(BaseModel):
    """`requirements_review`: do both implicit needs of each topic revolve around its requirement type?"""

    topics: list[TopicVerdict] = Field(min_length=1)


class SolutionPreferencesReview(BaseModel):
    """`solution_preferences_review`: do the liked and disliked choices follow the user's preferences?"""

    liked_fit: bool = Field(description="each liked solution fits the positive preferences and meets no negative one")
    disliked_clash: bool = Field(description="each disliked solution meets a negative preference or misses "
                                             "the positive ones")
    reason: str = Field(min_length=1, description="one sentence")


class LogEntry(BaseModel):
    timestamp: str = Field(pattern=MINUTE_PATTERN, description="YYYY-MM-DD HH:MM")
    event: str = Field(min_length=1)
    type: LogType
    content: str = Field(min_length=1)


class Logs(BaseModel):
    """`logs`: one operation per log, timestamps strictly increasing within the span."""

    logs: list[LogEntry] = Field(min_length=1)


class Utterance(BaseModel):
    action: str
    reference: str
    content: str = Field(min_length=1)


class DialogueTurnPair(BaseModel):
    user: Utterance
    assistant: Utterance


class Dialogue(BaseModel):
    """`dialogue`: the words for every slot of the skeleton, in order."""

    turns: list[DialogueTurnPair] = Field(min_length=1)


# --- table rows --------------------------------------------------------------------


class PalProfileRow(BaseModel):
    persona_id: str
    name: str
    gender: str
    age: int
    occupation: str
    health_status: str
    family_members: str
    hobbies: str
    openness: str
    conscientiousness: str
    extraversion: str
    agreeableness: str
    neuroticism: str


class TimelineRow(BaseModel):
    persona_id: str
    month: str
    summary: str


class RequirementTypeRow(BaseModel):
    persona_id: str
    requirement_id: str
    aspect: str
    description: str


class PreferenceRow(BaseModel):
    persona_id: str
    requirement_id: str
    analysis: str
    pos: str
    neg: str


class SituationRow(BaseModel):
    situation_id: str
    persona_id: str
    month: str
    start_time: dt.datetime  # the span's first day, at a random hour 7-12
    end_time: dt.datetime  # the span's last day, at a random hour 12-21: the dialogue's time
    requirement_ids: list[str]
    text: str
    has_dialogue: bool  # sampled into a dialogue session (otherwise logs only)
    split: str  # history | query (the query month)


class ExperienceRow(BaseModel):
    situation_id: str
    text: str


class NeedRow(BaseModel):
    need: str
    evidences: list[str]


class TopicRow(BaseModel):
    topic_id: str
    situation_id: str
    requirement_id: str
    user_query: str
    implicit_needs: list[NeedRow]
    requirement: str


class CandidateSolutionRow(BaseModel):
    topic_id: str
    candidate_index: int
    solution: str
    feedback: str  # pos | neg | neu
    reason: str | None


class LogRow(BaseModel):
    log_id: str
    situation_id: str
    # The dialogue session whose log window holds this log: the next situation with a
    # dialogue, this one included. Null after the last dialogue.
    session_id: str | None
    persona_id: str
    timestamp: dt.datetime
    log_type: str
    event: str
    content: str


class DialogueTurnRow(BaseModel):
    situation_id: str
    turn_index: int
    speaker: str  # user | assistant
    action: str
    reference: str
    content: str


# Requirement ids ("health-1") are per persona: a reference to one would need the persona
# too, and one never leaves alone (a persona without every requirement's preferences goes).
_PERSONA = Ref("persona_id", "pal_profiles", "persona_id")
_SITUATION = Ref("situation_id", "situations", "situation_id")
PAL_PROFILES = Table("pal_profiles", PalProfileRow, key="persona_id",
                     refs=(Ref("persona_id", "personas", "persona_id"),))
TIMELINES = Table("timelines", TimelineRow, refs=(_PERSONA,))
REQUIREMENT_TYPES = Table("requirement_types", RequirementTypeRow, refs=(_PERSONA,))
PREFERENCES = Table("preferences", PreferenceRow, refs=(_PERSONA,))
SITUATIONS = Table("situations", SituationRow, key="situation_id", refs=(_PERSONA,))
EXPERIENCES = Table("experiences", ExperienceRow, key="situation_id", refs=(_SITUATION,))
TOPICS = Table("topics", TopicRow, key="topic_id", refs=(_SITUATION,))
CANDIDATE_SOLUTIONS = Table("candidate_solutions", CandidateSolutionRow,
                            refs=(Ref("topic_id", "topics", "topic_id"),))
LOGS = Table("logs", LogRow, key="log_id", refs=(
    _SITUATION, Ref("session_id", "situations", "situation_id")))
DIALOGUE_TURNS = Table("dialogue_turns", DialogueTurnRow, refs=(_SITUATION,))


# --- evaluation (seed 004 §5): restatement and its judge, solution generation and selection ---

class Restatement(BaseModel):
    requirement: str = Field(min_length=1, description="the user's actual need, in one sentence")


class RestatementGrade(BaseModel):
    analysis: str = Field(min_length=1)
    score: Literal[0, 0.5, 1, 1.5, 2] = Field(description="1 per implicit need matched, 0.5 per need partly matched")


class ProposedSolution(BaseModel):
    solution: str = Field(min_length=1, description="one solution that fits the user's preferences, in one sentence")


class SolutionChoice(BaseModel):
    analysis: str = Field(min_length=1)
    # Strict: the schema says integers, and "2" for 2 is a model not reading it (a held-out answer).
    selected_solutions: list[StrictInt] = Field(min_length=2, max_length=2,
                                                description="the ids of the two best candidates")
