"""Prefect's API server for builds without one: started by memsynth, tied to its life.

Left to itself, Prefect starts a temporary server in a subprocess and stops it at exit;
a `kill -9` (or any death that skips exit handlers) leaves it running (~190 MB each).
memsynth starts the same server itself, asking Linux to kill it when memsynth dies, in
whatever way. With `PREFECT_API_URL` set, the user's own server is used instead.

Its database is a scratch copy of a migrated, empty one kept per Prefect version under
`$XDG_CACHE_HOME/memsynth/prefect` (made by the first server that finds none).
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.metadata
import importlib.util
import os
import shutil
import socket
import sqlite3
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx2 as httpx

from memsynth.build.children import tied
from memsynth.core.errors import MemsynthError
from memsynth.core.processes import alive

_lock = threading.Lock()
SCRATCH_PREFIX = "memsynth-prefect-"  # then the building process's pid: memsynth-prefect-<pid>-<random>
_server: _Server | None = None


class _Server:
    def __init__(self, env: dict[str, str]) -> None:
        # Found without importing prefect (about 2 s), so the server can start while the
        # build imports it.
        spec = importlib.util.find_spec("prefect")
        if spec is None or not spec.submodule_search_locations:
            raise MemsynthError("prefect is not installed")
        app_dir = Path(next(iter(spec.submodule_search_locations))).parent
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/api"
        env = {**env, "PREFECT_UI_ENABLED": "0", "PREFECT__SERVER_EPHEMERAL": "1", "PREFECT__SERVER_FINAL": "1"}
        env.pop("PREFECT_API_URL", None)
        # Its database lives and dies with it: a build leaves nothing in ~/.prefect (Prefect's
        # default, which grew with every build). A database the user configured is kept.
        self.scratch: str | None = None
        self.template: Path | None = None  # where to keep the new database's first state, once served
        self.from_template = False
        if not any(k in env for k in ("PREFECT_SERVER_DATABASE_CONNECTION_URL", "PREFECT_API_DATABASE_CONNECTION_URL")):
            sweep_scratch()
            self.scratch = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-")
            env["PREFECT_SERVER_DATABASE_CONNECTION_URL"] = f"sqlite+aiosqlite:///{self.scratch}/prefect.db"
            # Its note of which block types it registered would go in the user's
            # ~/.prefect, keyed by a database path no other build uses.
            env["PREFECT_SERVER_MEMOIZE_BLOCK_AUTO_REGISTRATION"] = "false"
            # Made anew, the database takes two seconds of CPU to migrate, on every build and
            # while the build's first requests go: copied from the first one made, none.
            template = empty_database(env)
            if template is not None and _usable(template) and _copied(template, Path(self.scratch) / "prefect.db"):
                env["PREFECT_SERVER_DATABASE_MIGRATE_ON_START"] = "false"
                # The template was kept once served, so its block types are registered
                # (registering them again took ~0.9 s of the server's start).
                env["PREFECT_SERVER_REGISTER_BLOCKS_ON_START"] = "false"
                self.from_template = True
            else:
                self.template = template
        # Started from the main thread where possible: the death signal follows the thread
        # that started the child.
        self.process = subprocess.Popen(
            tied(["-m", "uvicorn", "--app-dir", str(app_dir), "--factory",
                  "prefect.server.api.server:create_app", "--host", "127.0.0.1", "--port", str(self.port),
                  "--log-level", "error", "--lifespan", "on"]),
            # In a session of its own: a signal to memsynth's process group (Ctrl-C, `timeout`,
            # systemd, docker) reaches memsynth alone, which stops its flow against a live
            # server and then ends this one (a dead server held the flow's end for minutes).
            env=env, stdin=subprocess.DEVNULL, start_new_session=True)
        atexit.register(self.stop)
        self.healthy = False

    def wait_healthy(self, timeout_s: float = 60, stopped: Callable[[], bool] = lambda: False) -> None:
        if self.healthy:
            return
        try:
            self.healthy = wait_healthy(self.url, self.process, timeout_s, stopped)
        except MemsynthError:
            self.stop()
            raise
        if self.healthy and self.template is not None and self.scratch is not None:
            _keep(Path(self.scratch) / "prefect.db", self.template)
            self.template = None

    def stop(self) -> None:
        if self.process.poll() is None and self.scratch:
            self.process.kill()  # its database is deleted next: nothing to shut down cleanly
            self.process.wait()
        elif self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


def sweep_scratch() -> list[Path]:
    """Remove the database folders of servers whose build is gone (killed: no exit handler ran)."""
    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        pid = folder.name.removeprefix(SCRATCH_PREFIX).split("-")[0]
        if pid.isdigit() and not alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def empty_database(env: dict[str, str]) -> Path | None:
    """Where a migrated, empty database of this Prefect version is kept (None: no Prefect)."""
    try:
        version = importlib.metadata.version("prefect")
    except importlib.metadata.PackageNotFoundError:
        return None
    cache = Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "memsynth" / "prefect" / f"empty-{version}.db"


def _usable(template: Path) -> bool:
    """A whole database at its migrations' head (else it is made anew, and kept again)."""
    if not template.is_file():
        return False
    try:
        with contextlib.closing(sqlite3.connect(f"file:{template}?mode=ro", uri=True)) as db:
            return db.execute("SELECT count(*) FROM alembic_version").fetchone()[0] == 1
    except sqlite3.Error:
        return False


