"""Publishing a build: every table plus its `versions` row in one DuckLake transaction."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from memsynth.core import duck
from memsynth.core.errors import MemsynthError
from memsynth.core.integrity import dangling
from memsynth.core.tables import Table
from memsynth.warehouse.artifacts import Artifact
from memsynth.warehouse.ducklake import attach, concurrent_writers, dataset_dir, share_catalog
from memsynth.warehouse.unchanged import content_hashes, current_version

VERSIONS_DDL = """
CREATE TABLE IF NOT EXISTS lake.versions (
    version INTEGER,
    snapshot_id BIGINT,
    created_at TIMESTAMP WITH TIME ZONE,
    started_at TIMESTAMP WITH TIME ZONE,
    build_id VARCHAR,
    recipe VARCHAR,
    config VARCHAR,
    config_hash VARCHAR,
    memsynth_version VARCHAR,
    prompt_hashes VARCHAR,
    schema_hashes VARCHAR,
    model VARCHAR,
    row_counts VARCHAR,
    llm_calls BIGINT,
    llm_requests BIGINT,
    llm_cache_hits BIGINT,
    prompt_tokens BIGINT,
    completion_tokens BIGINT,
    estimated_cost_usd DOUBLE,
    parent_version INTEGER
)
"""
# Columns added since the first release: a warehouse written before gains them on publish.
VERSIONS_ADDED = {"options_hash": "VARCHAR", "derivation": "VARCHAR", "regenerations": "VARCHAR",
                  "content_hashes": "VARCHAR"}

# Each template, schema and options text a version used, once per hash (see memsynth.generation.provenance).
ARTIFACTS_DDL = """
CREATE TABLE IF NOT EXISTS lake.artifacts (
    hash VARCHAR,
    kind VARCHAR,
    name VARCHAR,
    content VARCHAR
)
"""
ENGINE_TABLES = {"versions", "artifacts"}


@dataclass
class VersionInfo:
    """What a `versions` row records about one build, apart from its number and snapshot."""

    build_id: str
    recipe: str
    config: dict[str, Any]
    config_hash: str
    memsynth_version: str
    prompt_hashes: dict[str, str]
    schema_hashes: dict[str, str]
    model: str
    started_at: float
    llm: dict[str, Any] = field(default_factory=dict)
    options_hash: str = ""
    artifacts: list[Artifact] = field(default_factory=list)
    # How the version was derived (parent, regenerated personas, stage, added personas), and
    # every regeneration in force: persona id → {stage → salt}.
    derivation: dict[str, Any] = field(default_factory=dict)
    regenerations: dict[str, dict[str, str]] = field(default_factory=dict)


def open_for_write(directory: Path) -> duckdb.DuckDBPyConnection:
    """A connection with the catalog attached read-write (waiting out another's lock)."""
    directory.mkdir(parents=True, exist_ok=True)
    con = duck.connect()
    try:
        attach(con, directory)
    except BaseException:
        con.close()
        raise
    return con


def publish(root: Path, dataset: str, files: dict[str, list[Path]], info: VersionInfo,
            tables: Sequence[Table] = (), statistics: Mapping[str, str] | None = None,
            skip_unchanged: bool = False) -> dict[str, Any]:
    """Replace the dataset's tables with the staged files and record a new version, atomically.

    Refused, with nothing published, when a reference declared by `tables` names a missing row.
    `statistics` (name → the recipe's SQL over its tables) are computed on the version in the
    same transaction, and returned under "statistics". With `skip_unchanged`, a version equal to
    the latest (memsynth.warehouse.unchanged) is not published: the latest is returned, with
    "unchanged": True.
    """
    directory = dataset_dir(root, dataset)
    con = open_for_write(directory)
    try:
        if concurrent_writers(root):
            # Another machine may be writing its files now: only a day-old one is surely
            # left by a publish that was killed.
            con.execute("CALL ducklake_delete_orphaned_files('lake', older_than => now() - INTERVAL 1 DAY)")
        else:
            # Holding the catalog's lock, no other publish is under way: any data file no
            # snapshot knows was left by one that was killed, and goes.
            con.execute("CALL ducklake_delete_orphaned_files('lake', cleanup_all => true)")
        con.execute("BEGIN TRANSACTION")
        con.execute(VERSIONS_DDL)
        for column, kind in VERSIONS_ADDED.items():
            con.execute(f"ALTER TABLE lake.versions ADD COLUMN IF NOT EXISTS {column} {kind}")
        con.execute(ARTIFACTS_DDL)
        # A dataset is one recipe's: another's tables would silently replace them.
        latest = con.execute("SELECT recipe FROM lake.versions ORDER BY version DESC LIMIT 1").fetchone()
        if latest and latest[0] != info.recipe:
            raise MemsynthError(f"dataset {dataset} holds {latest[0]} versions; a {info.recipe} version "
                                "cannot be published into it (choose another dataset name); nothing was published")
        hashes = json.dumps(content_hashes(con, files), sort_keys=True)
        if skip_unchanged:
            current = current_version(con, _sameness(info, hashes))
            if current is not None:
                figures = _figures(con, statistics or {})  # the tables are still the latest version's
                con.execute("ROLLBACK")
                return {**current, "statistics": figures, "unchanged": True}
        existing = {r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()}
        row_counts: dict[str, int] = {}
        for name, staged in files.items():
            if not staged:
                raise MemsynthError(f"nothing staged for table {name}")
            file_list = "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in staged) + "]"
            con.execute(f'CREATE OR REPLACE TABLE lake."{name}" AS SELECT * FROM read_parquet({file_list})')
            row_counts[name] = con.execute(f'SELECT count(*) FROM lake."{name}"').fetchone()[0]
        for name in files:
            if name in ENGINE_TABLES:
                raise MemsynthError(f"a recipe table may not be called {name!r}")
        for stale in existing - set(files) - ENGINE_TABLES:
            con.execute(f'DROP TABLE lake."{stale}"')
        broken = dangling(con, tables)
        if broken:
            raise MemsynthError(f"refusing to publish {dataset}: {broken[0]}"
                                + (f" (and {len(broken) - 1} more)" if len(broken) > 1 else "")
                                + "; nothing was published")
        # On this connection, before the commit: the version's own rows, without attaching
        # the catalog again (that took a third of a second after every build).
        figures = _figures(con, statistics or {})
        version, parent = _next_version(con)
        snapshot = con.execute("SELECT max(snapshot_id) FROM lake.snapshots()").fetchone()[0] + 1
        now = datetime.now(UTC)
        llm = info.llm
        _store_artifacts(con, info.artifacts)
        record = {
            "version": version, "snapshot_id": snapshot, "created_at": now,
            "started_at": datetime.fromtimestamp(info.started_at, UTC), "build_id": info.build_id,
            "recipe": info.recipe, "config": json.dumps(info.config, sort_keys=True, default=str),
            "config_hash": info.config_hash, "memsynth_version": info.memsynth_version,
            "prompt_hashes": json.dumps(info.prompt_hashes, sort_keys=True),
            "schema_hashes": json.dumps(info.schema_hashes, sort_keys=True),
            "options_hash": info.options_hash, "model": info.model,
            "derivation": json.dumps(info.derivation, sort_keys=True),
            "regenerations": json.dumps(info.regenerations, sort_keys=True), "content_hashes": hashes,
            "row_counts": json.dumps(row_counts, sort_keys=True), "llm_calls": llm.get("calls", 0),
            "llm_requests": llm.get("requests", 0), "llm_cache_hits": llm.get("cache_hits", 0),
            "prompt_tokens": llm.get("prompt_tokens", 0),
            "completion_tokens": llm.get("completion_tokens", 0),
            "estimated_cost_usd": llm.get("estimated_cost_usd", 0.0), "parent_version": parent,
        }
        con.execute(f"INSERT INTO lake.versions ({', '.join(record)}) "
                    f"VALUES ({', '.join('?' for _ in record)})", list(record.values()))
        con.execute("CALL lake.set_commit_message('memsynth', ?, extra_info => ?)",
                    [f"{dataset} version {version}", json.dumps({"version": version})])
        con.execute("COMMIT")
        committed = con.execute(
            "SELECT snapshot_id FROM lake.snapshots() WHERE commit_extra_info = ?",
            [json.dumps({"version": version})]).fetchall()
        if [r[0] for r in committed] != [snapshot]:
            raise MemsynthError(f"version {version} was committed as snapshot {committed}, "
                                f"not {snapshot}: was the catalog written concurrently?")
        published = {"version": version, "snapshot_id": snapshot, "row_counts": row_counts,
                     "parent_version": parent, "statistics": figures}
    except BaseException as exc:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        if isinstance(exc, duckdb.TransactionException) and concurrent_writers(root):
            raise MemsynthError(f"another machine published {dataset} while this one did, and its version "
                                "came first; nothing was published: build again (every answer is cached)"
                                ) from exc
        if isinstance(exc, duckdb.Error):
            raise MemsynthError(f"publishing {dataset} failed, nothing was published: "
                                f"{str(exc).splitlines()[0]}") from exc
        raise
    finally:
        con.close()
    try:
        share_catalog(directory)
    except OSError as exc:
        raise MemsynthError(f"{dataset} version {published['version']} is published, but its catalog could not "
                            f"be copied to the bucket ({exc}); the next publish copies it again") from exc
    return published


