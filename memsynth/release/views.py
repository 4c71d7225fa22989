"""A version's release views, read as Arrow tables: what a release writes and its card describes."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from memsynth.core.errors import MemsynthError
from memsynth.release.spec import ReleaseSpec
from memsynth.release.splits import assign_splits
from memsynth.warehouse.catalog import open_version
from memsynth.warehouse.missing import missing_error


def release_spec(recipe: str) -> ReleaseSpec:
    """The recipe's release declarations (`flows/<recipe>/release.py`)."""
    from memsynth.generation.registry import release_spec as lookup  # recipes live above the engine

    return lookup(recipe)


@dataclass
class VersionTables:
    """A version's views as Arrow tables, with what produced them."""

    version: dict[str, Any]
    spec: ReleaseSpec
    language: str
    views: dict[str, pa.Table]
    persona_splits: dict[str, str]
    con: duckdb.DuckDBPyConnection


def read_views(root: Path, dataset: str, version: int | None, splits: dict[str, float],
               split_seed: int | None) -> VersionTables:
    """Run the recipe's views over the version; the caller closes `.con`."""
    con, row = open_version(root, dataset, version)
    try:
        return _read_views(con, row, dataset, splits, split_seed)
    except duckdb.Error as exc:
        con.close()
        mapped = missing_error(exc, f"version {row['version']} of {dataset}", dataset)
        if mapped is None:
            raise
        raise mapped from exc
    except BaseException:
        con.close()
        raise


def _read_views(con: duckdb.DuckDBPyConnection, row: dict, dataset: str, splits: dict[str, float],
                split_seed: int | None) -> VersionTables:
    row["dataset"] = dataset
    spec = release_spec(row["recipe"])
    language = row["config"].get("language", "en")
    seed = row["config"].get("seed", 0) if split_seed is None else split_seed
    personas = _personas(con)
    persona_splits = assign_splits([p for p, _ in personas], splits, seed)
    con.register("release_personas", pa.table({
        "persona_id": [p for p, _ in personas], "ordinal": [o for _, o in personas],
        "split": [persona_splits[p] for p, _ in personas]}))
    for name, table in spec.lookup_tables(language).items():
        con.register(name, table)
    views = {}
    for view in spec.views:
        try:
            views[view.name] = con.execute(
                f"SELECT * FROM ({view.sql}) ORDER BY {view.order or view.key}").to_arrow_table()
        except duckdb.Error as exc:
            dataset_name = row["dataset"]
            raise missing_error(exc, f"version {row['version']} of {dataset_name}", dataset_name) or MemsynthError(
                f"release view {view.name} failed: {str(exc).splitlines()[0]}") from exc
    row["split_seed"] = seed
    return VersionTables(row, spec, language, views, persona_splits, con)


def _personas(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int]]:
    """(persona id, ordinal) in ordinal order; versions built before ordinals rank by id."""
    columns = {r[0] for r in con.execute(
        "SELECT column_name FROM duckdb_columns() WHERE database_name = 'lake' AND table_name = 'personas'"
    ).fetchall()}
    order = "ordinal, persona_id" if "ordinal" in columns else "persona_id"
    rows = con.execute(f"SELECT DISTINCT persona_id{', ordinal' if 'ordinal' in columns else ''} "
                       f"FROM personas ORDER BY {order}").fetchall()
    return [(r[0], r[1] if len(r) > 1 and r[1] is not None else i) for i, r in enumerate(rows)]
