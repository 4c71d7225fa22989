"""A throwaway PostgreSQL cluster for the catalog tests: Debian's binaries, started with
pg_ctl on a loopback port, run as the `postgres` user when the tests run as root (initdb
and postgres refuse root). pytest-postgresql starts its cluster the same way but as the
current user only, so it cannot be used under root, where CI runs."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


def binaries() -> Path | None:
    """The folder with initdb, pg_ctl and createdb (None: no PostgreSQL on this machine)."""
    found = shutil.which("initdb")
    if found:
        return Path(os.path.realpath(found)).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


class PostgresServer:
    def __init__(self, bin_dir: Path):
        self.bin = bin_dir
        # Not under pytest's tmp folders: those are the current user's alone (0700).
        self.base = Path(tempfile.mkdtemp(prefix="memsynth-pg-"))
        self.data = self.base / "data"
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self._as = []
        if os.geteuid() == 0:
            shutil.chown(self.base, "postgres", "postgres")
            self._as = ["runuser", "-u", "postgres", "--"]
        self._databases = 0

    def _run(self, *command: str) -> None:
        subprocess.run([*self._as, *command], check=True, capture_output=True, text=True, cwd=self.base)

    def start(self) -> PostgresServer:
        self._run(str(self.bin / "initdb"), "-D", str(self.data), "-A", "trust", "-U", "postgres",
                  "--no-sync", "-E", "UTF8")
        options = (f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options,
                  "-l", str(self.base / "log"), "-w", "-t", "60", "start")
        return self

    def stop(self) -> None:
        subprocess.run([*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True, cwd=self.base)
        shutil.rmtree(self.base, ignore_errors=True)

    def database(self, name: str | None = None) -> str:
        """A new, empty database; its postgres:// URL (no password: the cluster trusts loopback)."""
        self._databases += 1
        name = name or f"lake{self._databases}"
        self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres", name)
        return f"postgres://postgres@127.0.0.1:{self.port}/{name}"
