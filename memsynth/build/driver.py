"""The building process's side of a build: what its flow keeps while shards run."""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from typing import Any

from memsynth.build.backoff import WORKER_ID
from memsynth.build.progress import BuildProgress
from memsynth.build.shards import ShardPlan, ShardRuntime, merged_counters


@dataclass
class BuildSession:
    """What the build's flow keeps in this process: the plan its tasks carry, the personas,
    the progress display, and (thread runner) the runtime every shard shares."""

    plan: ShardPlan
    runtime: ShardRuntime
    personas: dict[str, Any]
    progress: BuildProgress
    wanted: int = 0
    shard_size: int = 8
    remote: bool = False  # shards run in other processes (Dask workers)
    synthesis: dict[str, int] = field(default_factory=dict)
    flow_run_id: str | None = None  # the Prefect run the build's report is attached to
    futures: list[Any] = field(default_factory=list)  # the shard tasks, while the flow waits
    # Each worker process's latest report (remote shards): the build's totals add them up.
    workers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def cluster_summary(self) -> dict[str, Any] | None:
        """Dask builds: the workers that ran shards, and how often their limits backed off."""
        if not self.remote:
            return None
        # The personas task runs in this process, on the build's own engine.
        return {"workers": sum(w != WORKER_ID for w in self.workers), "share": asdict(self.plan.share) if self.plan.share else None,
                "backoffs": sum(w["backoffs"] - w["heard"] for w in self.workers.values()),
                "backoffs_heard": sum(w["heard"] for w in self.workers.values()),
                # llm.concurrency: auto: each worker's ceiling on its share, and why.
                "concurrency": {w: r["concurrency"] for w, r in self.workers.items() if r.get("concurrency")} or None}

    def stop(self) -> None:
        """A signal: start no more shards, cancel the queued ones, and cancel every call in
        flight (answers already received stay cached)."""
        self.runtime.stopped = True
        for future in list(self.futures):
            with contextlib.suppress(Exception):
                future.wrapped_future.cancel()  # a queued shard never starts; a running one goes on
        self.runtime.loop.cancel_running()

    def task_done(self, result: dict[str, Any], personas: int) -> None:
        """Count a finished task's personas and calls when they ran in another process."""
        if not self.remote or "worker" not in result:
            return
        worker = result["worker"]
        mine = self.workers.get(worker["id"])
        if mine is None or _progressed(worker["counters"]) >= _progressed(mine["counters"]):
            self.workers[worker["id"]] = worker
        merged_counters({w: s["counters"] for w, s in self.workers.items()}, into=self.runtime.engine.counters)
        for _ in range(personas):
            self.progress.persona_done()


def _progressed(counters: dict[str, Any]) -> int:
    return counters["done"] + counters["failed"] + counters["requests"]


# Driver-side only: the flow (which always runs in the building process) finds its session
# here; its tasks get the plain-data plan and find or build their runtime from it.
_SESSIONS: dict[str, BuildSession] = {}


def open_session(build: BuildSession) -> None:
    _SESSIONS[build.plan.build_id] = build


def find_session(build_id: str) -> BuildSession:
    return _SESSIONS[build_id]


def close_session(build_id: str) -> None:
    _SESSIONS.pop(build_id, None)
