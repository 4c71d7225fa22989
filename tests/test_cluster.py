"""runner: dask — shards on a real LocalCluster's worker processes, limits shared among them."""

from __future__ import annotations

import contextlib
import json
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from memsynth.build.shards import recipe_for
from memsynth.core.errors import ConfigError
from memsynth.generation.registry import load_config
from memsynth.llm.limits import AdaptiveConcurrency
from memsynth.llm.loop import LoopThread
from memsynth.warehouse.catalog import run_query
from tests.conftest import cli_json, memsynth_cli, start_simulator, write_config

DASK = {"workers": 2}


def _build(config: Path, warehouse: Path, *args: str, env: dict[str, str] | None = None) -> dict:
    return cli_json("build", str(config), "--warehouse", str(warehouse), "--no-progress", "--format", "json",
                    *args, env=env, timeout=300)


def _recipe_rows(config: Path, warehouse: Path) -> dict[str, list[tuple]]:
    """Every row of every recipe table of the latest version, in a stable order."""
    cfg = load_config(config)
    out = {}
    for table in recipe_for(cfg).output_tables():
        _, rows, _ = run_query(warehouse, cfg.dataset, f"SELECT * FROM {table.name}")
        out[table.name] = sorted(rows, key=repr)
    return out


def test_dask_build_equals_the_thread_build_from_the_same_cache(tmp_path: Path):
    cache = tmp_path / "cache"
    threads = write_config(tmp_path / "threads.yaml", personas={"count": 3}, cache_dir=str(cache))
    dask = write_config(tmp_path / "dask.yaml", personas={"count": 3}, cache_dir=str(cache),
                        runner="dask", dask=DASK)
    first = _build(threads, tmp_path / "a", "--llm", "simulator")
    assert first["runner"] == "thread" and first["dask"] is None and first["llm"]["requests"] > 0

    temp = tmp_path / "temp"
    temp.mkdir()
    second = _build(dask, tmp_path / "b", "--llm", "simulator", env={"TMPDIR": str(temp)})
    assert list(temp.iterdir()) == []  # the workers' scratch went with the cluster
    assert second["runner"] == "dask"
    assert second["dask"]["workers"] == 2  # both worker processes ran shards
    assert second["dask"]["share"]["concurrency"] == 4  # llm.concurrency 8 over 2 workers
    # Every answer came from the cache the thread build filled, through the workers' own engines.
    assert second["llm"]["requests"] == 0
    assert second["llm"]["cache_hits"] == second["llm"]["calls"] == first["llm"]["calls"]
    assert second["row_counts"] == first["row_counts"]
    rows_a, rows_b = _recipe_rows(threads, tmp_path / "a"), _recipe_rows(dask, tmp_path / "b")
    assert sum(len(r) for r in rows_a.values()) > 100
    assert rows_a == rows_b


def test_limits_hold_across_workers_and_back_off_together(tmp_path: Path):
    # The first request of the build (after the driver's capability probe) is told 429: its
    # worker halves its ceiling and the other must hear it.
    from memsynth.simulator.server import Faults

    simulator = start_simulator(latency_ms=30, faults=Faults(schedule=("ok", "429")))
    try:
        # One of these four personas loses its chain to a dropped life-themes item (25% of the
        # items, counted downstream): this test is about limits, not that.
        config = write_config(tmp_path / "dask.yaml", personas={"count": 4}, runner="dask", dask=DASK,
                              max_failure_rate=0.5,
                              llm={"model": "test-model", "stage_variables": True, "concurrency": 6,
                                   "retry_base_s": 0.01, "base_url": simulator.base_url})
        summary = _build(config, tmp_path / "w", env={"OPENAI_API_KEY": "test"})
        with urllib.request.urlopen(simulator.base_url.removesuffix("/v1") + "/stats") as response:
            stats = json.load(response)
    finally:
        simulator.stop()
    assert summary["dask"]["workers"] == 2
    assert stats["requests"] >= summary["llm"]["requests"] > 100
    # Two workers of 3 each: never more than the build's 6 in flight, and both at once.
    assert 3 < stats["peak_in_flight"] <= 6
    assert summary["dask"]["backoffs"] == 1, (summary["dask"], summary["llm"], stats)
    assert summary["dask"]["backoffs_heard"] == 1


