"""What a recipe offers the quality tools, as plain data: figures for the report, review
tasks for the review app. The recipe contract names these types; the tools that use them
(`memsynth.quality.review`) sit above it and are never imported by it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal


@dataclass(frozen=True)
class Figure:
    """A chart of a query's rows: `bar` takes (label, value, ...) rows, one series per value
    column; `hist` takes (value,) rows."""

    title: str
    sql: str
    kind: Literal["bar", "hist"] = "bar"
    xlabel: str = ""


@dataclass(frozen=True)
class Text:
    title: str
    body: str


@dataclass(frozen=True)
class Turns:
    """A dialogue; `highlight` is the 0-based index of the turn to mark."""

    title: str
    turns: tuple[tuple[str, str], ...]
    highlight: int | None = None


@dataclass(frozen=True)
class Rows:
    title: str
    rows: tuple[dict[str, Any], ...]


Section = Text | Turns | Rows


@dataclass(frozen=True)
class Question:
    """One judgment to make: `criterion` of `item_id` (an item, or a part of one such as a
    memory in a pool), answered with one of `options`."""

    item_id: str
    criterion: str
    prompt: str
    options: tuple[str, ...]


@dataclass(frozen=True)
class Item:
    item_id: str
    stratum: str
    sections: tuple[Section, ...]
    questions: tuple[Question, ...]


Query = Callable[..., list[dict[str, Any]]]


@dataclass(frozen=True)
class ReviewTask:
    """A kind of review a recipe offers: which items (SQL of `(item_id, stratum)` rows), and
    how one is shown (`show(query, item_id, language)`, with `query(sql, *params)` over the
    version, in the version's language: a zh dataset is reviewed in Chinese)."""

    name: str
    description: str
    items_sql: str
    show: Callable[[Query, str, str], Item]
    criteria: tuple[str, ...] = field(default=())
