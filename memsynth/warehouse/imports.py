"""A seed's own release file published as a dataset version (`memsynth import RECIPE FILE`)."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

import memsynth
from memsynth.core.records import LLM_CALLS, STAGE_FAILURES
from memsynth.core.tables import Table
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.lock import BuildLock
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.staging import StagingArea


def publish_import(path: Path, warehouse: Path, dataset: str, recipe: str,
                   rows: Sequence[tuple[Table, Sequence[BaseModel]]], *, language: str = "en",
                   statistics: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Publish `rows` read from `path` as the next version of `dataset` (no LLM calls: the
    engine tables are empty); the summary, with each statistic's value on the new version."""
    started = time.time()
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else _folder_digest(path)
    tables = (*(t for t, _ in rows), LLM_CALLS, STAGE_FAILURES)
    directory = dataset_dir(warehouse, dataset)
    with BuildLock(directory, dataset):
        build_id = f"import-{time.strftime('%Y%m%dT%H%M%S')}-{digest[:8]}"
        staging = StagingArea(directory, build_id)
        try:
            for table, table_rows in (*rows, (LLM_CALLS, []), (STAGE_FAILURES, [])):
                staging.write(table, "import", table_rows)
            config = {"dataset": dataset, "recipe": recipe, "language": language, "imported_from": path.name,
                      "sha256": digest, "seed": 0}
            published = publish(warehouse, dataset, {t.name: staging.files(t.name) for t in tables}, VersionInfo(
                build_id=build_id, recipe=recipe, config=config, config_hash=digest[:16],
                memsynth_version=memsynth.__version__, prompt_hashes={}, schema_hashes={}, model="",
                started_at=started, derivation={"imported": path.name, "sha256": digest}), tables=tables,
                statistics=statistics)
        finally:
            staging.discard()
    return {"dataset": dataset, "version": published["version"], "row_counts": published["row_counts"],
            "statistics": published["statistics"]}


def _folder_digest(folder: Path) -> str:
    """sha256 over a folder's files (relative names and contents, in name order)."""
    digest = hashlib.sha256()
    for file in sorted(p for p in folder.rglob("*") if p.is_file()):
        digest.update(file.relative_to(folder).as_posix().encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()
