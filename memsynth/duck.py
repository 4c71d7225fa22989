"""DuckDB connections as memsynth opens them."""

from __future__ import annotations

import duckdb


def connect() -> duckdb.DuckDBPyConnection:
    """An in-memory connection that never draws DuckDB's progress bar into a command's output."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    return con
