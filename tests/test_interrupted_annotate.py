"""Ctrl-C during `annotate` (issue 53's real-server run): one line and exit 130, and no asyncio
"Task was destroyed but it is pending" from the scoring left on the loop at exit."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here, signals_as_a_shell_gives_them

SAMPLE = ROOT / "tests" / "data" / "characters_sample.zh.json"


def test_ctrl_c_during_annotate_is_one_line_and_130_with_no_task_left_pending(tmp_path):
    wh = tmp_path / "wh"
    cli_json_here("import", "characters", str(SAMPLE), "--dataset", "roles", "--warehouse", str(wh), "--format", "json")
    llm = tmp_path / "llm.yaml"
    llm.write_text(yaml.safe_dump({"llm": {"stage_variables": True}}), encoding="utf-8")
    # Slow enough that the 17 items are still being scored when the signal comes.
    with SimulatorThread(Simulator(profile="llamacpp", token_rate=40, capacity=1, interrupts=True)) as served:
        proc = subprocess.Popen([str(Path(sys.executable).parent / "memsynth"), "annotate", "emotions", "--dataset",
                                 "roles", "--warehouse", str(wh), "--no-progress", "--llm-config", str(llm),
                                 "--base-url", served.base_url, "--model", "local"],
                                env={**os.environ, "OPENAI_API_KEY": "x"}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, preexec_fn=signals_as_a_shell_gives_them)
        deadline = time.monotonic() + 120  # a hang guard only
        while served.simulator.counters.requests < 4:
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[1][-2000:]
            time.sleep(0.1)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr[-2000:]
    assert len(stderr.strip().splitlines()) == 1, stderr[-2000:]
    assert "pending" not in stderr and "Traceback" not in stderr
