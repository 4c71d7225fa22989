"""Shared fixtures: a throwaway Prefect home, a live simulator, the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# First: the run's private temp folder, checked empty at its end (tests/tmp_guard.py).
from tests.tmp_guard import pytest_sessionfinish, scratch  # noqa: F401, I001

ROOT = Path(__file__).resolve().parent.parent
# Before anything imports prefect: its database goes in a folder the tests own.
os.environ["PREFECT_HOME"] = scratch("memsynth-test-prefect-home-")
# memsynth keeps a migrated Prefect database under the user's cache: the tests keep theirs.
os.environ["XDG_CACHE_HOME"] = scratch("memsynth-cache-")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
os.environ.pop("MEMSYNTH_WAREHOUSE", None)
os.environ.pop("MEMSYNTH_MODEL", None)

from memsynth.simulator.server import Faults, Simulator, SimulatorThread  # noqa: E402

LOST_GROUPS = ("--dist loadgroup lost this test's xdist_group: this pytest and pytest-xdist do not group "
               "(pytest-dev/pytest-xdist#1386), and the suite relies on it (pyproject.toml); install "
               "pytest<9.2 (pip install -e '.[test]')")
_groups_lost = False


def pytest_collection_finish(session: pytest.Session) -> None:
    global _groups_lost
    if getattr(session.config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        _groups_lost = any(i.get_closest_marker("xdist_group") and "@" not in i.nodeid for i in session.items)


def pytest_runtest_setup(item: pytest.Item) -> None:
    if _groups_lost and item.get_closest_marker("xdist_group"):
        pytest.fail(LOST_GROUPS, pytrace=False)


@pytest.fixture(scope="session", autouse=True)
def shared_prefect_server():
    """One Prefect API server per test process, for every build it runs or starts: each
    `memsynth build` subprocess would otherwise start its own (about 4 s apiece). It is
    memsynth's own server (memsynth.build.prefect_api), so it dies with this process; tests that
    need another set or clear PREFECT_API_URL for their own commands."""
    if os.environ.get("PREFECT_API_URL"):
        yield os.environ["PREFECT_API_URL"]
        return
    from memsynth.build import prefect_api

    url = prefect_api.prefect_api_url()
    os.environ["PREFECT_API_URL"] = url
    try:
        yield url
    finally:
        os.environ.pop("PREFECT_API_URL", None)
        if prefect_api._server is not None:  # its database folder goes now, before the run's check
            prefect_api._server.stop()


S3_SECRET = "sk-memsynth-test-secret-9f3c1a"  # the s3 fixture's secret key: must end up nowhere


@pytest.fixture
def s3():
    """moto's S3 server on loopback with a bucket `lab`: (boto3 client, AWS environment)."""
    moto_server = pytest.importorskip("moto.server")
    boto3 = pytest.importorskip("boto3")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "memsynth-test", "AWS_SECRET_ACCESS_KEY": S3_SECRET,
           "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_REGION": "us-east-1"}
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=S3_SECRET)
    client.create_bucket(Bucket="lab")
    try:
        yield client, env
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL cluster per test worker (see tests/postgres_server.py)."""
    from tests.postgres_server import PostgresServer, binaries

    bin_dir = binaries()
    if bin_dir is None:
        pytest.skip("no PostgreSQL binaries (initdb) on this machine: apt-get install postgresql")
    server = PostgresServer(bin_dir).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def postgres_url(postgres_cluster) -> str:
    """A fresh database of the worker's cluster, as a catalog URL."""
    return postgres_cluster.database()


@pytest.fixture
def simulator():
    """A clean simulator on a loopback port; `.simulator` is the handler with its counters."""
    with SimulatorThread(Simulator()) as thread:
        yield thread


def start_simulator(**kwargs) -> SimulatorThread:
    faults = kwargs.pop("faults", None)
    return SimulatorThread(Simulator(faults=faults or Faults(), **kwargs)).start()


def signals_as_a_shell_gives_them() -> None:
    """A child's `preexec_fn`: SIGINT and SIGTERM at their defaults and unblocked, as an
    interactive shell starts a command. A test process may run in the background (SIGINT
    ignored) or after a library blocked a signal, and a child inherits both; a test that sends
    the child a signal must not depend on that."""
    import signal

    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def memsynth_cli(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None,
                 timeout: float = 240) -> subprocess.CompletedProcess[str]:
    """Run the installed `memsynth` console script as a user would."""
    exe = Path(sys.executable).parent / "memsynth"
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "memsynth.cli"]
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([*command, *args], capture_output=True, text=True, env=full_env,
                          cwd=cwd or ROOT, timeout=timeout)


def cli_json(*args: str, **kwargs) -> object:
    result = memsynth_cli(*args, **kwargs)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def cli_here(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> tuple[int, str, str]:
    """`memsynth ARGS` in this process (tests/release_probe.run_cli), `env` set and `cwd` entered
    for its length: (exit code, stdout, stderr). For a command whose own process is not what the
    test is about: each `memsynth` process spends about 3 s of CPU importing before it starts.
    Exit codes, one-line errors and signals of a real process stay with memsynth_cli."""
    import contextlib
    import signal
    from unittest import mock

    from memsynth.cli import output
    from tests.release_probe import run_cli

    # main() freezes the collector for a quick exit, and `build` keeps its SIGTERM handler for the
    # rest of its process: a test process goes on. Click names the program from __main__
    # (`python -m pytest.memsynth` in a one-process run).
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    # The CLI's consoles fix their width when made if COLUMNS is set then (whatever this test
    # process had at import): as in a process of its own, read it from this call's environment.
    for console in (output.out, output.err):
        console._width = console._height = None
    try:
        with mock.patch.dict(os.environ, env or {}), contextlib.chdir(cwd or ROOT), \
                mock.patch("gc.freeze"), mock.patch.object(sys.modules["__main__"], "__package__", None):
            return run_cli(*args)
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)


def cli_json_here(*args: str, **kwargs) -> object:
    code, out, err = cli_here(*args, **kwargs)
    assert code == 0, err[-3000:]
    return json.loads(out)


@pytest.fixture(scope="session")
def quickstart_build(tmp_path_factory) -> tuple[Path, dict]:
    """configs/quickstart.yaml built once on the simulator: (warehouse, summary). Tests read it,
    or copy it to build on; those using it share the xdist group "enpmr_build", so one worker
    builds it for all of them."""
    warehouse = tmp_path_factory.mktemp("quickstart") / "wh"
    summary = cli_json_here("build", str(ROOT / "configs/quickstart.yaml"), "--llm", "simulator",
                            "--warehouse", str(warehouse), "--format", "json")
    return warehouse, summary


def write_config(path: Path, **overrides) -> Path:
    """A small enpmr config; nested dicts in overrides replace whole sections."""
    import yaml

    base = {
        "dataset": "t",
        "recipe": "enpmr",
        "seed": 3,
        "reference_date": "2024-12-02",
        "personas": {"count": 2},
        "shard_size": 1,
        # A served simulator answers from the stage variables: send them.
        "llm": {"model": "test-model", "stage_variables": True, "concurrency": 8, "retry_base_s": 0.01},
    }
    base.update(overrides)
    path.write_text(yaml.safe_dump(base), encoding="utf-8")
    return path
