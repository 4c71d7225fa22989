"""Scheduled builds: a config served as a Prefect deployment on the user's Prefect server."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import Any

from prefect import flow
from prefect.client.schemas.objects import ConcurrencyLimitConfig, ConcurrencyLimitStrategy
from prefect.types.entrypoint import EntrypointType

from memsynth.build.run import BuildOptions, run_build
from memsynth.core.errors import BuildFailed, ConfigError
from memsynth.generation.registry import load_config
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.location import resolve_warehouse
from memsynth.warehouse.lock import BuildLock

FLOW_NAME = "memsynth-scheduled-build"


@flow(name=FLOW_NAME, persist_result=False, log_prints=True)
def scheduled_build(config_path: str, llm: str = "openai", personas: int | None = None,
                    warehouse: str | None = None) -> dict[str, Any]:
    """Build CONFIG as it is on disk now and publish the dataset's next version."""
    summary = run_build(load_config(config_path), BuildOptions(
        llm=llm, personas=personas, warehouse=warehouse, progress=False))  # type: ignore[arg-type]
    said = "nothing changed: {} version {} is current" if summary.get("unchanged") else "published {} version {}"
    print(said.format(summary["dataset"], summary["version"]) + f": {sum(summary['row_counts'].values()):,} rows, "
          f"{summary['llm']['requests']} requests sent")
    return {k: summary.get(k) for k in ("dataset", "version", "unchanged", "row_counts", "failed_items", "seconds")}


def serve(config_path: str, *, cron: str | None, interval: float | None, name: str | None,
          llm: str, personas: int | None, warehouse: str | None) -> None:
    """Serve CONFIG's build as a deployment until interrupted (each run in a child process)."""
    if not os.environ.get("PREFECT_API_URL"):
        raise ConfigError("a schedule needs a Prefect server that outlives this command: start one "
                          "(prefect server start) and set PREFECT_API_URL=http://127.0.0.1:4200/api")
    config = load_config(config_path)  # a bad config is one line now, not a failed run later
    name = name or config.dataset
    for run in release_dead_runs(name, dataset_dir(resolve_warehouse(warehouse, config), config.dataset),
                                 config.dataset):
        print(f"marked run {run} crashed: it was under way when its process died")
    try:
        _serve(name, config_path, config, cron, interval, llm, personas, warehouse)
    finally:
        # Prefect's runner removes its own `runner_storage/<id>` folder but not the parent it made
        # in the system's temp folder.
        with contextlib.suppress(OSError):
            (Path(tempfile.gettempdir()) / "runner_storage").rmdir()


def _serve(name: str, config_path: str, config: Any, cron: str | None, interval: float | None, llm: str,
           personas: int | None, warehouse: str | None) -> None:
    scheduled_build.serve(
        name=name,
        cron=cron, interval=interval,
        parameters={"config_path": str(Path(config_path).resolve()), "llm": llm, "personas": personas,
                    "warehouse": str(Path(warehouse).resolve()) if warehouse else None},
        # One run of a deployment at a time; a run due meanwhile waits its turn.
        global_limit=ConcurrencyLimitConfig(limit=1, collision_strategy=ConcurrencyLimitStrategy.ENQUEUE),
        description=config.description or f"memsynth build of {config.dataset} ({config.recipe})",
        tags=["memsynth", config.recipe],
        entrypoint_type=EntrypointType.MODULE_PATH,
    )


def release_dead_runs(deployment: str, directory: Path, dataset: str) -> list[str]:
    """Mark the deployment's runs still Running whose build is gone as Crashed; their names.

    A run killed with its `serve` process (kill -9, a reboot) stays Running on the server and
    keeps the deployment's one concurrency slot until its lease lapses (five minutes), so
    every later run would wait that long. Holding the dataset's build lock proves no build of
    it is under way here, so such a run is dead; Crashed frees its slot at once.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import (
        FlowRunFilter,
        FlowRunFilterDeploymentId,
        FlowRunFilterState,
        FlowRunFilterStateType,
    )
    from prefect.client.schemas.objects import StateType
    from prefect.exceptions import ObjectNotFound
    from prefect.states import Crashed

    with get_client(sync_client=True) as client:
        try:
            found = client.read_deployment_by_name(f"{FLOW_NAME}/{deployment}")
        except ObjectNotFound:
            return []
        try:
            with BuildLock(directory, dataset):
                runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(
                    deployment_id=FlowRunFilterDeploymentId(any_=[found.id]),
                    state=FlowRunFilterState(type=FlowRunFilterStateType(any_=[StateType.RUNNING]))))
                for run in runs:
                    client.set_flow_run_state(run.id, Crashed(
                        message=f"its process died; no build of {dataset} was under way"), force=True)
        except BuildFailed:
            return []  # a build of this dataset is running, so its run is alive
    return [r.name for r in runs]
