"""Staged shard outputs: Parquet files written beside the catalog, published later in one commit."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import BaseModel

from memsynth.tables import Table

STAGING_DIR = "_staging"


class StagingArea:
    """`<dataset>/_staging/<build_id>/<table>/<shard>.parquet`, each file written whole or not at all."""

    def __init__(self, dataset_dir: Path, build_id: str):
        self.path = dataset_dir / STAGING_DIR / build_id

    def write(self, table: Table, shard: str, rows: list[BaseModel]) -> Path:
        folder = self.path / table.name
        folder.mkdir(parents=True, exist_ok=True)
        final = folder / f"{shard}.parquet"
        tmp = folder / f".{shard}.parquet.tmp"
        pq.write_table(table.to_arrow(rows), tmp, compression="zstd")
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, final)
        return final

    def files(self, table_name: str) -> list[Path]:
        folder = self.path / table_name
        return sorted(folder.glob("*.parquet")) if folder.is_dir() else []

    def discard(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        parent = self.path.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()
