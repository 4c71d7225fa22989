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
from memsynth.warehouse.annotations import FOLDER as ANNOTATIONS
from memsynth.warehouse.annotations import attach_annotations
from memsynth.warehouse.ducklake import attach, catalog_exists, dataset_dir, dataset_names
from memsynth.warehouse.evaluations import TABLES as EVAL_TABLES
from memsynth.warehouse.evaluations import attach_results
from memsynth.warehouse.location import location_of
from memsynth.warehouse.missing import MissingDataFile, missing_error, verify
from memsynth.warehouse.readonly import screen_opening
from memsynth.warehouse.sandbox import Contents, QueryLimits, Sandbox, TableFiles


def list_datasets(root: Path) -> list[dict[str, Any]]:
    """Every dataset under `root` with its latest version."""
    out = []
    root = Path(root)
    if not root.is_dir():
        return out
    for name in dataset_names(root):
        if not catalog_exists(root, name):
            continue  # this machine's copy of a catalog its bucket no longer holds: set aside
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
        raise MemsynthError(f"no dataset {dataset!r} in {location_of(root).name} (memsynth datasets list)")
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
        return _read_versions(con, "lake", dataset)
    finally:
        con.close()


def _read_versions(con: duckdb.DuckDBPyConnection, alias: str, dataset: str) -> list[dict[str, Any]]:
    # Asked directly, not looked up first in duckdb_tables() (that lists every table of the
    # catalog: 15 ms), and with no bound parameter (binding makes duckdb import pandas, 0.2 s).
    # Times are read as UTC wall clocks: a zoned timestamp makes duckdb import pytz (20 ms),
    # and the listing then reads the same on every machine whatever its time zone.
    try:
        cur = con.execute(f"SELECT * REPLACE (created_at AT TIME ZONE 'UTC' AS created_at, "
                          f"started_at AT TIME ZONE 'UTC' AS started_at) FROM {alias}.versions ORDER BY version")
    except duckdb.CatalogException:
        return []  # a catalog whose first publish never committed
    except duckdb.Error as exc:
        mapped = missing_error(exc, f"the versions table of {dataset}", dataset)
        if mapped is None:
            raise
        raise mapped from exc
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
        row = _pick_version(dataset, _read_versions(con, "lake", dataset), version)
        con.execute("DETACH lake")
        attach(con, dataset_dir(root, dataset), read_only=True, snapshot=row["snapshot_id"])
        con.execute("USE lake")
        attach_results(con, root, dataset)
        attach_annotations(con, dataset_dir(root, dataset))
    except BaseException:
        con.close()
        raise
    return con, row


def run_query(root: Path, dataset: str, sql: str, version: int | None = None,
              limits: QueryLimits | None = None) -> tuple[list[str], list[tuple[Any, ...]], int]:
    """Run `sql` against the dataset's tables at `version`: (columns, rows, version)."""
    results, version = run_queries(root, dataset, [sql], version, limits)
    return *results[0], version


def run_queries(root: Path, dataset: str, sqls: Sequence[str], version: int | None = None,
                limits: QueryLimits | None = None) -> tuple[list[tuple[list[str], list[tuple[Any, ...]]]], int]:
    """Run each of `sqls` against the dataset at `version` in one sandbox: ([(columns, rows)], version)."""
    for sql in sqls:
        screen_opening(sql)  # a plain refusal before the catalog is even opened
    box, row = open_sandbox(root, dataset, version, limits)
    with box:
        return [box.run(sql) for sql in sqls], row["version"]


def open_sandbox(root: Path, dataset: str, version: int | None = None, limits: QueryLimits | None = None
                 ) -> tuple[Sandbox, dict[str, Any]]:
    """A sandbox holding the dataset's tables at `version` (default: latest), and its `versions` row."""
    contents, row = version_contents(root, dataset, version)
    return Sandbox(contents, limits), row


def version_contents(root: Path, dataset: str, version: int | None = None) -> tuple[Contents, dict[str, Any]]:
    """The trusted step: the files that hold the dataset at `version` (its tables, its
    evaluation results, its annotations), read from the catalog."""
    con, row = open_version(root, dataset, version)
    try:
        contents = Contents(location=location_of(root), annotations_dir=dataset_dir(root, dataset) / ANNOTATIONS,
                            label=f"version {row['version']} of {dataset}", dataset=dataset)
        try:
            _add_tables(con, "lake", contents)
        except duckdb.Error as exc:
            mapped = missing_error(exc, contents.label, dataset)
            if mapped is None:
                raise
            raise mapped from exc
        if con.execute("SELECT count(*) FROM duckdb_databases() WHERE database_name = 'ev'").fetchone()[0]:
            _add_tables(con, "ev", contents, only=EVAL_TABLES)
    finally:
        con.close()
    return contents, row


def _add_tables(con: duckdb.DuckDBPyConnection, alias: str, contents: Contents,
                only: Sequence[str] | None = None) -> None:
    # Every table's columns in one query (a DESCRIBE per table cost a query command 30 ms).
    columns: dict[str, list[tuple[str, str]]] = {}
    for name, column, kind in con.execute(
            f"SELECT table_name, column_name, data_type FROM duckdb_columns() WHERE database_name = '{alias}' "
            "AND schema_name = 'main' ORDER BY table_name, column_index").fetchall():
        columns.setdefault(name, []).append((column, kind))
    inlined = _inlined_tables(con, alias)
    for name in sorted(columns):
        if only is not None and name not in only:
            continue
        table = f'{alias}."{name}"'
        listed = con.execute(f"SELECT data_file, delete_file FROM ducklake_list_files('{alias}', "
                             f"'{duck.sql_str(name)}')").fetchall()
        if name in inlined or any(delete for _, delete in listed):
            # Rows the files alone do not give: read whole here, where the catalog is.
            contents.frames[name] = con.execute(f"SELECT * FROM {table}").fetch_arrow_table()
            continue
        files = [f for f, _ in listed]
        # One file was written with the table's columns as they are (a table memsynth alters,
        # `versions`, gains a file with each version); several may differ: read what they hold.
        in_files = dict(columns[name])
        if len(files) > 1:
            source = ", ".join(f"'{duck.sql_str(f)}'" for f in files)
            in_files = {c: kind for c, kind, *_ in con.execute(
                f"DESCRIBE SELECT * FROM read_parquet([{source}], union_by_name = true)").fetchall()}
        contents.tables.append(TableFiles(name, files, columns[name], in_files))


def _inlined_tables(con: duckdb.DuckDBPyConnection, alias: str) -> set[str]:
    """Tables some of whose rows the catalog holds inline (memsynth writes with inlining off,
    but a catalog another tool wrote to may have them)."""
    meta = f"__ducklake_metadata_{alias}"
    try:
        return {r[0] for r in con.execute(
            f"SELECT DISTINCT t.table_name FROM {meta}.ducklake_inlined_data_tables i "
            f"JOIN {meta}.ducklake_table t USING (table_id)").fetchall()}
    except duckdb.Error:
        return set()


def verify_versions(root: Path, dataset: str) -> list[dict[str, Any]]:
    """Every version with the data files its tables list that the store lacks."""
    con = _open(root, dataset)
    try:
        try:
            versions = _read_versions(con, "lake", dataset)
        except MissingDataFile:  # the versions table lost a file itself: check every snapshot instead
            versions = [{"version": None, "snapshot_id": s} for (s,) in con.execute(
                "SELECT snapshot_id FROM ducklake_snapshots('lake') WHERE snapshot_id > 0 ORDER BY 1").fetchall()]
        return verify(con, location_of(root).file_checker(dataset), versions)
    finally:
        con.close()


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
