"""A build's first requests go out while Prefect's API server is still starting."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time

import pytest

from memsynth.build import flow, run
from memsynth.build.run import BuildOptions, run_build
from memsynth.build.shards import ShardRuntime
from memsynth.generation.registry import load_config
from tests.conftest import ROOT, write_config


@pytest.mark.parametrize("written", [False, True], ids=["from-the-pool", "written-first"])
def test_the_first_shards_are_asked_for_before_prefects_server_answers_and_their_tasks_take_the_work(
        tmp_path, monkeypatch, simulator, written):
    real = run.prefect_api_url
    asked_before: list[int] = []

    def late_server(stopped=lambda: False):
        # Prefect's server answers only once the build has sent work of its own: a build
        # that waited for the server before its first request would wait here a minute.
        deadline = time.monotonic() + 60
        while simulator.simulator.counters.requests < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
        asked_before.append(simulator.simulator.counters.requests)
        return real(stopped)

    monkeypatch.setattr(run, "prefect_api_url", late_server)
    # Three shards of one persona, two at a time: two start early, the third from its task.
    # Written first: the pool is left out, so every persona is asked for before the shards.
    config = write_config(tmp_path / "c.yaml", personas={"count": 3, "include_seed": not written}, max_workers=2,
                          llm={"model": "m", "base_url": simulator.base_url, "stage_variables": True,
                               "concurrency": 8, "retry_base_s": 0.01})
    options = BuildOptions(warehouse=str(tmp_path / "wh"), progress=False)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    summary = run_build(load_config(config), options)

    assert asked_before and asked_before[0] >= 40, asked_before
    sent = simulator.simulator.counters.requests - summary["llm"]["probe_requests"]
    # Each early shard's work was taken by its task, not asked again from the cache: every
    # call was sent once, and none was answered from the cache.
    assert summary["llm"]["cache_hits"] == 0 and summary["llm"]["requests"] == summary["llm"]["calls"] == sent
    assert summary["shards"] == 3 + written and summary["personas"] == 3  # (+ the personas task's)
    assert bool(summary["persona_synthesis"]) == written

    again = run_build(load_config(config), options)  # and the same build, from the cache
    assert again["llm"]["requests"] == 0 and again["row_counts"] == summary["row_counts"]


def test_the_next_shards_calls_go_while_a_finished_shard_writes_its_parquet(tmp_path, monkeypatch, simulator):
    real_stage = ShardRuntime.stage
    seen: dict[str, object] = {}

    def slow_stage(self, shard, output):
        # Shard 0 holds the only thread while it writes: the next shard's calls must go meanwhile.
        if shard == "shard-00000":
            before = simulator.simulator.counters.requests
            deadline = time.monotonic() + 30
            if "first" not in seen:
                while simulator.simulator.counters.requests < before + 10 and time.monotonic() < deadline:
                    time.sleep(0.02)
                seen["first"] = simulator.simulator.counters.requests - before
            else:  # from the cache: shard 1's calls end at once, and shard 2 must not start yet
                while not (1 in self.early and self.early[1][1].done()) and time.monotonic() < deadline:
                    time.sleep(0.02)
                time.sleep(0.3)
                seen["cached"] = (sorted(self.early), sorted(self.waiting))
        return real_stage(self, shard, output)

    monkeypatch.setattr(ShardRuntime, "stage", slow_stage)
    config = write_config(tmp_path / "c.yaml", personas={"count": 3}, max_workers=1,
                          llm={"model": "m", "base_url": simulator.base_url, "stage_variables": True,
                               "concurrency": 8, "retry_base_s": 0.01})
    options = BuildOptions(warehouse=str(tmp_path / "wh"), progress=False)
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    summary = run_build(load_config(config), options)

    assert seen["first"] >= 10, seen  # 0 when the next shard waits for the thread
    sent = simulator.simulator.counters.requests - summary["llm"]["probe_requests"]
    assert summary["llm"]["cache_hits"] == 0 and summary["llm"]["requests"] == summary["llm"]["calls"] == sent
    assert summary["shards"] == 3

    again = run_build(load_config(config), options)
    # One started shard at most waits for its task: finished outputs do not pile up in memory.
    assert seen["cached"] == ([1], [2]), seen
    assert again["llm"]["requests"] == 0 and again["row_counts"] == summary["row_counts"]


def test_the_first_requests_go_before_prefect_is_imported(tmp_path, simulator):
    """Prefect's import takes a second or more of a build's start: the first wave goes first."""
    config = write_config(tmp_path / "c.yaml", llm={"model": "m", "base_url": simulator.base_url,
                                                    "stage_variables": True, "concurrency": 8})
    script = textwrap.dedent("""
        import sys
        from memsynth.build import first_wave
        from memsynth.build.run import BuildOptions, run_build
        from memsynth.generation.registry import load_config

        started = first_wave.start
        def start(*args, **kwargs):
            print("prefect imported:", "prefect" in sys.modules, flush=True)
            return started(*args, **kwargs)
        first_wave.start = start
        run_build(load_config(sys.argv[1]), BuildOptions(warehouse=sys.argv[2], progress=False))
        print("prefect imported:", "prefect" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script, str(config), str(tmp_path / "wh")],
                         env={**os.environ, "OPENAI_API_KEY": "x"}, cwd=ROOT, capture_output=True,
                         text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    # Then the build's flow ran on Prefect.
    assert out.stdout.splitlines() == ["prefect imported: False", "prefect imported: True"], out.stdout


