"""Every stage the simulator can answer: emotion scoring, and each installed recipe's."""

from __future__ import annotations

import functools
from typing import Any

from memsynth.generation.registry import evaluation_stages, names, recipe_class, simulated_answers
from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.emotions import ANSWERS as EMOTIONS


def recipe_answers() -> dict[str, StageAnswer]:
    """The engine's own stages' answers (emotion scoring) and every registered recipe's
    (found through the recipe registry)."""
    from memsynth.simulator.audits import audit_answers

    return {**EMOTIONS, **simulated_answers(), **audit_answers()}


@functools.cache
def stages_by_schema() -> dict[str, Any]:
    """Every stage a build can ask, by its schema name: each recipe's chain, its judges and
    evaluation tasks, and emotion scoring. The simulator holds its answers to their checks."""
    from memsynth.generation.emotions import SCORE
    from memsynth.generation.registry import audits

    stages: list[Any] = [SCORE]
    for name in names():
        cls = recipe_class(name)
        stages += [*cls.all_stages(), *evaluation_stages(name), *audits(name).values()]
    stages += [s.judge.stage for s in stages if s.judge is not None]
    return {s.schema_name: s for s in stages}
