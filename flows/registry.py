"""The recipes, by name: the one place the engine looks them up.

A recipe is a package (`flows/<name>/` here) whose `RECIPE` is a `memsynth.recipe.Recipe`
subclass. Beside it, two optional modules: `simulated` (`ANSWERS`, how the simulator
answers its stages) and `release` (`RELEASE`, what `memsynth release` writes). Adding a
recipe is its own files and one line in `RECIPES`, or, for a recipe kept outside this
repository, `register()` or the `MEMSYNTH_RECIPES` variable (`name=package,…`).
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
from typing import TYPE_CHECKING, Any

from memsynth.errors import ConfigError

if TYPE_CHECKING:
    from memsynth.recipe import Recipe

RECIPES: dict[str, str] = {
    "characters": "flows.characters",
    "enpmr": "flows.enpmr",
    "pal": "flows.pal",
    "stratmem": "flows.stratmem",
}

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")


def register(name: str, package: str) -> None:
    """Make the recipe in `package` buildable as `name` (in this process)."""
    if not _NAME.match(name):
        raise ConfigError(f"recipe name {name!r}: use lower-case letters, digits and _")
    RECIPES[name] = package


def _registered() -> dict[str, str]:
    extra = {}
    for pair in filter(None, (p.strip() for p in os.environ.get("MEMSYNTH_RECIPES", "").split(","))):
        name, sep, package = pair.partition("=")
        if not sep or not _NAME.match(name.strip()) or not package.strip():
            raise ConfigError(f"MEMSYNTH_RECIPES: expected name=package, got {pair!r}")
        extra[name.strip()] = package.strip()
    return {**RECIPES, **extra}


def names() -> list[str]:
    """Every recipe a config may name."""
    return sorted(_registered())


def _package(name: str) -> str:
    known = _registered()
    if name not in known:
        raise ConfigError(f"unknown recipe {name!r} (known: {', '.join(sorted(known))})")
    return known[name]


def recipe_class(name: str) -> type[Recipe]:
    """The `Recipe` subclass registered as `name`."""
    from memsynth.recipe import Recipe

    package = _package(name)
    try:
        cls = importlib.import_module(package).RECIPE
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"recipe {name!r}: cannot load RECIPE from {package}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Recipe)):
        raise ConfigError(f"recipe {name!r}: {package}.RECIPE is not a memsynth.recipe.Recipe subclass")
    if cls.name != name:
        raise ConfigError(f"recipe {name!r}: {package}.RECIPE is named {cls.name!r}")
    return cls


def _optional_module(name: str, module: str) -> Any | None:
    qualified = f"{_package(name)}.{module}"
    if importlib.util.find_spec(qualified) is None:
        return None
    return importlib.import_module(qualified)


def simulated_answers() -> dict[str, Any]:
    """The simulator's answers for every recipe's stages, keyed by schema name."""
    answers: dict[str, Any] = {}
    for name in names():
        module = _optional_module(name, "simulated")
        if module is not None:
            answers.update(module.ANSWERS)
    return answers


def release_spec(name: str) -> Any:
    """What the recipe's `release` module declares for `memsynth release`."""
    module = _optional_module(name, "release")
    if module is None:
        raise ConfigError(f"recipe {name!r} declares no release format (no {_package(name)}.release)")
    return module.RELEASE



def importer(name: str) -> Any:
    """`import_file(path, warehouse, dataset)` of the recipe's `importer` module: the seed's own
    release loaded as a version."""
    module = _optional_module(name, "importer")
    if module is None:
        raise ConfigError(f"recipe {name!r} has no importer (no {_package(name)}.importer)")
    return module.import_file


def evaluation_tasks(name: str) -> dict[str, Any]:
    """`memsynth eval` tasks of the recipe's `evaluation` module (`TASKS`: name → function);
    empty when it has none."""
    module = _optional_module(name, "evaluation")
    return dict(module.TASKS) if module is not None else {}


def evaluation_stages(name: str) -> tuple[Any, ...]:
    """The prompted stages of the recipe's evaluation tasks (`STAGES`); () when it has none."""
    module = _optional_module(name, "evaluation")
    return tuple(getattr(module, "STAGES", ())) if module is not None else ()
