"""pal's stages: template `prompts/pal/<name>.j2`, output model in `schemas/pal.py`, checks."""

from __future__ import annotations

from pydantic import BaseModel

from flows.pal import candidate_checks as cc
from flows.pal import checks as c
from flows.pal import judges as j
from flows.pal import prose_checks as pc
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


# max_tokens: the stage's budget (memsynth.llm.budget), about twice the largest answer a
# strong model wrote to its prompt (../shared/model-answers, indented JSON): tests/test_budgets.py.
# A stage whose answer grows with an option (pal's profile batch, logs, dialogue) has none.
def _stage(name: str, output: type[BaseModel], *checks: Check, policy: Policy = "drop",
           judge: Judge | None = None, max_tokens: int | None = None) -> Stage:
    return Stage("pal", name, output, checks=checks, policy=policy, judge=judge,
                 max_tokens=max_tokens)


# Flagged, not dropped: the recipe keeps each valid profile of the batch on its own.
PROFILE = _stage("profile", PalProfiles, c.batch_size, c.profile_fields, c.varied_batch, c.unlike_the_example,
                 policy="flag")
TIMELINE = _stage("timeline", Timeline, c.months_in_order, c.month_sentences, pc.user_not_named, pc.no_traits,
                  pc.months_span_aspects, max_tokens=1024)
REQUIREMENT_TYPES = _stage("requirement_types", RequirementTypes, c.distinct_requirement_types,
                           pc.lasting_requirement_types, pc.short_requirement_types, max_tokens=512)
PREFERENCES = _stage("preferences", AspectPreferences, c.covers_requirement_types, c.preference_sentences,
                     pc.user_not_named, judge=j.PREFERENCES, max_tokens=2560)
SITUATIONS = _stage("situations", MonthSituations, c.situation_count, c.spans_consecutive,
                    c.valid_requirement_ids, c.situation_sentences, pc.user_not_named, max_tokens=2560)
EXPERIENCE = _stage("experience", Experience, c.ends_before_session, pc.stays_in_span, pc.weekdays_agree, pc.user_not_named,
                    max_tokens=1024)
LOGS = _stage("logs", Logs, c.enough_logs, c.log_times, c.log_format)
REQUIREMENTS = _stage("requirements", SessionRequirements, c.one_framework_per_topic, c.distinct_needs,
                      c.brief_query, pc.one_question_query, pc.user_not_named, pc.undated_evidences, pc.evidences_are_facts,
                      pc.query_without_details, judge=j.REQUIREMENTS,
                      max_tokens=1536)
CANDIDATES = _stage("candidates", Candidates, c.candidates_per_topic, c.distinct_candidates,
                    pc.one_solution_each, pc.one_sentence_solutions, cc.keeps_the_deadline, max_tokens=1280)
SOLUTION_PREFERENCES = _stage("solution_preferences", SolutionPreferences, c.verbatim_choices,
                              c.one_sentence_reasons, pc.reasons_in_users_voice, judge=j.SOLUTION_PREFERENCES, max_tokens=1024)
DIALOGUE = _stage("dialogue", Dialogue, c.follows_skeleton, c.discussion_takes_no_side, c.direct_rejection,
                  c.response_offers_nothing_new, c.preferences_not_presumed, pc.user_not_named, pc.speaks_to_the_user, pc.one_question_inquiry)

# Each judge follows the stage it reviews.
STAGES = (PROFILE, TIMELINE, REQUIREMENT_TYPES, PREFERENCES, j.PREFERENCES.stage, SITUATIONS, EXPERIENCE, LOGS,
          REQUIREMENTS, j.REQUIREMENTS.stage, CANDIDATES, SOLUTION_PREFERENCES, j.SOLUTION_PREFERENCES.stage,
          DIALOGUE)