def _figures(con: duckdb.DuckDBPyConnection, statistics: Mapping[str, str]) -> dict[str, Any]:
    """Each statistic's value: the first column of its query's first row.

    They run outside the read-only sandbox `memsynth query` uses: they are the recipe's own
    code, like its stages, not SQL a user typed."""
    if not statistics:
        return {}
    con.execute("USE lake")  # a recipe's SQL names its tables unqualified, as `memsynth query` does
    figures = {}
    for name, sql in statistics.items():
        try:
            row = con.execute(sql).fetchone()
        except duckdb.Error as exc:
            raise MemsynthError(f"the recipe's statistic {name} failed: {str(exc).splitlines()[0]}; "
                                "nothing was published") from exc
        figures[name] = row[0] if row else None
    return figures


def _sameness(info: VersionInfo, hashes: str) -> dict[str, Any]:
    """The values of a new version's row that `current_version` compares, as they are stored."""
    return {"config_hash": info.config_hash, "memsynth_version": info.memsynth_version,
            "prompt_hashes": json.dumps(info.prompt_hashes, sort_keys=True),
            "schema_hashes": json.dumps(info.schema_hashes, sort_keys=True), "options_hash": info.options_hash,
            "model": info.model, "regenerations": json.dumps(info.regenerations, sort_keys=True),
            "content_hashes": hashes}


def _store_artifacts(con: duckdb.DuckDBPyConnection, artifacts: Sequence[Artifact]) -> None:
    """Add the artifacts the catalog does not hold yet (each hash is stored once)."""
    for a in artifacts:
        con.execute("INSERT INTO lake.artifacts SELECT * FROM (VALUES (?, ?, ?, ?)) t(hash, kind, name, content) "
                    "WHERE NOT EXISTS (SELECT 1 FROM lake.artifacts s WHERE s.hash = t.hash AND s.kind = t.kind)",
                    [a.hash, a.kind, a.name, a.content])


def _next_version(con: duckdb.DuckDBPyConnection) -> tuple[int, int | None]:
    latest = con.execute("SELECT max(version) FROM lake.versions").fetchone()[0]
    return (1, None) if latest is None else (latest + 1, latest)
