"""Staged shard outputs: Parquet files written beside the catalog, published later in one commit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from pydantic import BaseModel

from memsynth.core.errors import BuildFailed
from memsynth.core.processes import alive
from memsynth.core.secrets import masked_table
from memsynth.core.tables import Table
from memsynth.warehouse.location import Location, location_of

STAGING_DIR = "_staging"
# Tables that hold what an endpoint said in an error: credential patterns are masked there too.
RELAYED_ERRORS = frozenset({"llm_calls", "stage_failures"})


def sweep_stale(dataset_dir: Path) -> list[Path]:
    """Remove staging folders of builds whose process is gone (killed mid-build).

    A folder is named `<time>-<pid>-<random>`; one whose pid is not running on this
    machine belonged to a build that can never publish it.
    """
    removed = []
    root = dataset_dir / STAGING_DIR
    if not root.is_dir():
        return removed
    for folder in root.iterdir():
        parts = folder.name.split("-")
        if len(parts) < 3 or not parts[1].isdigit():
            continue
        if not alive(int(parts[1])):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


class StagingArea:
    """`<dataset>/_staging/<build_id>/<table>/<shard>.parquet`, each file written whole or not at all,
    wherever the warehouse's location keeps data (in a bucket, any worker can write it)."""

    def __init__(self, dataset_dir: Path, build_id: str, location: Location | None = None):
        self.location = location if location is not None else location_of(Path(dataset_dir).parent)
        self.folder = self.location.path(Path(dataset_dir).name, STAGING_DIR, build_id)

    def write(self, table: Table, shard: str, rows: list[BaseModel]) -> str:
        path = f"{self.folder}/{table.name}/{shard}.parquet"
        # A second line behind the LLM layer's own masking: no key or password in any column.
        data = masked_table(table.to_arrow(rows), patterns=table.name in RELAYED_ERRORS)
        try:
            self.location.write_parquet(data, path)
        except OSError as exc:  # a full disk, a folder turned read-only: one line, not a task traceback
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise BuildFailed(f"cannot write the build's staged rows in {self.location.url(self.folder)}: "
                              f"{reason} (every answer received is cached: free space and re-run)") from exc
        return self.location.url(path)

    def file_for(self, table_name: str, shard: str) -> str:
        """Where another writer (DuckDB's COPY) stages a table's file, as DuckDB names it."""
        folder = f"{self.folder}/{table_name}"
        self.location.makedirs(folder)
        return self.location.url(f"{folder}/{shard}.parquet")

    def files(self, table_name: str) -> list[str]:
        """The staged files of a table, as DuckDB reads them."""
        return [self.location.url(p) for p in self.location.list_parquet(f"{self.folder}/{table_name}")]

    def discard(self) -> None:
        self.location.delete_dir(self.folder)