def test_a_build_on_memsynths_own_server_sends_no_heartbeats(tmp_path, monkeypatch, simulator):
    """That server ends with the build; its heartbeat thread held the flow's end up to a second."""
    import prefect.flow_engine

    real = prefect.flow_engine._send_heartbeats
    intervals: list[int | None] = []

    def recorded(engine, *args, **kwargs):
        intervals.append(engine.heartbeat_seconds)
        return real(engine, *args, **kwargs)

    monkeypatch.setattr(prefect.flow_engine, "_send_heartbeats", recorded)
    config = write_config(tmp_path / "c.yaml", llm={"model": "m", "base_url": simulator.base_url,
                                                    "stage_variables": True, "concurrency": 8})
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    monkeypatch.delenv("PREFECT_API_URL")  # the suite's shared server: the build's own serves it
    run_build(load_config(config), BuildOptions(warehouse=str(tmp_path / "wh"), progress=False))
    assert intervals == [None]
    assert flow.prefect_settings(None) == {}  # a server of the user's keeps Prefect's own


def test_a_prefect_api_url_set_after_prefect_was_imported_is_the_server_the_build_runs_on(
        tmp_path, simulator, shared_prefect_server):
    """Prefect reads its settings when it is imported: a program (or a test session) that sets
    PREFECT_API_URL later got Prefect's ephemeral server, started inside the build with a 20 s
    limit that a loaded machine missed ("Timed out while attempting to connect to ephemeral
    Prefect API server"). The build runs on the server the environment names when it runs."""
    import httpx

    dataset = f"late-url-{tmp_path.name[-12:]}".lower().replace("_", "-")
    config = write_config(tmp_path / "c.yaml", dataset=dataset, personas={"count": 1},
                          llm={"model": "m", "base_url": simulator.base_url, "stage_variables": True,
                               "concurrency": 8})
    script = textwrap.dedent("""
        import os, sys
        import prefect  # noqa: F401  Prefect's settings are read here, with no API URL
        from memsynth.build.run import BuildOptions, run_build
        from memsynth.generation.registry import load_config

        os.environ["PREFECT_API_URL"] = sys.argv[3]
        run_build(load_config(sys.argv[1]), BuildOptions(warehouse=sys.argv[2], progress=False))
    """)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    out = subprocess.run([sys.executable, "-c", script, str(config), str(tmp_path / "wh"), shared_prefect_server],
                         env={**env, "OPENAI_API_KEY": "x"}, cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr[-2000:]
    runs = httpx.post(f"{shared_prefect_server}/flow_runs/filter",
                      json={"flow_runs": {"name": {"like_": dataset}}}, timeout=30).json()
    assert [r["state"]["type"] for r in runs] == ["COMPLETED"], runs
