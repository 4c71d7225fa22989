"""enpmr's stages: template `prompts/enpmr/<name>.j2`, output model in `schemas/enpmr.py`, checks."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from flows.enpmr import checks as c
from flows.enpmr import content_checks as m
from flows.enpmr import form_checks as f
from flows.enpmr import overlap_checks as o
from flows.enpmr import persona_checks as p
from flows.enpmr.options import (
    MIN_ACHIEVED,
    MIN_GOALS,
    MIN_HIGHLIGHTS,
    MIN_NOT_ACHIEVED,
    MIN_NOT_PROFICIENT,
    MIN_POWERS,
    MIN_PROFICIENT,
    MIN_RELATIONSHIPS,
)
from memsynth.generation.stage import Check, Stage
from schemas.enpmr import (
    BlriScores,
    Faithfulness,
    Goals,
    Highlights,
    LifeThemes,
    MemorySession,
    PersonaDescription,
    Powers,
    Preferences,
    Profile,
    Relationships,
    ScenarioCheck,
    Scene,
    SupportDialogue,
)


# max_tokens: the stage's budget (memsynth.llm.budget), about twice the largest answer a
# strong model wrote to its prompt (../shared/model-answers, indented JSON): tests/test_budgets.py.
def _stage(name: str, output: type[BaseModel], *checks: Check, temperature: float | None = None,
           kind: Literal["writer", "judge"] = "writer", max_tokens: int | None = None) -> Stage:
    return Stage("enpmr", name, output, checks=checks, temperature=temperature, kind=kind,
                 max_tokens=max_tokens)


PERSONA = _stage("persona", PersonaDescription, c.persona_is_prose, f.third_person, f.persona_sentences, f.age_in_band,
                 f.names_the_region, temperature=1.0, max_tokens=512)
PROFILE = _stage("profile", Profile, c.distinct_preferences, f.big_five_covered, f.facts_not_repeated, f.short_facts,
                 p.keeps_persona_age, p.keeps_persona_routines,
                 max_tokens=2048)
LIFE_THEMES = _stage("life_themes", LifeThemes, c.theme_dates_in_window, c.distinct_themes, c.enough_themes,
                     f.description_sentences, f.one_theme_per_relative, max_tokens=2560)
RELATIONSHIP = _stage("relationship", Relationships, c.enough_items, c.dates_in_theme, c.quality_mix,
                      f.quality_balanced, c.distinct_names, f.named_people, max_tokens=1792)
POWER = _stage("power", Powers, c.enough_items, c.dates_in_theme, c.chronological, c.proficiency_mix,
               f.kinds_mixed, c.distinct_names, m.proficiency_fits_account, max_tokens=1792)
GOAL = _stage("goal", Goals, c.enough_items, c.dates_in_theme, c.chronological, c.goal_status, c.distinct_names,
              m.measurable_names, max_tokens=768)
HIGHLIGHT = _stage("highlight", Highlights, c.enough_items, c.dates_in_theme, c.distinct_names, f.short_names,
                   max_tokens=1536)
PREFERENCES = _stage("preferences", Preferences, c.enough_items, c.dates_in_window, c.distinct_names, f.short_names,
                     f.one_preference_each, f.preference_sentences, m.dislikes_kept, max_tokens=1536)
MEMORY_SESSION = _stage("memory_session", MemorySession, c.session_alternates, c.user_reveals_memory,
                        c.does_not_recite_title, m.told_near_its_date, max_tokens=1536)
SCENE = _stage("scene", Scene, c.scene_form, o.fits_no_other_memory, max_tokens=512)
SCENARIO_CONSISTENCY = _stage("scenario_consistency", ScenarioCheck, c.scenario_score_agrees, f.one_sentence_reason, temperature=0.0,
                              kind="judge", max_tokens=256)
SUPPORT_DIALOGUE = _stage("support_dialogue", SupportDialogue, c.dialogue_alternates,
                          c.memory_turn_recalls_target, c.recall_length, c.user_never_states_memory,
                          c.no_recall_before_memory_turn, c.recall_avoids_negatives, c.recall_does_not_quote_title,
                          max_tokens=1024)
FAITHFULNESS = _stage("faithfulness", Faithfulness, c.verdict_has_grounds, c.faithfulness_score_agrees,
                      f.one_sentence_reason, temperature=0.0, kind="judge", max_tokens=256)
BLRI = _stage("blri", BlriScores, c.blri_in_scale, c.blri_literal, temperature=0.0, kind="judge",
              max_tokens=256)

STAGES = (PERSONA, PROFILE, LIFE_THEMES, RELATIONSHIP, POWER, GOAL, HIGHLIGHT, PREFERENCES, MEMORY_SESSION,
          SCENE, SCENARIO_CONSISTENCY, SUPPORT_DIALOGUE, FAITHFULNESS, BLRI)

# Per-theme memory stages and the minimums each asks for.
THEME_MEMORY_STAGES: dict[str, tuple[Stage, dict[str, int]]] = {
    "relationship": (RELATIONSHIP, {"min_items": MIN_RELATIONSHIPS}),
    "power": (POWER, {"min_items": MIN_POWERS, "min_proficient": MIN_PROFICIENT,
                      "min_not_proficient": MIN_NOT_PROFICIENT}),
    "goal": (GOAL, {"min_items": MIN_GOALS, "min_achieved": MIN_ACHIEVED,
                    "min_not_achieved": MIN_NOT_ACHIEVED}),
    "highlight": (HIGHLIGHT, {"min_items": MIN_HIGHLIGHTS}),
}
