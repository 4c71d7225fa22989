"""pal — personalized assistant with logs (PAL-Bench / PAL-Set).

options.py: options and the seed's sampling constants · checks.py: the rules ·
stages.py: stage declarations · plan.py: what code decides (times, sessions, skeletons) ·
chain.py: the per-persona chain · simulated.py: the simulator's answers.
Templates: prompts/pal/<stage>.j2 (English) and <stage>.zh.j2 · models: schemas/pal.py.
"""

from flows.pal.chain import SEED_FIGURES, PalRecipe
from flows.pal.options import LOG_TYPES, PalOptions
from flows.pal.plan import (
           ACTION_GRAMMAR,
           ACTION_LABELS,
           build_skeleton,
           conforms_to_grammar,
           sample_dialogues,
)

RECIPE = PalRecipe

__all__ = ["ACTION_GRAMMAR", "ACTION_LABELS", "LOG_TYPES", "RECIPE", "SEED_FIGURES", "PalOptions", "PalRecipe",
           "build_skeleton", "conforms_to_grammar", "sample_dialogues"]
