"""enpmr — emotional support with need-aware memory recall (ENPMR-Bench).

options.py: options and the seed's facts (counts, needs, need → memory rule, BLRI) ·
checks.py: the rules · stages.py: stage declarations · plan.py: what code decides
(targets and negatives) · chain.py: the per-persona chain · simulated.py: the simulator's answers.
Templates: prompts/enpmr/<stage>.j2 (English) and <stage>.zh.j2 · models: schemas/enpmr.py.
"""

from flows.enpmr.chain import SEED_FIGURES, EnpmrRecipe, blri_mean, history_window
from flows.enpmr.options import BLRI_ITEMS, NEED_TARGETS, NEEDS, EnpmrOptions, MemoryKind
from flows.enpmr.plan import DialoguePlan, can_meet, memory_text, plan_dialogues

RECIPE = EnpmrRecipe

__all__ = ["BLRI_ITEMS", "NEEDS", "NEED_TARGETS", "RECIPE", "SEED_FIGURES", "DialoguePlan", "EnpmrOptions",
           "EnpmrRecipe", "MemoryKind", "blri_mean", "can_meet", "history_window", "memory_text",
           "plan_dialogues"]
