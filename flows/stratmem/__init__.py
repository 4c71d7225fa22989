"""stratmem — strategic memory use (StratMem-Bench): must / nice / irr memory pools per query.

options.py: options and the release's figures · source.py: LoCoMo files and memsynth
datasets as conversations · checks.py: the rules · stages.py: stage declarations ·
chain.py: the per-conversation chain · simulated.py: the simulator's answers ·
seed_format.py: StratMem-Bench's JSON · importer.py: a StratMem-Bench file as a version ·
release.py: what a release holds. Templates: prompts/stratmem/<stage>.j2 and <stage>.zh.j2 ·
models: schemas/stratmem.py.
"""

from flows.stratmem.chain import SEED_FIGURES, StratmemRecipe
from flows.stratmem.options import StratmemOptions

RECIPE = StratmemRecipe

__all__ = ["RECIPE", "SEED_FIGURES", "StratmemOptions", "StratmemRecipe"]
