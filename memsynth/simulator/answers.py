"""How the simulator answers a recipe's stages: functions of the stage's variables.

A build run with `llm.stage_variables` sends each request's stage and variables in the
body (field `memsynth`). A recipe registers one function per stage that turns the
schema-valid draft into an answer that also passes the stage's checks, reading only those
variables — never the prompt, whose wording changes and comes in several languages.
The engine knows no recipe: each recipe keeps its answers in `flows/<recipe>/simulated.py`,
and `memsynth.simulator.stages` gathers them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memsynth.simulator.text import TextMaker

StageAnswer = Callable[[dict[str, Any], Mapping[str, Any], TextMaker], dict[str, Any]]


class AnswerBook(Mapping[str, StageAnswer]):
    """One recipe's simulated answers, keyed by schema name (`<recipe>_<stage>`)."""

    def __init__(self, recipe: str):
        self.recipe = recipe
        self._answers: dict[str, StageAnswer] = {}

    def stage(self, name: str) -> Callable[[StageAnswer], StageAnswer]:
        """Decorator: register the answer for stage `name` of this recipe."""
        def register(fn: StageAnswer) -> StageAnswer:
            self._answers[f"{self.recipe}_{name}"] = fn
            return fn
        return register

    def __getitem__(self, key: str) -> StageAnswer:
        return self._answers[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._answers)

    def __len__(self) -> int:
        return len(self._answers)
