"""Where a library check looks: field paths into an answer (or into the stage's variables),
bounds that are numbers, per-language numbers or variables, and the check they make.

A path is dotted field names; `name[]` takes every item of a list and `name[key=value]` only
the items whose `key` is `value`: `themes[].theme`, `turns[role=user].content`. Each value
comes with its label (`themes[2].theme`), which the repair message names.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel

from memsynth.generation.stage import Check

_SEGMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(?:([A-Za-z_][A-Za-z0-9_]*)=([^\]]*))?\])?$")


@dataclass(frozen=True)
class Segment:
    name: str
    each: bool = False  # name[]: every item of the list
    key: str | None = None  # name[key=value]: the items whose key is value
    value: str | None = None


def parse_path(path: str) -> tuple[Segment, ...]:
    """The segments of a path; a path that is not one raises ValueError naming the part."""
    if not isinstance(path, str) or not path:
        raise ValueError(f"a field path is dotted field names, not {path!r}")
    segments = []
    for part in path.split("."):
        m = _SEGMENT.match(part)
        if m is None:
            raise ValueError(f"field path {path!r}: {part!r} is not a field name, name[] or name[key=value]")
        each = part.endswith("]")
        segments.append(Segment(m.group(1), each, m.group(2), m.group(3)))
    return tuple(segments)


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, BaseModel):
        return getattr(obj, name, None)
    if isinstance(obj, Mapping):
        return obj.get(name)
    return None


def select(obj: Any, path: str | tuple[Segment, ...]) -> list[tuple[str, Any]]:
    """(label, value) of every value the path reaches in `obj`; a missing field reaches nothing."""
    found: list[tuple[str, Any]] = [("", obj)]
    for seg in parse_path(path) if isinstance(path, str) else path:
        nxt: list[tuple[str, Any]] = []
        for label, value in found:
            child = _get(value, seg.name)
            where = f"{label}.{seg.name}" if label else seg.name
            if child is None:
                continue
            if not seg.each:
                nxt.append((where, child))
                continue
            if not isinstance(child, list | tuple):
                continue
            for i, item in enumerate(child):
                if seg.key is None or str(_value(_get(item, seg.key))) == seg.value:
                    nxt.append((f"{where}[{i}]", item))
        found = nxt
    return found


def _value(v: Any) -> Any:
    return getattr(v, "value", v)  # an Enum's value


@dataclass(frozen=True)
class Var:
    """A value read from the stage's variables when the check runs (`var("min_items")`)."""

    path: str

    def resolve(self, variables: Mapping[str, Any]) -> Any:
        found = [v for _, v in select(variables, self.path)]
        if not found:
            raise KeyError(f"the stage's variables hold no {self.path}")
        return found if any(s.each for s in parse_path(self.path)) else found[0]

    def __str__(self) -> str:
        return f"var({self.path!r})"


def var(path: str) -> Var:
    """A bound or a source taken from the stage's variables at check time (a dotted path)."""
    parse_path(path)
    return Var(path)


# A bound: a number, a number per language ({"en": 20, "zh": 40}), a variable, or None (none).
Bound = int | float | Var | Mapping[str, int | float] | None


def language(variables: Mapping[str, Any]) -> str:
    return "zh" if variables.get("language") == "zh" else "en"


def resolve(bound: Any, variables: Mapping[str, Any]) -> Any:
    """The bound's value for these variables (a per-language bound falls back to English)."""
    if isinstance(bound, Var):
        return bound.resolve(variables)
    if isinstance(bound, Mapping):
        return bound.get(language(variables), bound.get("en"))
    return bound


def slug(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", path.lower()).strip("_")


@dataclass(frozen=True, eq=False)  # equal and hashed as the Check it is (a stage is hashed)
class LibraryCheck(Check):
    """A check of the library: a `Check` (so a stage runs it as any other) that also says, as
    data, what kind it is and with which parameters it was declared."""

    kind: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)

    def describe(self) -> str:
        args = ", ".join(f"{k}={v!r}" if not isinstance(v, Var) else f"{k}={v}" for k, v in self.params.items())
        return f"{self.kind}({args})"


def make(kind: str, name: str | None, path: str, fn: Callable[[Any, Mapping[str, Any]], Iterator[str]],
         **params: Any) -> LibraryCheck:
    """A library check named `name`, or `<kind>_<path>` (`sentences_scene`)."""
    parse_path(path)  # a mistyped path fails where the recipe declares it, not in a build
    return LibraryCheck(name or f"{kind}_{slug(path)}", fn, kind, {"path": path, **params})
