"""`memsynth recipe new NAME`: a recipe project to start from, which builds on the simulator,
releases and passes its own tests as made.

The project's files are the templates in `recipe_template/` (each `*.tmpl`, so no tool takes
them for this repository's code), with `__recipe__` replaced by the name and `__Recipe__` by
its CamelCase. The project is written into a hidden folder beside its place and moved there in
one rename: a failure leaves nothing behind.
"""

from __future__ import annotations

import importlib.util
import keyword
import os
import re
import shutil
import tempfile
from pathlib import Path

import click

from memsynth.cli.output import out
from memsynth.core.errors import ConfigError

TEMPLATE = Path(__file__).resolve().parent / "recipe_template"
# A recipe name is a table prefix, a package and an entry point: lower-case ASCII, as the
# registry takes it (memsynth/generation/registry.py).
_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")


def check_name(name: str) -> None:
    """Refuse, in one line, a name that cannot be a new recipe's package."""
    from memsynth.generation import registry

    shown = name.encode("unicode_escape").decode("ascii")[:60]
    if not _NAME.fullmatch(name):
        raise ConfigError(f"recipe name {shown!r}: use 1-32 lower-case letters, digits and _, starting with a letter")
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        raise ConfigError(f"recipe name {name!r} is a Python keyword; a recipe's package cannot be named so")
    if name.startswith("_") or name.endswith("_"):
        raise ConfigError(f"recipe name {name!r}: start and end it with a letter or digit")
    if name in registry.names():
        raise ConfigError(f"recipe name {name!r}: a recipe of that name is already installed")
    try:
        taken = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        taken = True
    if taken:
        raise ConfigError(f"recipe name {name!r}: a module of that name is already importable here; "
                          "the recipe's package would clash with it")


def camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def scaffold(name: str, parent: Path) -> Path:
    """Write the project `parent/name` for recipe `name`; return its folder."""
    check_name(name)
    target = parent / name
    if target.exists() or target.is_symlink():
        raise ConfigError(f"{target} already exists; choose another --dir or name")
    if not parent.is_dir():
        raise ConfigError(f"--dir {parent}: no such folder")
    work = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=parent))
    try:
        for source in sorted(TEMPLATE.rglob("*.tmpl")):
            relative = str(source.relative_to(TEMPLATE)).removesuffix(".tmpl").replace("__recipe__", name)
            text = source.read_text(encoding="utf-8").replace("__Recipe__", camel(name)).replace("__recipe__", name)
            path = work / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.rename(work, target)  # one step: the project is there whole, or not at all
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return target


@click.group()
def recipe() -> None:
    """Make a recipe of your own (see docs/writing-a-recipe.md)."""


@recipe.command("new")
@click.argument("name")
@click.option("--dir", "directory", default=".", show_default=True, type=click.Path(file_okay=False),
              help="the folder to make the project NAME/ in")
def new(name: str, directory: str) -> None:
    """Make NAME/, a recipe project: two stages with en and zh prompts, schemas, checks from the
    check library, a rules table, a release format, configs and its own tests. It builds on the
    simulator as made: `MEMSYNTH_RECIPE_PATH=NAME memsynth build NAME/configs/NAME.yaml --llm
    simulator` (or `pip install -e NAME` first)."""
    target = scaffold(name, Path(directory))
    out.print(f"made the recipe project {target}/ (recipe {name})")
    out.print(f"  try it: MEMSYNTH_RECIPE_PATH={target.resolve()} memsynth build {target}/configs/{name}.yaml "
              "--llm simulator")
