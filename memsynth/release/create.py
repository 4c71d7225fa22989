"""`memsynth release create`: a dataset version as a self-describing, reproducible folder."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from memsynth.core.errors import MemsynthError
from memsynth.release.card import render_card
from memsynth.release.error_rates import ErrorRates, error_rates, refuse_over_limit
from memsynth.release.files import (
    jsonl_rows,
    parquet_rows_and_schema,
    sha256_file,
    write_json,
    write_jsonl,
    write_parquet_shards,
)
from memsynth.release.views import VersionTables, read_views

TAG = re.compile(r"^v\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")
MANIFEST = "manifest.json"
SUMS = "SHA256SUMS"


def split_table(table: pa.Table, persona_column: str, persona_splits: dict[str, str], split: str) -> pa.Table:
    """The rows of `table` whose persona is in `split`."""
    members = [p for p, s in persona_splits.items() if s == split]
    return table.filter(pc.is_in(table[persona_column], value_set=pa.array(members, pa.string())))


def create_release(root: Path, dataset: str, version: int | None, tag: str, out: Path,
                   splits: dict[str, float], split_seed: int | None = None, license_id: str = "cc-by-4.0",
                   shard_rows: int = 50_000, on_step: Callable[[str], None] | None = None,
                   accept_violation_rate: bool = False) -> dict[str, Any]:
    """Write `out/<dataset>-<tag>/`; a temporary folder is renamed into place at the end.

    Refused (nothing written) when a gold-label rule's audited violation rate may be over the
    version's `quality.max_violation_rate`, unless `accept_violation_rate`; the card says so."""
    if not TAG.match(tag):
        raise MemsynthError(f"bad tag {tag!r}: use vMAJOR.MINOR.PATCH, e.g. v1.0.0")
    name = f"{dataset}-{tag}"
    final = Path(out) / name
    if final.exists():
        raise MemsynthError(f"{final} already exists; choose another tag or remove it")
    step = on_step or (lambda _msg: None)
    made_out = not Path(out).exists()
    Path(out).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=out))
    try:
        step(f"reading {dataset} views")
        source = read_views(root, dataset, version, splits, split_seed)
        try:
            rates = error_rates(source.con, source.version["recipe"], source.version["config"],
                                accept=accept_violation_rate)
            refuse_over_limit(rates)
            files = _write_all(source, work, name, tag, splits, license_id, shard_rows, step, rates)
        finally:
            source.con.close()
        os.chmod(work, 0o755)
        os.rename(work, final)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        if made_out and not any(Path(out).iterdir()):  # a failed release leaves no folder it made
            Path(out).rmdir()
        raise
    return {"path": str(final), "version": source.version["version"], "files": len(files),
            "rows": _rows_by_view(source, splits), "error_rates": rates.to_json()}


def _rows_by_view(source: VersionTables, splits: dict[str, float]) -> dict[str, dict[str, int]]:
    return {view.name: {split: split_table(source.views[view.name], view.persona, source.persona_splits,
                                           split).num_rows for split in splits}
            for view in source.spec.views}


def _write_all(source: VersionTables, work: Path, name: str, tag: str, splits: dict[str, float],
               license_id: str, shard_rows: int, step: Callable[[str], None],
               rates: ErrorRates) -> list[dict[str, Any]]:
    spec = source.spec
    parts: dict[str, dict[str, pa.Table]] = {}
    for view in spec.views:
        step(f"writing {view.name}")
        parts[view.name] = {}
        for split in splits:
            table = split_table(source.views[view.name], view.persona, source.persona_splits, split)
            parts[view.name][split] = table
            write_parquet_shards(table, work / "data" / view.name, split, shard_rows)
            write_jsonl(table, work / "jsonl" / view.name / f"{split}.jsonl")
    if spec.seed_format is not None:
        step(f"writing {spec.seed_format.name} files")
        for split in splits:
            rows = {view: parts[view][split].to_pylist() for view in parts}
            spec.seed_format.write(rows, work / spec.seed_format.name / split, source.language)
    step("writing the dataset card")
    render_card(source, work, name, tag, splits, license_id,
                {v: {s: t.num_rows for s, t in by_split.items()} for v, by_split in parts.items()}, rates)
    files = _describe_files(work)
    write_json({
        "dataset": source.version["dataset"], "version": source.version["version"],
        "snapshot_id": source.version["snapshot_id"], "tag": tag, "recipe": source.version["recipe"],
        "config_hash": source.version["config_hash"],
        # The version's publish time: an export of the same version is the same release.
        "published_at": source.version["created_at"],
        "splits": {"proportions": splits, "seed": source.version["split_seed"],
                   "personas": {s: sum(1 for v in source.persona_splits.values() if v == s) for s in splits}},
        "configs": {v.name: {"key": v.key, "persona": v.persona} for v in spec.views},
        "seed_format": spec.seed_format.name if spec.seed_format else None,
        "error_rates": rates.to_json(),
        "files": files,
    }, work / MANIFEST)
    _write_sums(work)
    return files


def _describe_files(folder: Path) -> list[dict[str, Any]]:
    out = []
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        rel = path.relative_to(folder).as_posix()
        entry: dict[str, Any] = {"path": rel, "bytes": path.stat().st_size, "sha256": sha256_file(path)}
        if path.suffix == ".parquet":
            entry["rows"], entry["schema"] = parquet_rows_and_schema(path)
        elif path.suffix == ".jsonl":
            entry["rows"] = jsonl_rows(path)
        elif path.suffix == ".json":  # a seed-format file: its users or persona records
            entry["rows"] = len(json.loads(path.read_text(encoding="utf-8")))
        out.append(entry)
    return out


def _write_sums(folder: Path) -> None:
    lines = [f"{sha256_file(p)}  {p.relative_to(folder).as_posix()}\n"
             for p in sorted(folder.rglob("*")) if p.is_file() and p.name != SUMS]
    (folder / SUMS).write_text("".join(lines), encoding="utf-8")
