"""Data files a catalog lists and the store no longer has: one line naming them, never a traceback.

A bucket emptied, recreated, restored from an older backup, or an object deleted by hand
leaves a catalog that lists files which are gone. DuckDB then fails deep in a read with an
HTTP 404 or "No such file". This module recognises that failure, names the file (and the
version, where the caller knows it), and lists every version that has lost a file
(`memsynth versions DATASET --verify`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memsynth.core.errors import MemsynthError

# DuckDB's words for a file that is not there, locally and over HTTP(S)/S3.
_GONE = re.compile(r"404|NoSuchKey|No such file or directory|No files found that match|does not exist", re.I)
_PATH = re.compile(r"""['"]((?:s3://|https?://|/)[^'"]+?\.parquet)['"]""")


class MissingDataFile(MemsynthError):
    """A catalog lists a data file the store does not have."""


def missing_file(exc: BaseException) -> str | None:
    """The data file `exc` says is missing, or None when `exc` is about something else."""
    text = str(exc)
    if not _GONE.search(text):
        return None
    found = _PATH.search(text)
    return found.group(1) if found else None


def missing_error(exc: BaseException, where: str, dataset: str) -> MissingDataFile | None:
    """The one-line error for a read of `where` ("version 3 of quickstart") that failed on a
    missing file, or None when `exc` is another failure."""
    path = missing_file(exc)
    if path is None:
        return None
    return MissingDataFile(f"{where} lists a data file the store does not have: {_shown(path)} "
                           f"(memsynth versions {dataset} --verify lists every version that lost one)")


def verify(con: Any, present: Callable[[str], bool], versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per version (on `con`, whose `lake` is the dataset's catalog): the data files its
    tables list that the store lacks (`present` tells). Each row: version, snapshot, files,
    missing (a list)."""
    tables = [r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake' AND schema_name = 'main'").fetchall()]
    out = []
    for version in versions:
        listed: list[str] = []
        for table in tables:
            try:
                rows = con.execute(f"SELECT data_file, delete_file FROM ducklake_list_files('lake', '{table}', "
                                   f"snapshot_version => {int(version['snapshot_id'])})").fetchall()
            except Exception:  # the table was made after this version: nothing of it to check
                continue
            listed += [f for row in rows for f in row if f]
        out.append({"version": version["version"], "snapshot": version["snapshot_id"],
                    "files": len(listed), "missing": [f for f in listed if not present(f)]})
    return out


def _shown(path: str) -> str:
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in path)
