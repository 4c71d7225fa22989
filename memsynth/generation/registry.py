"""The installed recipes, by name: the one place the engine looks them up.

A recipe is a package whose `RECIPE` is a `memsynth.generation.recipe.Recipe` subclass, announced by the
distribution that installs it as an entry point of the group `memsynth.recipes`:

    [project.entry-points."memsynth.recipes"]
    toy = "toy_recipe"

so a lab's recipe, in its own package, is `pip install`ed and appears in `memsynth recipes`
without touching this repository; the shipped recipes (`flows/`) register the same way in
memsynth's own `pyproject.toml`. Beside `RECIPE`, optional modules of the package: `simulated`
(`ANSWERS`, how the simulator answers its stages), `release` (`RELEASE`), `importer`
(`import_file`) and `evaluation` (`TASKS`, `STAGES`). The engine imports none of them by name:
they are found here, at run time, so no engine module depends on a recipe.

A recipe project not installed (one `memsynth recipe new` just made) is found through
`MEMSYNTH_RECIPE_PATH`: folders, separated as PATH is, each holding a project whose
pyproject.toml declares its entry points as above. The folder goes at the end of sys.path,
so it never shadows an installed module, and every process a build starts (the simulator,
Dask workers) inherits the variable.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
import sys
import tomllib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any

from memsynth.core.errors import ConfigError

if TYPE_CHECKING:
    from pathlib import Path

    from memsynth.core.config import BuildConfig
    from memsynth.generation.recipe import Recipe

GROUP = "memsynth.recipes"
PATH_VARIABLE = "MEMSYNTH_RECIPE_PATH"
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
_PACKAGE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_added: dict[str, str] = {}  # register(): a recipe known to this process only (a notebook, a test)


@functools.cache
def _installed() -> dict[str, str]:
    found: dict[str, str] = {}
    for point in entry_points(group=GROUP):
        if not _NAME.match(point.name):
            dist = point.dist.name if point.dist else "an installed package"
            raise ConfigError(f"{dist} registers a recipe named {point.name!r}: use lower-case letters, digits and _")
        found[point.name] = point.value
    return found


def register(name: str, package: str) -> None:
    """Make the recipe in `package` known as `name`, in this process only."""
    if not _NAME.match(name):
        raise ConfigError(f"recipe name {name!r}: use lower-case letters, digits and _")
    _added[name] = package


def _registered() -> dict[str, str]:
    return {**_installed(), **_on_path(os.environ.get(PATH_VARIABLE, "")), **_added}


@functools.cache
def _on_path(value: str) -> dict[str, str]:
    """The recipes of the projects `MEMSYNTH_RECIPE_PATH` names (its folders put on sys.path)."""
    from pathlib import Path

    found: dict[str, str] = {}
    for folder in (f for f in value.split(os.pathsep) if f.strip()):
        project = Path(folder).expanduser().resolve()
        pyproject = project / "pyproject.toml"
        try:
            declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{PATH_VARIABLE}: {folder} holds no pyproject.toml (a recipe project does: "
                              "memsynth recipe new NAME makes one)") from None
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise ConfigError(f"{PATH_VARIABLE}: {pyproject} cannot be read: {exc}") from None
        points = declared.get("project", {}).get("entry-points", {}).get(GROUP)
        if not isinstance(points, dict) or not points:
            raise ConfigError(f'{PATH_VARIABLE}: {pyproject} declares no [project.entry-points."{GROUP}"]')
        for name, package in points.items():
            if not _NAME.match(str(name)) or not isinstance(package, str) or not _PACKAGE.match(package):
                raise ConfigError(f"{PATH_VARIABLE}: {pyproject} registers {name!r} = {package!r}: a recipe is "
                                  "lower-case letters, digits and _, its package a dotted module name")
            found[name] = package
        if str(project) not in sys.path:
            sys.path.append(str(project))
    return found


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
    from memsynth.generation.recipe import Recipe

    package = _package(name)
    try:
        cls = importlib.import_module(package).RECIPE
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"recipe {name!r}: cannot load RECIPE from {package}: {exc}") from exc
    if not (isinstance(cls, type) and issubclass(cls, Recipe)):
        raise ConfigError(f"recipe {name!r}: {package}.RECIPE is not a memsynth.generation.recipe.Recipe subclass")
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


def audit_plan(name: str) -> Any | None:
    """The recipe's `AuditPlan` (`audits` module, `AUDITS`; memsynth.generation.audit); None: none."""
    module = _optional_module(name, "audits")
    return getattr(module, "AUDITS", None) if module is not None else None


