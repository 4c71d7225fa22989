"""One build of a dataset at a time: a lock file beside its catalog."""

from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path
from types import TracebackType

from memsynth.core.errors import BuildFailed

LOCK_FILE = ".build.lock"


class BuildLock:
    """Held while a build of the dataset runs; a second build fails at once with one line.

    A scheduled build and one started by hand must not both write the catalog: the second
    would publish over the first's version without having seen it. The lock is the
    kernel's (flock), so a killed build never leaves it held.
    """

    def __init__(self, directory: Path, dataset: str):
        self.path = Path(directory) / LOCK_FILE
        self.dataset = dataset
        self._fd: int | None = None

    def __enter__(self) -> BuildLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
            os.close(fd)
            raise BuildFailed(f"dataset {self.dataset} is being built by {holder}; run this build "
                              "again when that one has published (one build of a dataset at a time)"
                              ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}".encode(), 0)
        self._fd = fd
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None