def _copied(template: Path, database: Path) -> bool:
    """Copy the template to `database` (False, and no file left there, if it cannot be)."""
    try:
        shutil.copyfile(template, database)
        return True
    except OSError:
        database.unlink(missing_ok=True)  # a part-copy: the server makes its database anew
        return False


def _keep(database: Path, template: Path) -> None:
    """Copy a served (migrated) database as the template, whole or not at all."""
    try:
        template.parent.mkdir(parents=True, exist_ok=True)
        partial = template.with_name(f".{template.name}.{os.getpid()}")
        # SQLite's backup: a consistent copy while the server has it open.
        with contextlib.closing(sqlite3.connect(database)) as src, contextlib.closing(sqlite3.connect(partial)) as dst:
            src.backup(dst)
            dst.execute("PRAGMA journal_mode=DELETE")  # one file: no -wal or -shm beside it
        os.replace(partial, template)
    except (OSError, sqlite3.Error):
        pass  # the next build makes its database anew and tries again


def wait_healthy(url: str, process: subprocess.Popen, timeout_s: float = 60,
                 stopped: Callable[[], bool] = lambda: False) -> bool:
    """Wait until the Prefect API at `url` (served by `process`) answers its health check
    (True), or until `stopped()` (False: the build was stopped meanwhile)."""
    deadline = time.monotonic() + timeout_s
    with httpx.Client() as client:
        while time.monotonic() < deadline:
            if stopped():
                return False
            if process.poll() is not None:
                raise MemsynthError(f"Prefect's API server exited at start (code {process.returncode})")
            try:
                if client.get(f"{url}/health", timeout=2).status_code == 200:
                    return True
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
    raise MemsynthError(f"Prefect's API server did not start within {timeout_s:.0f} s")


def start_early() -> None:
    """Launch memsynth's own server now and do not wait for it: `memsynth build` calls this
    before importing the build, so the server's start-up (seconds) overlaps the import."""
    global _server
    if os.environ.get("PREFECT_API_URL"):
        return
    with _lock:
        if _server is None or _server.process.poll() is not None:
            # The process's environment is all the settings there are this early; the
            # server reads the same profiles and files from it as the build will.
            _server = _Server(dict(os.environ))


def prefect_api_url(stopped: Callable[[], bool] = lambda: False) -> str | None:
    """The API URL builds use: the user's `PREFECT_API_URL`, else memsynth's own server
    (started on first use, shared by the process's builds), once it answers or `stopped()`."""
    global _server
    if os.environ.get("PREFECT_API_URL"):
        return None
    with _lock:
        if _server is None or _server.process.poll() is not None:
            from prefect.settings import get_current_settings

            # Settings changed in this process (a profile, temporary_settings) go along too.
            _server = _Server({**os.environ, **get_current_settings().to_environment_variables(exclude_unset=True)})
        _server.wait_healthy(stopped=stopped)
        return _server.url


def stop_own_server() -> None:
    """Stop memsynth's own server now, if it started one (a process ending at once)."""
    if _server is not None:
        _server.stop()


def server_pid() -> int | None:
    """The pid of memsynth's own Prefect server, if it started one (for tests)."""
    return _server.process.pid if _server is not None else None