def audited_stages(name: str) -> tuple[Any, ...]:
    """The stages an audit may read: the recipe's chain and its evaluation's."""
    return (*recipe_class(name).all_stages(), *evaluation_stages(name))


def audits(name: str) -> dict[str, Any]:
    """Stage name → its `AuditStage` (memsynth.generation.audit), for every stage the recipe audits."""
    from memsynth.generation.audit import audit_stages

    return audit_stages(name, recipe_class(name).rules, audit_plan(name), audited_stages(name))


def audit_rules(name: str) -> dict[str, tuple[str, ...]]:
    """Stage name → the ids of the rules its audit reads (memsynth.generation.audit.audited_rules)."""
    from memsynth.generation.audit import audited_rules

    return audited_rules(name, audit_plan(name), audited_stages(name))


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


def mutant_aims(name: str) -> tuple[Any, ...]:
    """The mutators the recipe aims at its rules (`mutants` module, `AIMS`); () when it has none."""
    module = _optional_module(name, "mutants")
    return tuple(getattr(module, "AIMS", ())) if module is not None else ()


def evaluation_stages(name: str) -> tuple[Any, ...]:
    """The prompted stages of the recipe's evaluation tasks (`STAGES`); () when it has none."""
    module = _optional_module(name, "evaluation")
    return tuple(getattr(module, "STAGES", ())) if module is not None else ()


def load_config(path: Path | str) -> BuildConfig:
    """Read a YAML build config and resolve its recipe's options (every default filled in);
    any mistake is one ConfigError line naming the file and the setting."""
    from memsynth.core.config import read_config

    config = read_config(path)
    try:
        return resolve_options(config)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from exc


def config_of_version(recorded: dict[str, Any], **changes: Any) -> BuildConfig:
    """The config a version records, with `changes`, its options resolved again."""
    from memsynth.core.config import BuildConfig

    return resolve_options(BuildConfig.of_version(recorded, **changes), recorded=True)


def resolve_options(config: BuildConfig, *, recorded: bool = False) -> BuildConfig:
    """`config` with its recipe options validated by the recipe and every default filled in, so
    the published config and its hash say what was built. A recipe that is only imported is
    refused unless the config is one a version `recorded`."""
    from pydantic import ValidationError

    try:
        recipe = recipe_class(config.recipe)
    except ConfigError as exc:
        raise ConfigError(f"recipe: {exc}") from exc
    if not recipe.buildable and not recorded:
        raise ConfigError(f"recipe: recipe {config.recipe!r} is imported, not built: "
                          f"memsynth import {config.recipe} FILE --dataset D")
    try:
        resolved = recipe.options_model.model_validate(config.recipe_options)
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(["recipe_options", *(str(p) for p in err["loc"])])
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        raise ConfigError(f"{where}: {err['msg'].removeprefix('Value error, ')}{more}") from exc
    config.recipe_options = resolved.model_dump(mode="json")
    _check_stage_models(config, recipe)
    return config


def _check_stage_models(config: BuildConfig, recipe: type[Recipe]) -> None:
    """Every key of llm.stages is a kind or a stage of the recipe: a typo is not silently
    answered by the default model."""
    from memsynth.core.config import STAGE_KINDS
    from memsynth.generation.emotions import SCORE

    stages = [*recipe.all_stages(), *evaluation_stages(recipe.name), SCORE]
    stages += [s.judge.stage for s in stages if s.judge is not None]
    known = {n for s in stages for n in (s.name, s.qualified_name)}
    for key in config.llm.stages:
        if key not in STAGE_KINDS and key not in known:
            names = ", ".join(sorted({s.name for s in stages}))
            raise ConfigError(f"llm.stages.{key}: the recipe {recipe.name} has no stage so named "
                              f"(its stages: {names}; or a kind: {', '.join(STAGE_KINDS)})")
