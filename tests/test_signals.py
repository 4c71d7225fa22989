"""A signal to a build's whole process group (`timeout`, systemd, docker, Ctrl-C) while its
endpoint fails: the build stops with one line and 128 + the signal's number.

Each test runs a real `memsynth build` with its own Prefect server (no PREFECT_API_URL), as a
user's build runs. Wall time is not asserted (a loaded machine); the generous timeouts only
guard against a hang (before the fix a SIGTERM ran 133-146 s more and exited 1).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psutil
import pytest

from memsynth.simulator.server import Faults
from tests.conftest import ROOT, start_simulator, write_config

pytestmark = pytest.mark.xdist_group("process-signals")

HANG_GUARD_S = 120


def _failing_build(tmp_path: Path, sim) -> subprocess.Popen[str]:
    """A build against an endpoint that answers every request with a 500, in a process group
    of its own (as a shell job or a service is)."""
    config = write_config(tmp_path / "c.yaml", dataset="sig", personas={"count": 2},
                          llm={"model": "m", "stage_variables": True, "concurrency": 4,
                               "response_mode": "json_schema"})  # no capability probe: it would fail first
    env = {**os.environ, "OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
    env.pop("PREFECT_API_URL", None)  # its own Prefect server, the one that died first
    return subprocess.Popen([str(Path(sys.executable).parent / "memsynth"), "build", str(config),
                             "--warehouse", str(tmp_path / "wh"), "--no-progress"],
                            env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def _wait_for_flow(sim, proc: subprocess.Popen[str]) -> psutil.Process:
    """Until the build's flow runs on its Prefect server (a signal before stops the first
    wave, with no flow to wind down) and its requests fail; that server."""
    deadline = time.monotonic() + HANG_GUARD_S
    while True:
        assert proc.poll() is None, proc.communicate()[1][-2000:]
        assert time.monotonic() < deadline, "the build's flow never ran against the failing endpoint"
        server = next(iter(psutil.Process(proc.pid).children(recursive=True)), None)
        if server is not None and sim.simulator.counters.requests >= 10 and _flow_running(server):
            return server
        time.sleep(0.2)


def _flow_running(server: psutil.Process) -> bool:
    with contextlib.suppress(psutil.Error, ValueError, IndexError, httpx.HTTPError):
        args = server.cmdline()
        port = args[args.index("--port") + 1]
        found = httpx.post(f"http://127.0.0.1:{port}/api/flow_runs/filter", timeout=5,
                           json={"flow_runs": {"state": {"type": {"any_": ["RUNNING"]}}}})
        return found.status_code == 200 and bool(found.json())
    return False


def _until_dead(server: psutil.Process) -> None:
    """Until `server` has exited: gone, or a zombie its parent, the build, has not reaped yet
    (psutil's wait would wait on it for as long as it is given). Killed after a few seconds:
    uvicorn's graceful stop may wait on the build's open connections."""
    deadline = time.monotonic() + 5
    with contextlib.suppress(psutil.NoSuchProcess):
        while server.status() != psutil.STATUS_ZOMBIE:
            if time.monotonic() > deadline:
                server.kill()
                deadline = time.monotonic() + HANG_GUARD_S
            time.sleep(0.05)


def _finish(proc: subprocess.Popen[str]) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=HANG_GUARD_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"still running {HANG_GUARD_S} s after the signal: {err[-2000:]}") from None


def test_sigterm_to_the_process_group_and_every_child_stops_the_build_with_one_line_and_143(tmp_path):
    """As systemd stops a unit: SIGTERM to every process of the build, its Prefect server
    included (which, before, died under the flow and kept the build retrying it for minutes)."""
    sim = start_simulator(faults=Faults(rate_500=1.0))
    try:
        proc = _failing_build(tmp_path, sim)
        server = _wait_for_flow(sim, proc)
        # Its Prefect server goes first, as it did when the group's SIGTERM reached it (a
        # cgroup's processes are all signalled at once): the flow cannot report to it.
        server.terminate()
        _until_dead(server)
        os.killpg(proc.pid, signal.SIGTERM)
        _, stderr = _finish(proc)
    finally:
        sim.stop()
    lines = stderr.strip().splitlines()
    assert proc.returncode == 128 + signal.SIGTERM, stderr[-3000:]
    # The build's one line; before it, at most Prefect's own two about its server going away
    # (it went before the build was signalled). Before the fix: about 200 lines.
    assert len(lines) <= 3 and lines[-1].startswith("error: stopped by SIGTERM"), stderr[-3000:]
    assert "Traceback" not in stderr
    assert not (tmp_path / "wh" / "sig" / "catalog.ducklake").exists()  # nothing published


def test_ctrl_c_twice_to_the_process_group_ends_the_build_at_once_with_one_line_and_130(tmp_path):
    sim = start_simulator(faults=Faults(rate_500=1.0))
    try:
        proc = _failing_build(tmp_path, sim)
        _wait_for_flow(sim, proc)
        os.killpg(proc.pid, signal.SIGINT)
        time.sleep(0.05)
        with contextlib.suppress(ProcessLookupError):  # the first may have ended it already
            os.killpg(proc.pid, signal.SIGINT)
        _, stderr = _finish(proc)
    finally:
        sim.stop()
    lines = stderr.strip().splitlines()
    assert proc.returncode == 128 + signal.SIGINT, stderr[-3000:]
    assert len(lines) == 1 and lines[0].startswith("error: stopped"), stderr[-3000:]
    assert "SIGINT" in lines[0] and "Traceback" not in stderr and "Exception ignored" not in stderr
