"""A build's first requests go out while Prefect's API server is still starting."""

from __future__ import annotations

import time

import pytest

from memsynth.build import flow
from memsynth.build.flow import BuildOptions, run_build
from memsynth.generation.registry import load_config
from tests.conftest import write_config


@pytest.mark.parametrize("written", [False, True], ids=["from-the-pool", "written-first"])
def test_the_first_shards_are_asked_for_before_prefects_server_answers_and_their_tasks_take_the_work(
        tmp_path, monkeypatch, simulator, written):
    real = flow.prefect_api_url
    asked_before: list[int] = []

    def late_server(stopped=lambda: False):
        # Prefect's server answers only once the build has sent work of its own: a build
        # that waited for the server before its first request would wait here a minute.
        deadline = time.monotonic() + 60
        while simulator.simulator.counters.requests < 40 and time.monotonic() < deadline:
            time.sleep(0.02)
        asked_before.append(simulator.simulator.counters.requests)
        return real(stopped)

    monkeypatch.setattr(flow, "prefect_api_url", late_server)
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
