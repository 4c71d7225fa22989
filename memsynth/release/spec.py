"""What a recipe declares about its releases: views, statistics, plots, its seed's format."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pyarrow as pa

from memsynth.release.folder import ReleaseFolder


@dataclass(frozen=True)
class View:
    """One Hugging Face config: a query over the version's tables, one row per `key`.

    The query may read the engine's `release_personas(persona_id, ordinal, split)` and
    any lookup table the spec registers; rows are exported in `key` order.
    """

    name: str
    sql: str
    key: str
    description: str
    persona: str = "persona_id"
    order: str | None = None  # ORDER BY of the exported rows (default: the key)


@dataclass(frozen=True)
class Plot:
    """A bar chart of `sql`'s (label, value) rows, shown in the card with its table."""

    name: str
    title: str
    sql: str
    xlabel: str
    ylabel: str


@dataclass(frozen=True)
class Omission:
    """Rows of a table that no config holds, counted for the card with the reason why."""

    what: str  # the rows' plural noun, e.g. "logs"
    sql: str  # one row: (left out, total)
    reason: str


class SeedFormat(Protocol):
    """The file layout a seed benchmark released, so its evaluation code reads our data."""

    name: str  # folder name in the release, e.g. "pal-set"
    description: str

    def write(self, views: Mapping[str, list[dict[str, Any]]], folder: Path, language: str) -> None:
        """Write one split's files into `folder` from the views' rows (already split)."""

    def problems(self, folder: ReleaseFolder) -> Iterator[str]:
        """Everything wrong with one split's files in `folder`, one line each, paths relative to it.
        Read them through `folder` only (ReleaseFolder.read_bytes, read_json, glob): it never
        leaves the release, whatever links or names the release holds."""


@dataclass(frozen=True)
class ReleaseSpec:
    """Everything a recipe tells `memsynth release` beyond its tables."""

    pretty_name: str
    task_categories: tuple[str, ...]
    views: tuple[View, ...]
    plots: tuple[Plot, ...]
    intended_use: str
    limitations: str
    seed_format: SeedFormat | None = None
    seed_split: str = ""  # how the seed's own split survives in the release, for the card
    lookups: Any = None  # (language) -> {name: pa.Table} registered before the views run
    tags: tuple[str, ...] = field(default_factory=tuple)
    omissions: tuple[Omission, ...] = ()

    def view(self, name: str) -> View:
        return next(v for v in self.views if v.name == name)

    def lookup_tables(self, language: str) -> dict[str, pa.Table]:
        return dict(self.lookups(language)) if self.lookups else {}
