"""Shards write their Parquet one at a time while other shards' calls go."""

from __future__ import annotations

import threading
import time

from memsynth.build.run import BuildOptions, run_build
from memsynth.build.shards import ShardRuntime
from memsynth.generation.registry import load_config
from memsynth.warehouse.staging import StagingArea
from tests.conftest import write_config


def test_a_shard_writes_alone_while_calls_go(tmp_path, monkeypatch, simulator):
    real_write = StagingArea.write
    runtimes: list[ShardRuntime] = []
    real_stage = ShardRuntime.stage
    lock = threading.Lock()
    writing = [0]
    overlaps: list[int] = []  # calling shards, each time a second writer was at work

    def stage(self, shard, output):
        runtimes.append(self)
        return real_stage(self, shard, output)

    def slow_write(self, table, shard, rows):
        with lock:
            writing[0] += 1
            if writing[0] > 1:
                overlaps.append(runtimes[0]._calling)
        try:
            time.sleep(0.02)  # long enough for shards that end together to meet here
            return real_write(self, table, shard, rows)
        finally:
            with lock:
                writing[0] -= 1

    monkeypatch.setattr(ShardRuntime, "stage", stage)
    monkeypatch.setattr(StagingArea, "write", slow_write)
    config = write_config(tmp_path / "c.yaml", personas={"count": 8}, max_workers=4,
                          llm={"model": "m", "base_url": simulator.base_url, "stage_variables": True,
                               "concurrency": 8, "retry_base_s": 0.01})
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    summary = run_build(load_config(config), BuildOptions(warehouse=str(tmp_path / "wh"), progress=False))

    assert summary["shards"] == 8 and summary["personas"] == 8
    # Two shards wrote at once only when no calls were under way (the build's last shards).
    assert all(calling == 0 for calling in overlaps), overlaps
