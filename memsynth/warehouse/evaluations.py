"""Evaluation results beside the dataset: `eval_runs` and `eval_scores` in a DuckLake
catalog of their own (`<dataset>/evaluations/`).

Runs are appended, never versioned: a run names the version it scored, and every version's
queries see every run (`memsynth query` attaches them), so runs and versions compare in SQL.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb

from memsynth.core import duck
from memsynth.warehouse.ducklake import attach, dataset_dir

EVALUATIONS_DIR = "evaluations"
TABLES = ("eval_runs", "eval_scores")
DDL = """
CREATE TABLE IF NOT EXISTS ev.eval_runs (
    run_id VARCHAR, task VARCHAR, dataset VARCHAR, version INTEGER, recipe VARCHAR,
    settings VARCHAR, model VARCHAR, judge_model VARCHAR, items INTEGER,
    llm_requests BIGINT, llm_cache_hits BIGINT, prompt_tokens BIGINT, completion_tokens BIGINT,
    started_at TIMESTAMP WITH TIME ZONE, finished_at TIMESTAMP WITH TIME ZONE);
CREATE TABLE IF NOT EXISTS ev.eval_scores (
    run_id VARCHAR, system VARCHAR, metric VARCHAR, scope VARCHAR, value DOUBLE, n INTEGER);
"""


@dataclass
class Score:
    """One figure of a run: `system` (a retriever, a setting) × `metric` × `scope`
    ("all", or a subset such as "need:PN"), over `n` items."""

    system: str
    metric: str
    scope: str
    value: float | None
    n: int


@dataclass
class EvalRun:
    """A finished evaluation, ready to record."""

    run_id: str
    task: str
    dataset: str
    version: int
    recipe: str
    settings: dict[str, Any]
    model: str
    judge_model: str
    items: int
    started_at: float
    llm: dict[str, Any] = field(default_factory=dict)
    scores: list[Score] = field(default_factory=list)
    report_path: str | None = None


def evaluations_dir(warehouse: Path, dataset: str) -> Path:
    return dataset_dir(warehouse, dataset) / EVALUATIONS_DIR


def record(warehouse: Path, run: EvalRun) -> None:
    """Append the run and its scores in one transaction."""
    directory = evaluations_dir(warehouse, run.dataset)
    directory.mkdir(parents=True, exist_ok=True)
    con = duck.connect()
    try:
        attach(con, directory, alias="ev")
        con.execute("BEGIN TRANSACTION")
        con.execute(DDL)
        con.execute("INSERT INTO ev.eval_runs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
            run.run_id, run.task, run.dataset, run.version, run.recipe,
            json.dumps(run.settings, sort_keys=True, default=str), run.model, run.judge_model, run.items,
            run.llm.get("requests", 0), run.llm.get("cache_hits", 0), run.llm.get("prompt_tokens", 0),
            run.llm.get("completion_tokens", 0), datetime.fromtimestamp(run.started_at, UTC), datetime.now(UTC)])
        if run.scores:
            con.executemany("INSERT INTO ev.eval_scores VALUES (?, ?, ?, ?, ?, ?)",
                            [[run.run_id, s.system, s.metric, s.scope, s.value, s.n] for s in run.scores])
        con.execute("COMMIT")
    finally:
        con.close()


def attach_results(con: duckdb.DuckDBPyConnection, warehouse: Path, dataset: str) -> None:
    """Make `eval_runs` and `eval_scores` readable by name on `con`, when any run exists."""
    directory = evaluations_dir(warehouse, dataset)
    if not (directory / "catalog.ducklake").is_file():
        return
    attach(con, directory, alias="ev", read_only=True)
    present = {r[0] for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = 'ev'").fetchall()}
    for name in TABLES:
        if name in present:
            con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT * FROM ev.{name}")
