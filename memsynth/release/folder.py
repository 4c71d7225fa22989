"""Reading a release folder without ever leaving it.

A path named by a release (its manifest, SHA256SUMS, card or a seed format's files) is
checked as text, then opened one component at a time from the folder's own descriptor with
O_NOFOLLOW: a symbolic link, to a file or a folder, made before or swapped in during the
read, is never followed, and only regular files are read (a FIFO would block for ever).
Listings are made the same way, one folder descriptor at a time.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from memsynth.core.inputs import loads_json

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Refused(Exception):
    """A path the release may not be read at: outside it, through a link, not a regular file."""


def outside(rel: object) -> str:
    """Why a path named by a release could reach outside it, or '' if it is a plain relative path."""
    if not isinstance(rel, str):
        return f"the path {rel!r} is not text"
    parts = rel.split("/")
    if not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel or ":" in parts[0] \
            or any(p in ("", ".", "..") for p in parts):
        return f"the path {rel!r} is not a plain path inside the release"
    return ""


@dataclass
class Listing:
    """What a release folder holds, relative to it, links never followed."""

    files: set[str] = field(default_factory=set)  # regular files
    links: list[str] = field(default_factory=list)  # symbolic links, to files or folders
    special: list[str] = field(default_factory=list)  # FIFOs, sockets, devices


class ReleaseFolder:
    """A release folder (or a folder inside one, `prefix`) whose files are read only inside it."""

    def __init__(self, root: Path | str, prefix: str = "") -> None:
        self.root = Path(os.path.realpath(root))  # the folder named: a link to it is the user's own
        self.prefix = prefix
        self._listing: Listing | None = None

    @classmethod
    def of(cls, folder: ReleaseFolder | Path | str) -> ReleaseFolder:
        return folder if isinstance(folder, ReleaseFolder) else cls(folder)

    def child(self, rel: str) -> ReleaseFolder:
        """The folder `rel` inside this one, read under the same rules."""
        if why := outside(rel):
            raise Refused(why)
        sub = ReleaseFolder(self.root, self._full(rel))
        sub._listing = self._listing
        return sub

    def _full(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def listing(self) -> Listing:
        """Everything under the release's root (not only the prefix), computed once."""
        if self._listing is None:
            found = Listing()
            root = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            folders = [("", root)]
            while folders:
                base, fd = folders.pop()
                try:
                    for entry in sorted(os.scandir(fd), key=lambda e: e.name):
                        rel = f"{base}{entry.name}"
                        if entry.is_symlink():
                            found.links.append(rel)
                        elif entry.is_file(follow_symlinks=False):
                            found.files.add(rel)
                        elif entry.is_dir(follow_symlinks=False):
                            # Opened by name from its parent, never through a link (O_NOFOLLOW):
                            # os.fwalk opens a linked folder before it decides not to walk it.
                            with contextlib.suppress(OSError):  # gone, or swapped for a link meanwhile
                                inner = os.open(entry.name, _DIR, dir_fd=fd)
                                folders.append((f"{rel}/", inner))
                        else:
                            found.special.append(rel)
                finally:
                    os.close(fd)
            found.links.sort()
            found.special.sort()
            self._listing = found
        return self._listing

    def files(self) -> set[str]:
        """The regular files under this folder, relative to it."""
        if not self.prefix:
            return set(self.listing().files)
        start = self.prefix + "/"
        return {f[len(start):] for f in self.listing().files if f.startswith(start)}

    def glob(self, pattern: str) -> list[str]:
        """The regular files matching `pattern` component by component (`*` stays within one),
        found in the listing: a pattern opens nothing."""
        parts = pattern.split("/")
        return sorted(f for f in self.files() if len(f.split("/")) == len(parts)
                      and all(fnmatch.fnmatchcase(a, b) for a, b in zip(f.split("/"), parts)))

    def open(self, rel: str) -> BinaryIO:
        """The regular file `rel`, opened for reading; FileNotFoundError if there is none,
        Refused if it is outside, behind a link, or not a regular file."""
        if why := outside(rel):
            raise Refused(why)
        parts = self._full(rel).split("/")
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            for part in parts[:-1]:
                inner = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = inner
            last = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENXIO):
                raise Refused("a symbolic link or a file on the way, or not a regular file") from None
            raise
        finally:
            os.close(fd)
        if not stat.S_ISREG(os.fstat(last).st_mode):
            os.close(last)
            raise Refused("not a regular file")
        return os.fdopen(last, "rb")

    def read_bytes(self, rel: str) -> bytes:
        with self.open(rel) as fh:
            return fh.read()

    def read_json(self, rel: str) -> object:
        """`rel` as JSON; ConfigError '<rel>: …' if it is not (or nests too deep)."""
        return loads_json(self.read_bytes(rel), rel)

    def is_file(self, rel: str) -> bool:
        try:
            self.open(rel).close()
        except (OSError, Refused):
            return False
        return True

    @staticmethod
    def stem(rel: str) -> str:
        return PurePosixPath(rel).stem
