"""How soon a build stops on a signal to its process group: seconds from the signal to the
process's exit, its exit code and its stderr lines, median of K runs per case.

Cases: SIGTERM and SIGINT to the group while every request fails (HTTP 500), the same after
the build's Prefect server was killed first (a cgroup stop signals every process at once),
and SIGTERM while a million personas are being written. tests/test_signals.py and
tests/test_cli.py assert what happens (code, one line, no request after); the time is here.

    python bench/stop_time.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, machine, write_result  # noqa: E402

sys.path.insert(0, str(ROOT))
from memsynth.simulator.server import Faults, Simulator, SimulatorThread  # noqa: E402
from tests.conftest import write_config  # noqa: E402

CASES = {
    "sigterm-failing": (signal.SIGTERM, False, False),
    "sigint-failing": (signal.SIGINT, False, False),
    "sigterm-failing-server-gone": (signal.SIGTERM, True, False),
    "sigterm-writing-personas": (signal.SIGTERM, False, True),
}


def one(folder: Path, sig: int, server_gone: bool, personas: bool) -> dict:
    sim = SimulatorThread(Simulator(faults=Faults() if personas else Faults(rate_500=1.0))).start()
    try:
        count = {"count": 1_000_000, "include_seed": False} if personas else {"count": 2}
        config = write_config(folder / "c.yaml", dataset="stop", personas=count,
                              llm={"model": "m", "stage_variables": True, "concurrency": 16,
                                   "response_mode": "json_schema"})
        env = {**os.environ, "OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        env.pop("PREFECT_API_URL", None)
        proc = subprocess.Popen([str(Path(sys.executable).parent / "memsynth"), "build", str(config),
                                 "--warehouse", str(folder / "wh"), "--no-progress"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
        while sim.simulator.counters.requests < (200 if personas else 20) and proc.poll() is None:
            time.sleep(0.1)
        time.sleep(2)  # into the flow
        if server_gone:
            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
            time.sleep(0.5)
        signalled = time.perf_counter()
        os.killpg(proc.pid, sig)
        _, stderr = proc.communicate(timeout=600)
        return {"seconds": round(time.perf_counter() - signalled, 2), "code": proc.returncode,
                "stderr_lines": len(stderr.strip().splitlines()), "tracebacks": stderr.count("Traceback")}
    finally:
        sim.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--name", default="stop-time")
    args = parser.parse_args()
    results = {}
    for case, (sig, gone, personas) in CASES.items():
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="memsynth-stop-") as folder:
                runs.append(one(Path(folder), sig, gone, personas))
        results[case] = {"median_seconds": statistics.median(r["seconds"] for r in runs), "runs": runs}
        print(case, results[case])
    print(write_result(args.name, {"machine": machine(), "cases": results}))


if __name__ == "__main__":
    main()
