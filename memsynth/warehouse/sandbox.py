"""Where user SQL runs: a connection that holds nothing but one version's data files.

A deny-list over syntax trees always misses the next wrapper, so user SQL (`memsynth query`,
`--where`, `--run`, the review app's reads) never meets the catalog. A trusted step
(`catalog.version_contents`) reads the version's file list from the catalog; this module then
opens a fresh in-memory DuckDB with no catalog attached and no extension that reaches a
database (nor, on a local warehouse, the network), shows each table as a view over its files,
allows exactly those files, turns external access off and locks the configuration, with a
memory limit, a spill folder of bounded size and a time limit. The screen (`readonly.py`)
stays in front as a second line, so that a refusal is one clear line.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from memsynth.core.duck import sql_str
from memsynth.core.errors import MemsynthError
from memsynth.warehouse.missing import missing_error
from memsynth.warehouse.readonly import check_read_only, first_line


class QueryStopped(MemsynthError):
    """A query stopped by Ctrl-C (exit 130) or by its time limit (exit 1)."""

    def __init__(self, message: str, exit_code: int):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class QueryLimits:
    """What one query may use. Memory and spill take DuckDB's sizes ("2GB", "500MB")."""

    timeout_s: float = 300.0
    memory: str = "2GB"
    spill: str = "4GB"


@dataclass
class TableFiles:
    """A table as its files hold it. `columns` (name, type) is the catalog's schema, when there
    is a catalog; `in_files` the columns the files have (older files lack later columns)."""

    name: str
    files: list[str]
    columns: list[tuple[str, str]] | None = None
    in_files: dict[str, str] = field(default_factory=dict)


@dataclass
class Contents:
    """Everything a query may see: tables over files, tables read whole by the trusted step
    (rows a catalog keeps outside plain files: deletions, inlined rows), and JSONL views."""

    tables: list[TableFiles] = field(default_factory=list)
    frames: dict[str, Any] = field(default_factory=dict)  # name -> pyarrow.Table
    annotations_dir: Path | None = None
    location: Any = None  # a remote Location gives the connection its bucket's credentials
    label: str = "the query"  # what the files are, for an error that names one ("version 3 of d")
    dataset: str = ""

    def files(self) -> list[str]:
        out = [f for t in self.tables for f in t.files]
        if self.annotations_dir is not None:
            out += [str(p) for p in sorted(self.annotations_dir.glob("*.jsonl"))]
        return list(dict.fromkeys(out))


