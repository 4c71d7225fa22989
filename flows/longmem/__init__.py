"""longmem — LongMemEval-style long-term memory, in English and Chinese.

catalog_en.py / catalog_zh.py: the attributes, as data · options.py: options and LongMemEval's
figures · plan.py: facts, session dates and computed answers · stages.py: the two stages and
their checks · chain.py: the per-persona chain · gold.py: checks that make the gold right ·
seed_format.py: LongMemEval's JSON · release.py: what a release holds. Templates:
prompts/longmem/<stage>.j2 and <stage>.zh.j2 · models: schemas/longmem.py. No simulated.py:
the simulator answers its stages from their schemas and variables.
"""

from flows.longmem.chain import LongmemRecipe
from flows.longmem.options import LongmemOptions

RECIPE = LongmemRecipe

__all__ = ["RECIPE", "LongmemOptions", "LongmemRecipe"]
