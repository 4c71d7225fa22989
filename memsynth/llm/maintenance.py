"""Keeping the response cache tidy: `memsynth cache compact` and `memsynth cache gc`.

Both rewrite the logs into one, under an exclusive lock on the cache folder (a build holds
a shared one, so neither runs beside a build), in an order that survives a crash at any
step: the new log is fsynced and renamed into place before the old ones are removed, and
the index is rebuilt from the logs last (it is derived from them).
"""

from __future__ import annotations

import json
import os
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memsynth.core.errors import MemsynthError
from memsynth.llm.cache import INDEX_NAME, LOCK_NAME, CacheIndex, catch_up, packed


@contextmanager
def exclusive(directory: Path) -> Iterator[None]:
    """Hold the cache folder alone, or say in one line that a build is using it."""
    import fcntl

    if not directory.is_dir():
        raise MemsynthError(f"no response cache in {directory}")
    fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise MemsynthError(f"the response cache in {directory} is in use (a build or eval is running); "
                                "try again when it ends") from None
        yield
    finally:
        os.close(fd)


def _sizes(directory: Path) -> tuple[int, int]:
    logs = list(directory.glob("*.jsonl"))
    return len(logs), sum(p.stat().st_size for p in logs)


def rewrite(directory: Path, keep: Callable[[bytes], bool] | None = None, *,
            advance: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Rewrite every log into one: each key's first whole, readable entry, and only the keys
    `keep` accepts (all, when None); then rebuild the index. Figures before and after.
    `advance(n)` is told of each n bytes read (for a progress bar)."""
    with exclusive(directory):
        logs = sorted(directory.glob("*.jsonl"))
        files_before, bytes_before = _sizes(directory)
        index = CacheIndex(directory)
        try:
            catch_up(index, directory)
            entries_before = index.count()
            name = f"calls-compacted-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.jsonl"
            partial = directory / f".{name}.tmp"
            kept = dropped = 0
            with open(partial, "wb") as out:
                for log in logs:
                    with open(log, "rb") as fh:
                        offset = 0
                        for line in fh:
                            here, offset = offset, offset + len(line)
                            if advance:
                                advance(len(line))
                            key = _entry_key(line)
                            if key is None or index.find(key) != (log.name, here, len(line)):
                                continue  # torn, damaged, or a later copy of a key
                            if keep is not None and not keep(packed(key)):
                                dropped += 1
                                continue
                            out.write(line)
                            kept += 1
                out.flush()
                os.fsync(out.fileno())
        finally:
            index.close()
        if kept:
            os.replace(partial, directory / name)
        else:
            partial.unlink()
        _fsync_dir(directory)
        for log in logs:
            log.unlink()
        for suffix in ("", "-wal", "-shm"):
            (directory / f"{INDEX_NAME}{suffix}").unlink(missing_ok=True)
        index = CacheIndex(directory)
        try:
            catch_up(index, directory)
            entries_after = index.count()
        finally:
            index.close()
    files_after, bytes_after = _sizes(directory)
    return {"directory": str(directory), "entries_before": entries_before, "entries_after": entries_after,
            "dropped": dropped, "files_before": files_before, "files_after": files_after,
            "bytes_before": bytes_before, "bytes_after": bytes_after}


def _entry_key(line: bytes) -> str | None:
    """The key of a complete line that parses; None for a torn or damaged one."""
    if not line.endswith(b"\n"):
        return None
    try:
        key = json.loads(line)["key"]
    except (ValueError, KeyError, TypeError):
        return None
    return key if isinstance(key, str) else None


def _fsync_dir(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def compact(directory: Path, **kwargs: Any) -> dict[str, Any]:
    """One log holding each key once; damaged and duplicate lines gone."""
    return rewrite(directory, **kwargs)


def used_keys(warehouse: Path, keep_versions: int) -> set[bytes]:
    """The cache keys the newest `keep_versions` versions of every dataset in the warehouse
    called (their `llm_calls`, cache hits included)."""
    from memsynth.warehouse.catalog import list_datasets, list_versions, open_version

    keys: set[bytes] = set()
    for dataset in list_datasets(warehouse):
        for version in list_versions(warehouse, dataset["dataset"])[-keep_versions:]:
            con, _ = open_version(warehouse, dataset["dataset"], version["version"])
            try:
                cur = con.execute("SELECT DISTINCT cache_key FROM lake.llm_calls WHERE cache_key IS NOT NULL")
                while batch := cur.fetchmany(100_000):
                    keys.update(packed(k) for (k,) in batch)
            finally:
                con.close()
    return keys


def gc(directory: Path, warehouse: Path, keep_versions: int, **kwargs: Any) -> dict[str, Any]:
    """Drop every entry no kept version used, then compact."""
    if keep_versions < 1:
        raise MemsynthError("--keep-versions: keep at least 1 version of each dataset")
    keys = used_keys(warehouse, keep_versions)
    return {**rewrite(directory, keep=keys.__contains__, **kwargs), "kept_versions": keep_versions,
            "keys_in_use": len(keys)}
