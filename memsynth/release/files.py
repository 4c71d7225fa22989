"""Writing release files so that the same rows always give the same bytes."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

# Fixed so that a file's bytes depend on its rows only (pyarrow writes no timestamps).
ROW_GROUP_SIZE = 10_000
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 9, "row_group_size": ROW_GROUP_SIZE,
                   "use_dictionary": True, "write_statistics": True}


def shard_name(split: str, index: int, count: int) -> str:
    """`<split>-00000-of-00003.parquet`, the file naming the Hugging Face Hub expects."""
    return f"{split}-{index:05d}-of-{count:05d}.parquet"


def write_parquet_shards(table: pa.Table, folder: Path, split: str, shard_rows: int) -> list[Path]:
    """`table` as one or more Parquet files of at most `shard_rows` rows (always at least one)."""
    folder.mkdir(parents=True, exist_ok=True)
    count = max(1, -(-table.num_rows // shard_rows))
    paths = []
    for i in range(count):
        path = folder / shard_name(split, i, count)
        pq.write_table(table.slice(i * shard_rows, shard_rows), path, **PARQUET_OPTIONS)
        paths.append(path)
    return paths


def write_jsonl(table: pa.Table, path: Path) -> None:
    """One JSON object per row, keys in column order, dates and times as ISO text."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in table.to_pylist():
            fh.write(json.dumps(row, ensure_ascii=False, default=_iso) + "\n")


def write_json(value: Any, path: Path, *, indent: int = 2, final_newline: bool = True) -> None:
    """Pretty JSON, UTF-8 text as is, ending in a newline unless a seed's own file has none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(value, ensure_ascii=False, indent=indent, default=_iso)
    path.write_text(text + "\n" if final_newline else text, encoding="utf-8")


def _iso(value: Any) -> str:
    if isinstance(value, dt.date | dt.datetime):
        return value.isoformat()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def sha256_file(path: Path) -> str:
    with open(path, "rb") as fh:
        return sha256_stream(fh)


def sha256_stream(fh: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        digest.update(block)
    return digest.hexdigest()


def schema_text(schema: pa.Schema) -> str:
    """An Arrow schema as one stable line per field (what the manifest records)."""
    return "\n".join(f"{f.name}: {f.type}" for f in schema)


def parquet_rows_and_schema(source: Path | BinaryIO) -> tuple[int, str]:
    """Row count and schema text read from a Parquet file's footer (a path or an open file)."""
    meta = pq.ParquetFile(source)
    return meta.metadata.num_rows, schema_text(meta.schema_arrow)


def jsonl_rows(path: Path) -> int:
    with open(path, "rb") as fh:
        return count_lines(fh)


def count_lines(fh: BinaryIO) -> int:
    """Lines that hold something (a JSONL file's records)."""
    return sum(1 for line in fh if line.strip())
