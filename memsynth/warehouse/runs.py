"""Builds that published nothing, kept so "why did it fail?" has an SQL answer.

A failed or stopped build's staged rows (each finished shard's tables, its `llm_calls` and
`stage_failures` among them) move to `<dataset>/_runs/<build_id>/`, wherever the warehouse
keeps data, and `run.json` beside them in the local folder says how it ended.
`memsynth runs DATASET` lists them; `memsynth query --dataset D --run ID SQL` reads one.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from memsynth.core.errors import MemsynthError
from memsynth.core.secrets import masked_value
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.location import location_of
from memsynth.warehouse.readonly import screen_opening
from memsynth.warehouse.sandbox import Contents, QueryLimits, Sandbox, TableFiles
from memsynth.warehouse.staging import StagingArea

RUNS_DIR = "_runs"
RECORD = "run.json"


def keep_run(staging: StagingArea, root: Path, dataset: str, build_id: str, record: dict[str, Any]) -> None:
    """Move the build's staged files into its run and write the run's record (whole or not at all)."""
    location = location_of(root)
    staging.location.move_dir(staging.folder, location.path(dataset, RUNS_DIR, build_id))
    folder = dataset_dir(root, dataset) / RUNS_DIR / build_id
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{RECORD}.tmp"
    record = masked_value({"run": build_id, **record})  # a second line: the error was masked where it was made
    tmp.write_text(json.dumps(record, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, folder / RECORD)


def list_runs(root: Path, dataset: str) -> list[dict[str, Any]]:
    """Every kept run of the dataset, oldest first (ids start with their time)."""
    folder = dataset_dir(root, dataset) / RUNS_DIR
    if not folder.is_dir():
        return []
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob(f"*/{RECORD}"))]


def _run_tables(root: Path, dataset: str, run: str) -> dict[str, list[str]]:
    known = {r["run"] for r in list_runs(root, dataset)}
    if run not in known:
        listed = ", ".join(sorted(known)[-3:]) or "none"
        raise MemsynthError(f"no run {run!r} of dataset {dataset!r} (memsynth runs {dataset}; latest: {listed})")
    location = location_of(root)
    folder = location.path(dataset, RUNS_DIR, run)
    tables: dict[str, list[str]] = {}
    for info in location.filesystem().get_file_info(_selector(folder)):
        if info.path.endswith(".parquet"):
            table = info.path[len(folder) + 1:].split("/", 1)[0]
            tables.setdefault(table, []).append(location.url(info.path))
    return {name: sorted(files) for name, files in sorted(tables.items())}


def _selector(folder: str) -> Any:
    from pyarrow import fs

    return fs.FileSelector(folder, allow_not_found=True, recursive=True)


def query_run(root: Path, dataset: str, run: str, sql: str, limits: QueryLimits | None = None
              ) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run read-only `sql` over the tables a kept run staged (`llm_calls`, `stage_failures`, …),
    in a sandbox that holds those files and nothing else."""
    screen_opening(sql)
    tables = _run_tables(root, dataset, run)
    contents = Contents([TableFiles(name, files) for name, files in tables.items()], location=location_of(root),
                        label=f"run {run} of {dataset}", dataset=dataset)
    with Sandbox(contents, limits) as box:
        return box.run(sql)
