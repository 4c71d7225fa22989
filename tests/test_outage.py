"""An endpoint that goes away mid-build: waited out, or the build stops and publishes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here, write_config

TABLES = ("personas", "profiles", "life_themes", "memories", "memory_sessions", "support_dialogues",
          "negatives", "quality_checks", "benchmark")


def _config(path: Path, **llm) -> Path:
    return write_config(path, dataset="outage", personas={"count": 2}, recipe_options={"dialogues_per_persona": 2},
                        llm={"model": "m", "stage_variables": True, "concurrency": 4, "retry_base_s": 0.02,
                             "timeout_s": 5, **llm})


def _start_build(config: Path, warehouse: Path, base_url: str) -> subprocess.Popen[str]:
    exe = Path(sys.executable).parent / "memsynth"
    return subprocess.Popen([str(exe), "build", str(config), "--warehouse", str(warehouse), "--format", "json",
                             "--no-progress"], cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "x"})


def _outage(sim: SimulatorThread, after: int, down_s: float | None, restarted: list) -> threading.Thread:
    """Stop `sim` once it has had `after` requests; serve again on its port `down_s` later
    (None: never)."""
    port = sim.port

    def run() -> None:
        deadline = time.monotonic() + 120
        while sim.simulator.counters.requests < after and time.monotonic() < deadline:
            time.sleep(0.02)
        sim.stop()
        if down_s is not None:
            time.sleep(down_s)
            restarted.append(SimulatorThread(Simulator(latency_ms=30), port=port).start())

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_outage_mid_build_is_waited_out_with_every_row(tmp_path):
    config = _config(tmp_path / "c.yaml")
    with SimulatorThread(Simulator(latency_ms=30)) as clean_sim:
        clean = cli_json_here("build", str(config), "--warehouse", str(tmp_path / "clean"), "--format", "json",
                              env={"OPENAI_BASE_URL": clean_sim.base_url, "OPENAI_API_KEY": "x"})
    sim = SimulatorThread(Simulator(latency_ms=30)).start()
    restarted: list[SimulatorThread] = []
    # Down for 8 s, not the 20 s: far past any one call's retries (6 attempts from
    # 0.02 s), and long enough for the gate's probes (0.25 s, doubling to 5 s) to grow to their
    # longest pause; the extra 12 s only waited out more probes of the same 5 s.
    thread = _outage(sim, after=40, down_s=8.0, restarted=restarted)
    build = _start_build(config, tmp_path / "wh", sim.base_url)
    try:
        stdout, stderr = build.communicate(timeout=240)
    finally:
        thread.join()
        for s in restarted:
            s.stop()
    assert build.returncode == 0, stderr[-2000:]
    summary = json.loads(stdout)
    assert restarted[0].simulator.counters.requests > 0, "the outage must fall inside the build"
    assert summary["failed_items"] == 0
    for table in TABLES:
        assert summary["row_counts"][table] == clean["row_counts"][table], table


def test_an_outage_past_the_limit_publishes_nothing_and_a_rerun_pays_nothing_twice(tmp_path):
    config = _config(tmp_path / "c.yaml", outage_wait_s=2)
    sim = SimulatorThread(Simulator(latency_ms=30)).start()
    port = sim.port
    thread = _outage(sim, after=40, down_s=None, restarted=[])
    build = _start_build(config, tmp_path / "wh", sim.base_url)
    try:
        _, stderr = build.communicate(timeout=240)
    finally:
        thread.join()
    assert build.returncode == 1
    assert "outage_wait_s" in stderr and "Traceback" not in stderr, stderr[-2000:]
    assert not (tmp_path / "wh" / "outage" / "catalog.ducklake").exists()
    answered = sim.simulator.counters.requests
    with SimulatorThread(Simulator(latency_ms=30), port=port) as back:
        again = cli_json_here("build", str(config), "--warehouse", str(tmp_path / "wh"), "--format", "json",
                              env={"OPENAI_BASE_URL": back.base_url, "OPENAI_API_KEY": "x"})
        sent_again = back.simulator.counters.requests
    assert again["version"] == 1 and again["failed_items"] == 0
    # What the first run got answered was cached and not asked again.
    assert again["llm"]["cache_hits"] > 0
    assert sent_again == again["llm"]["calls"] - again["llm"]["cache_hits"]
    assert again["llm"]["cache_hits"] <= answered
