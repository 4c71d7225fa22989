"""DuckDB as memsynth uses it: connections, SQL string literals, extensions from PyPI."""

from __future__ import annotations

from pathlib import Path

import duckdb


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory connection that never draws DuckDB's progress bar into a command's output."""
    # Extensions load from the PyPI wheels pip installed beside duckdb itself (below), so they
    # are trusted as its own library is. Checking their signature again on every LOAD took
    # 0.1 s of each command that opens a catalog (DuckLake's file is 36 MB). Users' SQL still
    # cannot LOAD anything: it is checked read-only and runs without external access.
    con = duckdb.connect(config={"allow_unsigned_extensions": True})
    con.execute("SET enable_progress_bar = false")
    return con


def sql_str(value: str) -> str:
    """`value` inside a single-quoted SQL literal."""
    return value.replace("'", "''")


def shipped_extension_path(name: str) -> Path | None:
    """The extension file inside the PyPI package `duckdb-extension-<name>`, if installed."""
    try:
        module = __import__(f"duckdb_extension_{name}")
    except ImportError:
        return None
    base = Path(module.__file__).parent / "extensions"
    version = f"v{duckdb.__version__}"
    for candidate in [base / version / f"{name}.duckdb_extension",
                      *sorted(base.glob(f"*/{name}.duckdb_extension"))]:
        if candidate.is_file():
            return candidate
    return None
