"""The test suite's time by file: python bench/suite.py [--name N] [--note TEXT] [-- PYTEST ARGS]

Runs the README's test command (`python -m pytest -q -n 3`, what .ci/run runs; `--workers N` for
another -n) with this file as a pytest plugin, which records every test's setup, call and teardown
seconds as the controller receives them and the CPU seconds each cost (its worker's and that
worker's processes': a test whose CPU is far below its seconds mostly waits), and writes
bench/results/<name>.json: the run's wall time, its exit code and, by file, the tests and their
setup / call / teardown / CPU seconds. `python bench/report.py` puts the latest runs in
RESULTS.md. Seconds are summed over the workers, so a file's total is the work it costs, not the
wall time it adds; a shared fixture's build is charged to the first test that asks for it on
each worker.

    .venv/bin/python bench/suite.py --name suite-before
    .venv/bin/python bench/suite.py --name suite-some -- tests/test_signals.py tests/test_schedule.py
    .venv/bin/python bench/suite.py --show suite-before suite-after   # compare two runs by file
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import psutil
import pytest

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
_PHASES = ("setup", "call", "teardown")


def cpu_seconds() -> float:
    """This process's CPU, its waited-for children's and its live descendants' (a server process a
    fixture keeps running is charged as it works, not when it exits)."""
    me = psutil.Process()
    total = sum(me.cpu_times()[:4])
    for child in me.children(recursive=True):
        try:
            total += sum(child.cpu_times()[:2])
        except psutil.Error:
            pass
    return total


class Recorder:
    """The pytest plugin: per test, the seconds of each phase and the CPU seconds it cost (-p suite
    with bench/ on the path)."""

    def __init__(self) -> None:
        self.tests: dict[str, dict[str, float]] = defaultdict(dict)
        self.outcomes: dict[str, str] = {}
        self.workers: dict[str, float] = defaultdict(float)  # seconds each xdist worker was busy
        self._cpu = 0.0

    def pytest_runtest_logstart(self) -> None:
        self._cpu = cpu_seconds()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        # On the worker: the CPU each phase cost rides with its report to the controller, so a
        # test that computes can be told from one that waits.
        report = (yield).get_result()
        now = cpu_seconds()
        report.user_properties.append(("cpu_seconds", round(now - self._cpu, 3)))
        self._cpu = now

    def pytest_runtest_logreport(self, report) -> None:
        self.tests[report.nodeid][report.when] = round(report.duration, 3)
        cpu = dict(report.user_properties).get("cpu_seconds")
        if cpu is not None:
            self.tests[report.nodeid][f"cpu_{report.when}"] = cpu
        node = getattr(report, "node", None)
        self.workers[getattr(getattr(node, "gateway", None), "id", "main")] += report.duration
        if report.when == "call" or report.outcome != "passed":
            self.outcomes.setdefault(report.nodeid, report.outcome)

    def pytest_sessionfinish(self, session) -> None:
        out = os.environ.get("MEMSYNTH_SUITE_TIMES")
        if out and not hasattr(session.config, "workerinput"):  # the controller only
            Path(out).write_text(json.dumps({"tests": self.tests, "outcomes": self.outcomes,
                                             "workers": {k: round(v, 1) for k, v in self.workers.items()}}))


def pytest_configure(config) -> None:
    if os.environ.get("MEMSYNTH_SUITE_TIMES"):
        config.pluginmanager.register(Recorder(), "memsynth-suite-recorder")


def by_file(tests: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    files: dict[str, dict[str, float]] = {}
    for nodeid, phases in tests.items():
        row = files.setdefault(nodeid.split("::")[0], {"tests": 0, **{p: 0.0 for p in _PHASES}, "cpu": 0.0})
        row["tests"] += 1
        for p in _PHASES:
            row[p] = round(row[p] + phases.get(p, 0.0), 2)
            row["cpu"] = round(row["cpu"] + phases.get(f"cpu_{p}", 0.0), 2)
    return dict(sorted(files.items(), key=lambda kv: -sum(kv[1][p] for p in _PHASES)))


def run(name: str, note: str, pytest_args: list[str], workers: int = 3) -> dict:
    times = BENCH / "results" / f".{name}.tests.json"
    command = [sys.executable, "-m", "pytest", "-q", "-n", str(workers), "-p", "suite", "-p", "no:cacheprovider",
               *pytest_args]
    env = {**os.environ, "MEMSYNTH_SUITE_TIMES": str(times),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))}
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    load_before = os.getloadavg()
    started = time.monotonic()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - started
    recorded = json.loads(times.read_text()) if times.exists() else {"tests": {}, "outcomes": {}}
    times.unlink(missing_ok=True)
    outcomes: dict[str, int] = defaultdict(int)
    for outcome in recorded["outcomes"].values():
        outcomes[outcome] += 1
    slowest = sorted(recorded["tests"].items(), key=lambda kv: -sum(kv[1].get(p, 0.0) for p in _PHASES))[:40]
    result = {
        "name": name, "note": note, "command": " ".join(["python bench/suite.py", "--name", name,
                                               *(["--workers", str(workers)] if workers != 3 else []), *pytest_args]),
        "pytest": " ".join(command[2:]), "exit_code": proc.returncode, "wall_seconds": round(wall, 1),
        "outcomes": dict(outcomes), "load_average_before": [round(x, 1) for x in load_before],
        "load_average_after": [round(x, 1) for x in os.getloadavg()],
        "summary": proc.stdout.strip().splitlines()[-1:] or [""],
        "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}",
        "git": git,  # at the start: the code the run tested
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "workers": recorded.get("workers", {}),
        "files": by_file(recorded["tests"]),
        "slowest_tests": {k: v for k, v in slowest},
    }
    (BENCH / "results" / f"{name}.json").write_text(json.dumps(result, indent=1) + "\n")
    sys.stdout.write(proc.stdout[-20000:])
    return result


def table(runs: list[dict]) -> list[str]:
    """Seconds by file (setup + call + teardown, every worker summed), one column per run."""
    files = list(dict.fromkeys(f for r in runs for f in r["files"]))
    head = "| file | " + " | ".join(f"{r['name']} (setup / call / total / CPU s)" for r in runs) + " |"
    out = [head, "|---|" + "---|" * len(runs)]
    for f in files:
        cells = []
        for r in runs:
            row = r["files"].get(f)
            cpu = f" / {row['cpu']:.0f}" if row and "cpu" in row else ""  # runs before CPU was recorded have none
            cells.append(f"{row['setup']:.0f} / {row['call']:.0f} / {sum(row[p] for p in _PHASES):.0f}{cpu}"
                         if row else "")
        out.append(f"| {f} | " + " | ".join(cells) + " |")
    totals = [sum(sum(row[p] for p in _PHASES) for row in r["files"].values()) for r in runs]
    out.append("| **all files (work, every worker)** | " + " | ".join(f"{t:.0f}" for t in totals) + " |")
    out.append("| **wall seconds** | " + " | ".join(f"{r['wall_seconds']:.0f}" for r in runs) + " |")
    return out


def section(names: list[str]) -> list[str]:
    """RESULTS.md's section (bench/report.py): the named runs side by side."""
    runs = [json.loads(p.read_text()) for n in names if (p := BENCH / "results" / f"{n}.json").exists()]
    if not runs:
        return []
    out = ["## The test suite by file (`bench/suite.py`)", "",
           "The README's test command (`python -m pytest -q -n 3` since the sixth session, `-n 2` before) with a "
           "plugin that records each test's setup, call and teardown seconds. A file's seconds are summed over "
           "the workers (the work it "
           "costs); a session fixture's build is charged to the first test asking for it on a worker.", ""]
    for r in runs:
        out.append(f"- {r['name']}: `{r['command']}` at {r['git']}, {r['when']}, {r['machine']}; exit "
                   f"{r['exit_code']}, {r['summary'][0]}; load average {r['load_average_before']} before, "
                   f"{r['load_average_after']} after; busy seconds by worker {r.get('workers', {})}. {r['note']}")
    return out + [""] + table(runs) + [""]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--name", default="suite")
    parser.add_argument("--note", default="")
    parser.add_argument("--workers", type=int, default=3, help="pytest-xdist workers (-n); the README's is 3")
    parser.add_argument("--show", nargs="+", metavar="NAME", help="print earlier runs side by side; run nothing")
    parser.add_argument("pytest_args", nargs="*")
    args = parser.parse_args()
    if args.show:
        print("\n".join(section(args.show)))
        return
    result = run(args.name, args.note, args.pytest_args, args.workers)
    print("\n".join(section([result["name"]])))
    sys.exit(result["exit_code"])


if __name__ == "__main__":
    main()
