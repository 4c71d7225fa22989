"""pal's stages: template `prompts/pal/<name>.j2`, output model in `schemas/pal.py`, checks."""

from __future__ import annotations

from pydantic import BaseModel

from flows.pal import checks as c
from flows.pal import judges as j
from memsynth.generation.stage import Check, Judge, Policy, Stage
from schemas.pal import (
    AspectPreferences,
    Candidates,
    Dialogue,
    Experience,
    Logs,
    MonthSituations,
    PalProfiles,
    RequirementTypes,
    SessionRequirements,
    SolutionPreferences,
    Timeline,
)


def _stage(name: str, output: type[BaseModel], *checks: Check, policy: Policy = "drop",
           judge: Judge | None = None) -> Stage:
    return Stage("pal", name, output, checks=checks, policy=policy, judge=judge)


# Flagged, not dropped: the recipe keeps each valid profile of the batch on its own.
PROFILE = _stage("profile", PalProfiles, c.batch_size, c.profile_fields, c.varied_batch, policy="flag")
TIMELINE = _stage("timeline", Timeline, c.months_in_order, c.month_sentences)
REQUIREMENT_TYPES = _stage("requirement_types", RequirementTypes, c.distinct_requirement_types)
PREFERENCES = _stage("preferences", AspectPreferences, c.covers_requirement_types, c.preference_sentences,
                     judge=j.PREFERENCES)
SITUATIONS = _stage("situations", MonthSituations, c.situation_count, c.spans_consecutive,
                    c.valid_requirement_ids, c.situation_sentences)
EXPERIENCE = _stage("experience", Experience, c.ends_before_session)
LOGS = _stage("logs", Logs, c.enough_logs, c.log_times, c.log_format)
REQUIREMENTS = _stage("requirements", SessionRequirements, c.one_framework_per_topic, c.distinct_needs,
                      c.brief_query, judge=j.REQUIREMENTS)
CANDIDATES = _stage("candidates", Candidates, c.candidates_per_topic, c.distinct_candidates)
SOLUTION_PREFERENCES = _stage("solution_preferences", SolutionPreferences, c.verbatim_choices,
                              c.one_sentence_reasons, judge=j.SOLUTION_PREFERENCES)
DIALOGUE = _stage("dialogue", Dialogue, c.follows_skeleton, c.direct_rejection, c.response_offers_nothing_new,
                  c.preferences_not_presumed)

# Each judge follows the stage it reviews.
STAGES = (PROFILE, TIMELINE, REQUIREMENT_TYPES, PREFERENCES, j.PREFERENCES.stage, SITUATIONS, EXPERIENCE, LOGS,
          REQUIREMENTS, j.REQUIREMENTS.stage, CANDIDATES, SOLUTION_PREFERENCES, j.SOLUTION_PREFERENCES.stage,
          DIALOGUE)