class Sandbox:
    """A locked connection over `contents`. `run` takes user SQL; `query` the recipe's own
    parameterised reads (the review app). Close it (or use `with`)."""

    def __init__(self, contents: Contents, limits: QueryLimits | None = None):
        self.limits = limits or QueryLimits()
        self.label, self.dataset = contents.label, contents.dataset
        # Named, not made: DuckDB makes the folder only when a query spills, so a process killed
        # mid-query (the review app's server, say) leaves nothing behind unless it had spilled.
        self._spill = os.path.join(tempfile.gettempdir(), f"memsynth-query-{uuid.uuid4().hex[:12]}")
        self.con = duckdb.connect(config={
            "autoload_known_extensions": False, "autoinstall_known_extensions": False,
            "allow_community_extensions": False})
        try:
            self._build(contents)
        except duckdb.Error as exc:
            self.close()
            raise missing_error(exc, self.label, self.dataset) or MemsynthError(
                f"cannot open {self.label}: {first_line(exc)}") from exc
        except BaseException:
            self.close()
            raise

    def _build(self, contents: Contents) -> None:
        con = self.con
        con.execute("SET enable_progress_bar = false")
        con.execute(f"SET memory_limit = '{sql_str(self.limits.memory)}'")
        con.execute(f"SET max_temp_directory_size = '{sql_str(self.limits.spill)}'")
        con.execute(f"SET temp_directory = '{sql_str(self._spill)}'")
        if contents.location is not None:
            contents.location.configure(con)  # a bucket: httpfs and a temporary secret; a folder: nothing
        for table in contents.tables:
            con.execute(f"CREATE VIEW {_ident(table.name)} AS {_select(table)}")
        for name, frame in contents.frames.items():
            con.register(f"__frame_{name}", frame)
            con.execute(f"CREATE TABLE {_ident(name)} AS SELECT * FROM {_ident('__frame_' + name)}")
            con.unregister(f"__frame_{name}")
        files = contents.files()
        if files:
            con.execute(f"SET allowed_paths = [{', '.join(_literal(f) for f in files)}]")
        con.execute("SET enable_external_access = false")
        if contents.annotations_dir is not None:
            from memsynth.warehouse.annotations import attach_annotations

            attach_annotations(con, contents.annotations_dir.parent)
        con.execute("SET lock_configuration = true")

    def run(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Screen `sql` (parsed here, where no file outside can be read) and run it."""
        check_read_only(sql, self.con)
        return self._call(lambda: _described(self.con.execute(sql)))

    def query(self, sql: str, params: list[Any]) -> list[dict[str, Any]]:
        """A trusted, parameterised read (user values only as parameters)."""
        names, rows = self._call(lambda: _described(self.con.execute(sql, params)))
        return [dict(zip(names, r)) for r in rows]

    def _call(self, work: Any) -> Any:
        """Run `work` on a thread of its own, so that Ctrl-C and the time limit reach this one
        while DuckDB holds the other (a query in C never lets Python see a signal)."""
        done: dict[str, Any] = {}

        def target() -> None:
            try:
                done["value"] = work()
            except BaseException as exc:  # handed to the caller's thread below
                done["error"] = exc

        worker = threading.Thread(target=target, name="memsynth-query", daemon=True)
        deadline = time.monotonic() + self.limits.timeout_s
        timed_out = False
        worker.start()
        try:
            while worker.is_alive():
                worker.join(0.05)
                if not timed_out and time.monotonic() > deadline:
                    timed_out = True
                    self.con.interrupt()
        except KeyboardInterrupt:
            self.con.interrupt()
            worker.join()
            raise QueryStopped("query interrupted", 130) from None
        error = done.get("error")
        if error is None:
            return done["value"]
        if timed_out and isinstance(error, duckdb.InterruptException):
            raise QueryStopped(f"query stopped at its time limit of {self.limits.timeout_s:g} s "
                               "(--timeout sets another)", 1) from None
        if isinstance(error, duckdb.Error):
            raise missing_error(error, self.label, self.dataset) or MemsynthError(
                f"query failed: {first_line(error)}") from None
        if isinstance(error, RecursionError):
            raise MemsynthError("query failed: it nests too deeply to run") from None
        raise error

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            shutil.rmtree(self._spill, ignore_errors=True)

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _described(cur: duckdb.DuckDBPyConnection) -> tuple[list[str], list[tuple[Any, ...]]]:
    return ([d[0] for d in cur.description] if cur.description else []), cur.fetchall()


def _select(table: TableFiles) -> str:
    if not table.files:
        if table.columns is None:
            return "SELECT NULL WHERE false"
        cols = ", ".join(f"CAST(NULL AS {kind}) AS {_ident(name)}" for name, kind in table.columns)
        return f"SELECT {cols} WHERE false"
    source = f"read_parquet([{', '.join(_literal(f) for f in table.files)}], union_by_name = true)"
    if table.columns is None:
        return f"SELECT * FROM {source}"
    cols = []
    for name, kind in table.columns:
        have = table.in_files.get(name)
        if have is None:
            cols.append(f"CAST(NULL AS {kind}) AS {_ident(name)}")
        elif have == kind:
            cols.append(_ident(name))
        else:
            cols.append(f"CAST({_ident(name)} AS {kind}) AS {_ident(name)}")
    return f"SELECT {', '.join(cols)} FROM {source}"


def _ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    return f"'{sql_str(text)}'"
