"""A test run leaves nothing in the system's temp folder.

Imported first by tests/conftest.py (or loaded with `-p tests.tmp_guard`): the run's
controller makes a private temp folder and points TMPDIR at it, so every process of the
run (xdist workers, built CLIs, Prefect servers, the simulator, PostgreSQL clusters) makes
its scratch there. At the end, with every worker gone, the controller lists what is left in
it besides pytest's own `tmp_path` base, fails the run naming each, then removes the folder.
Other runs on the same machine keep their own folders, so nothing they make is counted.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from memsynth.core.processes import alive

PREFIX = "memsynth-suite-"  # then the controller's pid: a killed run's folder is swept by the next
_folder: Path | None = None
_own: list[Path] = []  # this process's scratch, removed before the check (see scratch())


def _start() -> None:
    global _folder
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a worker makes its scratch in the folder its controller handed it
    real = Path(tempfile.gettempdir())
    for left in real.glob(f"{PREFIX}*"):  # runs killed before their end (no hook ran)
        pid = left.name.removeprefix(PREFIX).split("-")[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
    _folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=real))
    # The PostgreSQL cluster runs as `postgres` when the tests run as root: it must pass
    # through to its own folder, though it may not list this one.
    _folder.chmod(0o711)
    os.environ["TMPDIR"] = str(_folder)
    tempfile.tempdir = str(_folder)


_start()


def scratch(prefix: str) -> str:
    """A folder for this process's life, removed at its session's end (an xdist worker's before
    it exits, whatever its exit handlers do)."""
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    _own.append(path)
    return str(path)


def _remove_own() -> None:
    while _own:
        shutil.rmtree(_own.pop(), ignore_errors=True)


def left_over(folder: Path) -> list[str]:
    """What a run left in its temp folder, pytest's own `tmp_path` base aside."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("pytest-of-"))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # A worker's go before it reports its end to the controller (the controller then stops it);
    # trylast: the controller checks after xdist's own hook, which waits for every worker to exit.
    _remove_own()
    if _folder is None:
        return
    left = left_over(_folder)
    if left:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        lines = [f"the run left {len(left)} entries in its temp folder (every test removes what it makes, "
                 "and kills no process without removing its scratch):", *(f"  {name}" for name in left)]
        if reporter is not None:
            reporter.write_sep("=", "temp folder not clean", red=True)
            for line in lines:
                reporter.write_line(line)
        else:
            print("\n".join(lines))
        if session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
    shutil.rmtree(_folder, ignore_errors=True)
