"""Every stage the simulator can answer: emotion scoring, and each installed recipe's."""

from __future__ import annotations

from memsynth.generation.registry import simulated_answers
from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.emotions import ANSWERS as EMOTIONS


def recipe_answers() -> dict[str, StageAnswer]:
    """The engine's own stages' answers (emotion scoring) and every registered recipe's
    (found through the recipe registry)."""
    return {**EMOTIONS, **simulated_answers()}
