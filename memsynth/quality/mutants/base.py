"""What every mutator is built on: the context it works in, the mutant it yields, the aim that
points it at a rule, and the paths into an answer (`"turns[*].content"`, or a function of the
answer and the variables giving paths).

A mutator is declared with where it applies and the bound it breaks (a number, or a function of
the variables). It yields only answers that break the rule by its own reading (text.py): a
list already at its maximum gets one item more, not "one more" from below it. A recipe aims
mutators at its rules with `Aim` (flows/<recipe>/mutants.py).
"""

from __future__ import annotations

import copy
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Path = tuple[str | int, ...]
# The rule of an aim derived from a library check no rule of the recipe's table names
# (memsynth.quality.mutants.library): killed by that check alone.
CHECK_RULE = "check:"
# Not a rule of the recipes' tables: the stage's output model itself (dropped or invented fields).
SCHEMA_RULE = "schema"
Where = str | Callable[[Any, Mapping[str, Any]], list[Path]]
Bound = int | Callable[[Mapping[str, Any]], int | None] | None
# What a recipe's functions give a mutator, from the answer and the variables (or the variables
# and the language): word tables to swap, texts to insert, people (name, relation) to name.
Swaps = Callable[[Any, Mapping[str, Any], str], list[tuple[str, dict[str, str]]]]
Texts = Callable[[Mapping[str, Any], str], Sequence[str]]
People = Callable[[Mapping[str, Any], str], list[tuple[str, str]]]


@dataclass(frozen=True)
class Context:
    """What a mutator knows besides the answer: its stage, language, variables and schema."""

    recipe: str
    stage: str
    language: str
    variables: Mapping[str, Any]
    answer_id: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)  # the stage's output JSON schema

    def rng(self, salt: str) -> random.Random:
        """Seeded by the answer and the mutator: the same mutants on every run."""
        return random.Random(f"{self.recipe}/{self.stage}/{self.answer_id}/{salt}")


@dataclass(frozen=True)
class Mutant:
    answer: Any
    mutator: str  # the mutator's kind: "add_sentence", "insert_person:given_name", …
    note: str  # what changed, in a line


class Mutator:
    """Base: `kind` names it in the table; `__call__` yields mutants of one answer."""

    kind = "mutator"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        raise NotImplementedError


@dataclass(frozen=True)
class Aim:
    """A mutator aimed at a rule (an id of the recipe's rules table) on some stages."""

    rule: str
    stages: tuple[str, ...]
    mutator: Mutator


# Paths -----------------------------------------------------------------------------------


def parse_path(spec: str) -> list[str | int | None]:
    """`"turns[*].content"` → ["turns", None, "content"] (None: every item)."""
    out: list[str | int | None] = []
    for part in re.findall(r"[^.\[\]]+|\[\*\]|\[-?\d+\]", spec):
        out.append(None if part == "[*]" else int(part[1:-1]) if part.startswith("[") else part)
    return out


def locate(answer: Any, where: Where, variables: Mapping[str, Any]) -> list[Path]:
    """Every concrete path `where` names in `answer` (those that exist)."""
    if callable(where):
        return list(where(answer, variables))
    paths: list[Path] = [()]
    for step in parse_path(where):
        nxt: list[Path] = []
        for p in paths:
            node = get(answer, p)
            if step is None and isinstance(node, list):
                nxt += [(*p, i) for i in range(len(node))]
            elif isinstance(step, int) and isinstance(node, list) and -len(node) <= step < len(node):
                nxt.append((*p, step % len(node)))
            elif isinstance(step, str) and isinstance(node, dict) and step in node:
                nxt.append((*p, step))
        paths = nxt
    return paths


def get(answer: Any, path: Path) -> Any:
    for step in path:
        answer = answer[step]
    return answer


def put(answer: Any, path: Path, value: Any) -> Any:
    """A deep copy of `answer` with `value` at `path`."""
    out = copy.deepcopy(answer)
    if not path:
        return value
    get(out, path[:-1])[path[-1]] = value
    return out


def _bound(bound: Bound, v: Mapping[str, Any]) -> int | None:
    return bound(v) if callable(bound) else bound


def _texts(answer: Any, where: Where, ctx: Context) -> list[Path]:
    return [p for p in locate(answer, where, ctx.variables) if isinstance(get(answer, p), str) and get(answer, p).strip()]


def _pick(paths: Sequence[Path], rng: random.Random, n: int = 1) -> list[Path]:
    return rng.sample(list(paths), min(n, len(paths)))


def _key(where: Where) -> str:
    """A stable name for `where` (a function's repr holds its address, which varies by run)."""
    return where if isinstance(where, str) else f"{where.__module__}.{where.__qualname__}"


def _show(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "answer"

