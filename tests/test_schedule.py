"""Scheduled builds on a real Prefect server: `memsynth serve`, build reports in the UI, and
one build of a dataset at a time."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from memsynth.build.prefect_api import wait_healthy
from memsynth.warehouse.catalog import run_query
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.lock import BuildLock
from tests.conftest import ROOT, cli_json_here, memsynth_cli, start_simulator, write_config


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Prefect's runner kills the pids its runs recorded: these never overlap the tests that
# signal builds by pid (see pyproject's addopts).
pytestmark = pytest.mark.xdist_group("process-signals")

@pytest.fixture(scope="module")
def prefect_server(tmp_path_factory):
    """`prefect server start` on a free loopback port with its own SQLite home: its API URL."""
    home = tmp_path_factory.mktemp("prefect-home")
    port = _free_port()
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen([str(Path(sys.executable).parent / "prefect"), "server", "start", "--host",
                                "127.0.0.1", "--port", str(port), "--no-ui"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api"
    try:
        wait_healthy(url, process, timeout_s=120)
        yield url
    finally:
        process.terminate()
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()


def _post(url: str, path: str, body: dict | None = None) -> object:
    """POST to the API, retrying a 503 (SQLite busy while the server's services start), as
    Prefect's own client does."""
    for _ in range(20):
        response = httpx.post(f"{url}{path}", json=body or {}, timeout=10)
        if response.status_code != 503:
            break
        time.sleep(0.5)
    response.raise_for_status()
    return response.json()


def _private_tmp(tmp_path: Path) -> str:
    """A temp folder for a `serve` process: Prefect's runner keeps `runner_storage/<id>` there,
    which a killed (or terminated) server cannot remove; it goes with the test's tmp_path."""
    folder = tmp_path / "tmp"
    folder.mkdir(exist_ok=True)
    return str(folder)


# A served deployment's runner asks the server for due runs every 10 s by default: the tests'
# runs would wait out up to 10 s each time (three times in the kill test) for no reason.
RUNNER_POLL = {"PREFECT_RUNNER_POLL_FREQUENCY": "1"}


def _wait_for(what: str, probe, timeout_s: float = 180):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_served_deployment_builds_when_triggered_and_on_schedule(tmp_path, prefect_server):
    wh = tmp_path / "wh"
    env = {**os.environ, **RUNNER_POLL, "PREFECT_API_URL": prefect_server, "TMPDIR": _private_tmp(tmp_path)}
    exe = Path(sys.executable).parent / "memsynth"
    serving = subprocess.Popen([str(exe), "serve", str(ROOT / "configs/quickstart.yaml"), "--llm", "simulator",
                                "--personas", "1", "--warehouse", str(wh), "--interval", "30", "--name", "qs"],
                               env=env, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deployment = _wait_for("the deployment", lambda: _post(prefect_server, "/deployments/filter"), 60)[0]
        assert deployment["name"] == "qs"
        assert deployment["global_concurrency_limit"]["limit"] == 1
        assert deployment["concurrency_options"]["collision_strategy"] == "ENQUEUE"
        # The first scheduled run is due 30 s after serving starts: usually after the triggered
        # run has finished, so the two seldom meet (when they do, the later one waits its turn).
        assert deployment["schedules"][0]["schedule"]["interval"] == 30

        triggered = _post(prefect_server, f"/deployments/{deployment['id']}/create_flow_run")

        def finished() -> list:
            runs = _post(prefect_server, "/flow_runs/filter", {
                "flow_runs": {"deployment_id": {"any_": [deployment["id"]]}, "state": {"type": {"any_": ["COMPLETED"]}}}})
            done = {r["id"] for r in runs}
            scheduled = [r for r in runs if r["auto_scheduled"]]
            return runs if triggered["id"] in done and scheduled else []

        try:
            runs = _wait_for("a triggered and a scheduled run to complete", finished, 300)
        except AssertionError:
            states = [(r["name"], r["auto_scheduled"], r["state_name"], r["expected_start_time"]) for r in
                      _post(prefect_server, "/flow_runs/filter", {"sort": "EXPECTED_START_TIME_ASC"})]
            raise AssertionError(f"runs: {states}") from None
    finally:
        serving.terminate()
        stderr = serving.communicate(timeout=30)[1].decode(errors="replace")
    assert all(r["state_type"] == "COMPLETED" for r in runs), stderr[-2000:]
    versions = cli_json_here("versions", "quickstart", "--warehouse", str(wh), "--format", "json")
    # The runs after the first built the same rows: they published nothing.
    assert [v["version"] for v in versions] == [1]

    # Each build left its report and its progress on its Prefect run, and shards are named
    # by the personas they hold.
    artifacts = _post(prefect_server, "/artifacts/filter")
    reports = [a for a in artifacts if a["type"] == "markdown" and a["key"] == "memsynth-quickstart"]
    assert len(reports) >= 2 and sum("nothing changed" in r["data"] for r in reports) == len(reports) - 1
    assert "| memories |" in reports[0]["data"] and "| enpmr.blri |" in reports[0]["data"]
    progress = [a for a in artifacts if a["type"] == "progress"]
    assert len(progress) >= 2 and all(a["data"] == 100 for a in progress)
    shards = [t["name"] for t in _post(prefect_server, "/task_runs/filter") if t["task_key"].startswith("run_shard")]
    assert shards and set(shards) == {"persona 1"}


def _runs(url: str, deployment_id: str) -> list[dict]:
    return _post(url, "/flow_runs/filter", {"flow_runs": {"deployment_id": {"any_": [deployment_id]}}})


def test_a_served_run_killed_with_its_server_resumes_exactly_when_served_again(tmp_path, prefect_server):
    """kill -9 of `memsynth serve` and the run it is executing: serving again marks the dead
    run crashed (else it would keep the deployment's one slot for five minutes), and the next
    run pays only the calls the dead one had not, and publishes what an uninterrupted build
    publishes."""
    import signal

    sim = start_simulator(latency_ms=40)
    try:
        config = write_config(tmp_path / "c.yaml", dataset="served", personas={"count": 2},
                              llm={"model": "m", "stage_variables": True, "concurrency": 4})
        wh, clean = tmp_path / "wh", tmp_path / "clean"
        env = {**os.environ, **RUNNER_POLL, "PREFECT_API_URL": prefect_server, "OPENAI_BASE_URL": sim.base_url,
               "OPENAI_API_KEY": "x", "TMPDIR": _private_tmp(tmp_path)}
        command = [str(Path(sys.executable).parent / "memsynth"), "serve", str(config), "--warehouse", str(wh)]

        def served(log: str) -> subprocess.Popen:
            # Its own session, so that kill -9 takes the flow-run process it spawns as well.
            return subprocess.Popen(command, env=env, cwd=tmp_path, start_new_session=True,
                                    stdout=(tmp_path / log).open("w"), stderr=subprocess.STDOUT)

        serving = served("serve-1.log")
        try:
            deployment = _wait_for("the deployment", lambda: [
                d for d in _post(prefect_server, "/deployments/filter") if d["name"] == "served"], 60)[0]
            killed = _post(prefect_server, f"/deployments/{deployment['id']}/create_flow_run")
            cache = wh / "_cache"

            def paid() -> int:
                return sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl")) if cache.exists() else 0

            _wait_for("the served build to pay 40 calls", lambda: paid() >= 40, 120)
        finally:
            os.killpg(serving.pid, signal.SIGKILL)
            serving.wait(30)
        kept, sent_before = paid(), sim.simulator.counters.requests
        # Lost: the calls in flight (concurrency 4) and the answers received but still waiting for
        # their group commit (a call frees its slot when its answer arrives), as in test_cli's kill test.
        assert sent_before - kept <= 8
        states = {r["id"]: r["state_type"] for r in _runs(prefect_server, deployment["id"])}
        assert states == {killed["id"]: "RUNNING"}, "the server still thinks the run is under way"
        sim.simulator.latency_s = 0  # the latency only had to leave calls in flight at the kill

        serving = served("serve-2.log")
        try:
            def crashed() -> bool:
                return {r["id"]: r["state_type"] for r in _runs(prefect_server, deployment["id"])} == {
                    killed["id"]: "CRASHED"}

            _wait_for("serving again to mark the dead run crashed", crashed, 60)
            resumed = _post(prefect_server, f"/deployments/{deployment['id']}/create_flow_run")

            def finished() -> str | None:
                state = {r["id"]: r["state_type"] for r in _runs(prefect_server, deployment["id"])}[resumed["id"]]
                return state if state in {"COMPLETED", "FAILED", "CRASHED"} else None

            # Well inside the five minutes a dead run's lease would have held the slot.
            assert _wait_for("the resumed run", finished, 150) == "COMPLETED"
        finally:
            os.killpg(serving.pid, signal.SIGTERM)
            serving.wait(30)
        assert "crashed" in (tmp_path / "serve-2.log").read_text()
        sent_resumed = sim.simulator.counters.requests - sent_before

        done = memsynth_cli("build", str(config), "--warehouse", str(clean), "--no-progress", "--format", "json",
                            env={k: env[k] for k in ("PREFECT_API_URL", "OPENAI_BASE_URL", "OPENAI_API_KEY")})
        assert done.returncode == 0, done.stderr[-2000:]
        uninterrupted = json.loads(done.stdout)["llm"]["requests"]
        assert uninterrupted - kept <= sent_resumed <= uninterrupted - kept + 4
        for table in ("personas", "memories", "memory_sessions", "support_dialogues", "benchmark"):
            sql = f"SELECT * FROM {table} ORDER BY ALL"
            assert run_query(wh, "served", sql)[1] == run_query(clean, "served", sql)[1], table
    finally:
        sim.stop()


def test_serving_without_a_prefect_server_is_one_line(tmp_path):
    result = memsynth_cli("serve", str(ROOT / "configs/quickstart.yaml"), "--interval", "60",
                          env={"PREFECT_API_URL": ""})
    assert result.returncode == 1 and "prefect server start" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_second_build_of_a_dataset_is_refused_while_one_runs(tmp_path):
    wh = tmp_path / "wh"
    with BuildLock(dataset_dir(wh, "quickstart"), "quickstart"):
        result = memsynth_cli("build", str(ROOT / "configs/quickstart.yaml"), "--llm", "simulator",
                              "--warehouse", str(wh), "--no-progress")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: dataset quickstart is being built by pid {os.getpid()} since "
        + result.stderr.split("since ")[1].split(";")[0] + "; run this build again when that one has "
        "published (one build of a dataset at a time)"]
    # The lock goes with the build that held it.
    with BuildLock(dataset_dir(wh, "quickstart"), "quickstart"):
        pass


def test_prefect_deploy_all_declares_a_deployment_per_shipped_config(prefect_server):
    env = {**os.environ, "PREFECT_API_URL": prefect_server, "MEMSYNTH_REPO": str(ROOT)}
    prefect = str(Path(sys.executable).parent / "prefect")
    subprocess.run([prefect, "work-pool", "create", "memsynth", "--type", "process"], env=env, cwd=ROOT,
                   check=True, capture_output=True, timeout=60)
    done = subprocess.run([prefect, "--no-prompt", "deploy", "--all"], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    deployed = {d["name"]: d for d in _post(prefect_server, "/deployments/filter")
                if d["entrypoint"] == "memsynth/build/schedule.py:scheduled_build"}
    shipped = {p.stem for p in (ROOT / "configs").glob("*.yaml")}
    assert set(deployed) == shipped
    for name, d in deployed.items():
        assert d["parameters"]["config_path"] == f"configs/{name}.yaml"
        assert d["global_concurrency_limit"]["limit"] == 1
        assert d["concurrency_options"]["collision_strategy"] == "ENQUEUE"
