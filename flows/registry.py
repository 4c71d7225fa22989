"""The recipes this project ships, by name."""

from __future__ import annotations

import importlib
from typing import Any

from memsynth.errors import MemsynthError

RECIPES = ("enpmr", "pal")


def recipe_class(name: str) -> Any:
    """The recipe class of `flows/<name>/`."""
    return importlib.import_module(f"flows.{name}").RECIPE


def simulated_answers() -> dict[str, Any]:
    """The simulator's answers for every recipe's stages (`flows/<recipe>/simulated.py`)."""
    answers: dict[str, Any] = {}
    for name in RECIPES:
        answers.update(importlib.import_module(f"flows.{name}.simulated").ANSWERS)
    return answers


def release_spec(name: str) -> Any:
    """What `flows/<name>/release.py` declares for `memsynth release`."""
    if name not in RECIPES:
        raise MemsynthError(f"unknown recipe {name!r} (known: {', '.join(RECIPES)})")
    return importlib.import_module(f"flows.{name}.release").RELEASE
