"""Reading the warehouse: datasets, their versions, and read-only SQL at a version."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

import duckdb

from memsynth.core import duck
from memsynth.core.errors import MemsynthError
from memsynth.warehouse.annotations import attach_annotations
from memsynth.warehouse.ducklake import attach, catalog_exists, dataset_dir, dataset_names
from memsynth.warehouse.evaluations import attach_results
from memsynth.warehouse.location import location_of
from memsynth.warehouse.readonly import check_read_only, run_all_sandboxed


def list_datasets(root: Path) -> list[dict[str, Any]]:
    """Every dataset under `root` with its latest version."""
    out = []
    root = Path(root)
    if not root.is_dir():
        return out
    for name in dataset_names(root):
        versions = list_versions(root, name)
        if not versions:
            continue  # a first publish that never committed (killed): nothing to read
        latest = versions[-1]
        out.append({
            "dataset": name,
            "versions": len(versions),
            "latest_version": latest["version"],
            "recipe": latest["recipe"],
            "created_at": latest["created_at"],
            "path": str(root / name),
        })
    return out


def _open(root: Path, dataset: str, snapshot: int | None = None) -> duckdb.DuckDBPyConnection:
    directory = dataset_dir(root, dataset)
    if not catalog_exists(root, dataset):
        raise MemsynthError(f"no dataset {dataset!r} under {root} (memsynth datasets list)")
    con = duck.connect()
    try:
        attach(con, directory, read_only=True, snapshot=snapshot)
    except BaseException:
        con.close()
        raise
    return con


def list_versions(root: Path, dataset: str) -> list[dict[str, Any]]:
    """The dataset's `versions` rows, oldest first, JSON fields decoded."""
    con = _open(root, dataset)
    try:
        return _read_versions(con, "lake")
    finally:
        con.close()


def _read_versions(con: duckdb.DuckDBPyConnection, alias: str) -> list[dict[str, Any]]:
    # Asked directly, not looked up first in duckdb_tables() (that lists every table of the
    # catalog: 15 ms), and with no bound parameter (binding makes duckdb import pandas, 0.2 s).
    # Times are read as UTC wall clocks: a zoned timestamp makes duckdb import pytz (20 ms),
    # and the listing then reads the same on every machine whatever its time zone.
    try:
        cur = con.execute(f"SELECT * REPLACE (created_at AT TIME ZONE 'UTC' AS created_at, "
                          f"started_at AT TIME ZONE 'UTC' AS started_at) FROM {alias}.versions ORDER BY version")
    except duckdb.CatalogException:
        return []  # a catalog whose first publish never committed
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    for row in rows:
        for key in ("config", "prompt_hashes", "schema_hashes", "row_counts", "derivation", "regenerations"):
            if isinstance(row.get(key), str):
                row[key] = json.loads(row[key])
        for key in ("created_at", "started_at"):
            if row.get(key) is not None:
                row[key] = row[key].replace(tzinfo=UTC).isoformat()
    return rows


def _pick_version(dataset: str, versions: list[dict[str, Any]], version: int | None) -> dict[str, Any]:
    if not versions:
        raise MemsynthError(f"dataset {dataset!r} has no published version")
    if version is None:
        return versions[-1]
    matches = [v for v in versions if v["version"] == version]
    if not matches:
        known = ", ".join(str(v["version"]) for v in versions)
        raise MemsynthError(f"dataset {dataset!r} has no version {version} (versions: {known})")
    return matches[0]


def open_version(root: Path, dataset: str, version: int | None = None
                 ) -> tuple[duckdb.DuckDBPyConnection, dict[str, Any]]:
    """A connection whose `lake` is the dataset at `version` (default: latest), and its
    `versions` row; the caller closes the connection."""
    con = _open(root, dataset)
    try:
        row = _pick_version(dataset, _read_versions(con, "lake"), version)
        con.execute("DETACH lake")
        attach(con, dataset_dir(root, dataset), read_only=True, snapshot=row["snapshot_id"])
        con.execute("USE lake")
        attach_results(con, root, dataset)
        attach_annotations(con, dataset_dir(root, dataset))
    except BaseException:
        con.close()
        raise
    return con, row


def run_query(root: Path, dataset: str, sql: str, version: int | None = None
              ) -> tuple[list[str], list[tuple[Any, ...]], int]:
    """Run `sql` against the dataset's tables at `version`: (columns, rows, version)."""
    results, version = run_queries(root, dataset, [sql], version)
    return *results[0], version


def run_queries(root: Path, dataset: str, sqls: Sequence[str], version: int | None = None
                ) -> tuple[list[tuple[list[str], list[tuple[Any, ...]]]], int]:
    """Run each of `sqls` against the dataset at `version`, attached once: ([(columns, rows)], version)."""
    for sql in sqls:
        check_read_only(sql)
    # The catalog's own files and the data files stay readable; every other path is off limits.
    allowed = [str(dataset_dir(root, dataset).resolve()), location_of(root).data_path(dataset)]
    con, row = open_version(root, dataset, version)
    return run_all_sandboxed(con, sqls, allowed), row["version"]  # closes con


def stage_models(root: Path, dataset: str, version: int | None = None) -> dict[str, list[str]]:
    """Which model answered each stage of a version, from its `llm_calls` (a stage answered
    by the cache names the model the answer was asked of)."""
    con, _row = open_version(root, dataset, version)
    try:
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' "
                          "AND table_name = 'llm_calls'").fetchone()[0]
        if not has:
            return {}
        rows = con.execute("SELECT stage, list(DISTINCT model ORDER BY model) FROM lake.llm_calls "
                           "GROUP BY stage ORDER BY min(started_at)").fetchall()
    finally:
        con.close()
    return {stage: list(models) for stage, models in rows}


def version_artifacts(root: Path, dataset: str, version: int | None = None
                      ) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A version's `versions` row and the stored texts it names: every template (with its
    includes), schema and the options, as {kind, name, hash, content} in that order.

    A hash the warehouse holds no text for (a version published before memsynth stored
    them) comes back with content None.
    """
    con, row = open_version(root, dataset, version)
    try:
        has = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' "
                          "AND table_name = 'artifacts'").fetchone()[0]
        stored = {(k, h): c for h, k, c in con.execute(
            "SELECT hash, kind, content FROM lake.artifacts").fetchall()} if has else {}
    finally:
        con.close()
    wanted = [("options", row["recipe"], row.get("options_hash"))]
    wanted += [("template", n, h) for n, h in sorted(row["prompt_hashes"].items())]
    wanted += [("schema", n, h) for n, h in sorted(row["schema_hashes"].items())]
    return row, [{"kind": k, "name": n, "hash": h, "content": stored.get((k, h))}
                 for k, n, h in wanted if h]
