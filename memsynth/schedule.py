"""Scheduled builds: a config served as a Prefect deployment on the user's Prefect server."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
from prefect.types.entrypoint import EntrypointType

from memsynth.build import BuildOptions, run_build
from memsynth.config import load_config
from memsynth.errors import ConfigError


@flow(name="memsynth-scheduled-build", persist_result=False, log_prints=True)
def scheduled_build(config_path: str, llm: str = "openai", personas: int | None = None,
                    warehouse: str | None = None) -> dict[str, Any]:
    """Build CONFIG as it is on disk now and publish the dataset's next version."""
    summary = run_build(load_config(config_path), BuildOptions(
        llm=llm, personas=personas, warehouse=warehouse, progress=False))  # type: ignore[arg-type]
    print(f"published {summary['dataset']} version {summary['version']}: "
          f"{sum(summary['row_counts'].values()):,} rows, {summary['llm']['requests']} requests sent")
    return {k: summary[k] for k in ("dataset", "version", "row_counts", "failed_items", "seconds")}


def serve(config_path: str, *, cron: str | None, interval: float | None, name: str | None,
          llm: str, personas: int | None, warehouse: str | None) -> None:
    """Serve CONFIG's build as a deployment until interrupted (runs execute in this process)."""
    if not os.environ.get("PREFECT_API_URL"):
        raise ConfigError("a schedule needs a Prefect server that outlives this command: start one "
                          "(prefect server start) and set PREFECT_API_URL=http://127.0.0.1:4200/api")
    config = load_config(config_path)  # a bad config is one line now, not a failed run later
    scheduled_build.serve(
        name=name or config.dataset,
        cron=cron, interval=interval,
        parameters={"config_path": str(Path(config_path).resolve()), "llm": llm, "personas": personas,
                    "warehouse": str(Path(warehouse).resolve()) if warehouse else None},
        # One run of a deployment at a time; a run due meanwhile waits its turn.
        global_limit=ConcurrencyLimitConfig(limit=1, collision_strategy=ConcurrencyLimitStrategy.ENQUEUE),
        description=config.description or f"memsynth build of {config.dataset} ({config.recipe})",
        tags=["memsynth", config.recipe],
        entrypoint_type=EntrypointType.MODULE_PATH,
    )