@contextlib.contextmanager
def _cluster_with_channel(name: str) -> Iterator[tuple[Any, Any]]:
    """An in-process LocalCluster of one worker, its client, and an empty back-off channel."""
    distributed = pytest.importorskip("distributed")
    import dask

    with tempfile.TemporaryDirectory(prefix="memsynth-dask-") as scratch, \
            dask.config.set({"temporary-directory": scratch}), \
            distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None, local_directory=scratch,
                                     scheduler_kwargs={"dashboard": False}) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        distributed.Variable(name, client=client).set("")
        yield cluster, client


def test_backoff_channel_halves_the_other_workers_ceiling():
    from memsynth.build.backoff import BackoffListener

    with _cluster_with_channel("ch") as (_, client):
        loops = [LoopThread(), LoopThread()]
        limits = [AdaptiveConcurrency(8, cooldown_s=0.0), AdaptiveConcurrency(8, cooldown_s=0.0)]
        listeners = [BackoffListener("ch", limits[i], loops[i], client, identity=name)
                     for i, name in enumerate(["w1", "w2"])]
        try:
            loops[0].loop.call_soon_threadsafe(limits[0].on_rate_limited)
            deadline = time.monotonic() + 10
            while limits[1].ceiling > 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert limits[1].ceiling == 4.0 and listeners[1].heard == 1
            time.sleep(3 * BackoffListener.POLL_S)
            # The announcer does not hear itself and halve twice.
            assert limits[0].ceiling == 4.0 and listeners[0].heard == 0
        finally:
            for listener, loop in zip(listeners, loops):
                listener.stop()
                loop.stop()


class _ListeningRuntime:
    """A worker's runtime whose close, like the back-off listener's stop, waits (2 s at most)
    for a thread that polls the channel through the Dask client, so needs the event loop."""

    owned = True

    def __init__(self, build_id: str, client, channel: str):
        self.plan = SimpleNamespace(build_id=build_id)
        self.client, self.channel, self.last_poll_done = client, channel, None

    def close(self) -> None:
        import threading

        import distributed

        poll = threading.Thread(target=distributed.Variable(self.channel, client=self.client).get,
                                kwargs={"timeout": 1})
        poll.start()
        poll.join(2)
        self.last_poll_done = not poll.is_alive()


def test_closing_a_build_on_the_workers_lets_the_listeners_last_poll_finish_before_the_channel_goes():
    # Closed on the worker's event loop, the poll could not run until close gave up on it; it
    # then found the channel deleted, which the scheduler logged as an error after the summary.
    from memsynth.build import shards
    from memsynth.build.cluster import DaskCluster

    with _cluster_with_channel("ch") as (cluster, client):
        runtime = _ListeningRuntime("b1", client, "ch")
        shards.register(runtime)
        DaskCluster(address=cluster.scheduler_address, workers=1, client=client).close_build("b1", "ch")
        assert runtime.last_poll_done is True  # not waited out for 2 s
        assert "b1" not in shards._RUNTIMES


def test_concurrency_below_the_worker_count_is_refused(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", runner="dask", dask={"workers": 3},
                          llm={"model": "m", "stage_variables": True, "concurrency": 2})
    result = memsynth_cli("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "w"),
                          "--no-progress")
    assert result.returncode != 0
    assert "llm.concurrency 2 is less than the 3 Dask workers" in result.stderr
    assert "Traceback" not in result.stderr


def test_runner_is_not_part_of_the_config_hash(tmp_path: Path):
    a = load_config(write_config(tmp_path / "a.yaml"))
    b = load_config(write_config(tmp_path / "b.yaml", runner="dask", dask={"workers": 3}))
    assert a.hash() == b.hash()
    with pytest.raises(ConfigError, match="runner"):
        load_config(write_config(tmp_path / "c.yaml", runner="ray"))
