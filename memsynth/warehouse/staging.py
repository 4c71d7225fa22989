"""Staged shard outputs: Parquet files written beside the catalog, published later in one commit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import BaseModel

from memsynth.errors import BuildFailed
from memsynth.tables import Table
from memsynth.warehouse.objectstore import ObjectStore

STAGING_DIR = "_staging"


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
        if not _alive(int(parts[1])):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class StagingArea:
    """`<dataset>/_staging/<build_id>/<table>/<shard>.parquet`, each file written whole or not at all.

    With an s3:// warehouse (`store`) the folder is in the bucket, where any worker can
    write it; an object appears whole when its upload completes.
    """

    def __init__(self, dataset_dir: Path, build_id: str, store: ObjectStore | None = None):
        self.path = dataset_dir / STAGING_DIR / build_id
        self.store = store
        self.url = store.join(dataset_dir.name, STAGING_DIR, build_id) if store is not None else None

    def write(self, table: Table, shard: str, rows: list[BaseModel]) -> Path | str:
        try:
            return self._write(table, shard, rows)
        except OSError as exc:  # a full disk, a folder turned read-only: one line, not a task traceback
            reason = os.strerror(exc.errno) if exc.errno else str(exc)
            raise BuildFailed(f"cannot write the build's staged rows in {self.url or self.path}: {reason} "
                              "(every answer received is cached: free space and re-run)") from exc

    def _write(self, table: Table, shard: str, rows: list[BaseModel]) -> Path | str:
        if self.store is not None:
            url = f"{self.url}/{table.name}/{shard}.parquet"
            pq.write_table(table.to_arrow(rows), self.store.key(url), filesystem=self.store.filesystem(),
                           compression="zstd")
            return url
        folder = self.path / table.name
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{shard}.parquet"
        tmp = folder / f".{shard}.parquet.tmp"
        try:
            pq.write_table(table.to_arrow(rows), tmp, compression="zstd")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)
        return final

    def files(self, table_name: str) -> list[Path] | list[str]:
        if self.store is not None:
            return sorted(f"{self.url}/{table_name}/{name}"
                          for name in self.store.sizes(f"{self.url}/{table_name}") if name.endswith(".parquet"))
        folder = self.path / table_name
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def discard(self) -> None:
        if self.store is not None:
            self.store.delete_dir(self.url)
            return
        shutil.rmtree(self.path, ignore_errors=True)
        parent = self.path.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
