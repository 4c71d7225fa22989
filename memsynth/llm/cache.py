"""Content-addressed response cache: an append-only, fsynced JSONL log per process.

A response is durable on disk before the caller sees it, so a crashed build never
pays for the same call twice. Writers batch their fsyncs (group commit) so the
cache does not cap throughput. Each process appends to its own file, so a torn
last line after `kill -9` only ever affects that file's tail, which readers skip.
DuckDB reads the log directly: `read_json('<cache_dir>/*.jsonl')`.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsynth.errors import BuildFailed

# The cache's folder under the warehouse root, unless a config names another.
CACHE_DIR_NAME = "_cache"


@dataclass(frozen=True)
class _Location:
    path: Path
    offset: int
    length: int


class ResponseCache:
    """Maps a request's cache key to its recorded response."""

    def __init__(self, directory: Path | str, *, read: bool = True, write: bool = True):
        self.directory = Path(directory)
        self.read_enabled = read
        self.write_enabled = write
        self._index: dict[str, _Location] = {}
        self._readers: dict[Path, int] = {}
        self._log_path: Path | None = None
        self._log_fd: int | None = None
        self._log_size = 0
        self._pending: list[tuple[str, bytes, asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None
        self.hits = 0
        self.writes = 0
        self._broken: BuildFailed | None = None  # the write error that stopped the cache
        if write:
            # Found out now, before any call is paid for, rather than at the first answer.
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                probe = tempfile.NamedTemporaryFile(dir=self.directory, prefix=".write-test-")
                probe.close()
            except OSError as exc:
                raise BuildFailed(f"cannot write the response cache in {self.directory}: "
                                  f"{exc.strerror or exc}") from exc
        if read:
            self._load_index()

    # -- reading ---------------------------------------------------------------------

    def log_files(self) -> list[Path]:
        return sorted(self.directory.glob("*.jsonl")) if self.directory.exists() else []

    def _load_index(self) -> None:
        for path in self.log_files():
            offset = 0
            with open(path, "rb") as fh:
                for line in fh:
                    length = len(line)
                    if line.endswith(b"\n"):
                        key = _key_of(line)
                        if key is not None:
                            self._index[key] = _Location(path, offset, length)
                    offset += length

    def __len__(self) -> int:
        return len(self._index)

    def __contains__(self, key: str) -> bool:
        return key in self._index

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response record for `key`, or None."""
        if not self.read_enabled:
            return None
        loc = self._index.get(key)
        if loc is None:
            return None
        fd = self._readers.get(loc.path)
        if fd is None:
            fd = self._readers[loc.path] = os.open(loc.path, os.O_RDONLY)
        try:
            entry = json.loads(os.pread(fd, loc.length, loc.offset))
        except ValueError:  # damaged on disk (e.g. power loss): treat as a miss
            return None
        self.hits += 1
        return entry["response"]

    # -- writing ---------------------------------------------------------------------

    def check_writable(self) -> None:
        """Raise the write error that stopped the cache, if one did: no call is sent for an
        answer that could not be kept."""
        if self._broken is not None:
            raise self._broken

    async def put(self, key: str, response: dict[str, Any], meta: dict[str, Any]) -> None:
        """Append a response and return once it is fsynced."""
        if not self.write_enabled:
            return
        self.check_writable()
        entry = {"key": key, "created_at": time.time(), **meta, "response": response}
        line = (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((key, line, future))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_pending())
        await future

    async def _flush_pending(self) -> None:
        while self._pending:
            batch, self._pending = self._pending, []
            try:
                offsets = await asyncio.to_thread(self._write_batch, [b for _, b, _ in batch])
            except OSError as exc:
                # A full disk or a folder gone read-only: every waiting call hears of it at
                # once, and so does every later one; the build stops with this one line.
                self._broken = BuildFailed(
                    f"cannot write the response cache in {self.directory}: {exc.strerror or exc} "
                    "(answers written before this are kept; free space and re-run)")
                for _, _, fut in batch + self._pending:
                    if not fut.done():
                        fut.set_exception(self._broken)
                self._pending = []
                return
            assert self._log_path is not None
            for (key, line, fut), offset in zip(batch, offsets):
                self._index[key] = _Location(self._log_path, offset, len(line))
                self.writes += 1
                if not fut.done():
                    fut.set_result(None)

    def _write_batch(self, lines: list[bytes]) -> list[int]:
        if self._log_fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"calls-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.jsonl"
            self._log_path = self.directory / name
            self._log_fd = os.open(self._log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._log_size = 0
        offsets = []
        for line in lines:
            offsets.append(self._log_size)
            self._log_size += len(line)
        os.write(self._log_fd, b"".join(lines))
        os.fsync(self._log_fd)
        return offsets

    async def drain(self) -> None:
        """Wait for every pending write to be durable."""
        while self._flusher is not None and not self._flusher.done():
            await self._flusher

    def close(self) -> None:
        for fd in self._readers.values():
            os.close(fd)
        self._readers.clear()
        if self._log_fd is not None:
            os.close(self._log_fd)
            self._log_fd = None


def _key_of(line: bytes) -> str | None:
    # The key is the first field written; avoid parsing whole responses at start-up.
    if not line.startswith(b'{"key":"'):
        return None
    end = line.find(b'"', 8)
    return line[8:end].decode() if end > 0 else None


def cache_stats(directory: Path | str) -> dict[str, Any]:
    """Entries, files, bytes and per-stage/model counts of a cache folder, via DuckDB."""
    import duckdb

    directory = Path(directory)
    files = sorted(directory.glob("*.jsonl")) if directory.exists() else []
    stats: dict[str, Any] = {
        "directory": str(directory),
        "files": len(files),
        "bytes": sum(f.stat().st_size for f in files),
        "entries": 0,
        "by_stage": {},
    }
    if not files:
        return stats
    con = duckdb.connect()
    glob = str(directory / "*.jsonl")
    rows = con.execute(
        "SELECT coalesce(stage, '?') AS stage, coalesce(model, '?') AS model, count(*) AS n, "
        "count(DISTINCT key) AS keys, sum(response.prompt_tokens) AS pt, "
        "sum(response.completion_tokens) AS ct "
        "FROM read_json(?, format='newline_delimited', ignore_errors=true, "
        "columns={key:'VARCHAR', stage:'VARCHAR', model:'VARCHAR', "
        "response:'STRUCT(prompt_tokens BIGINT, completion_tokens BIGINT)'}) "
        "WHERE key IS NOT NULL GROUP BY ALL ORDER BY stage, model",
        [glob],
    ).fetchall()
    for stage, model, n, keys, pt, ct in rows:
        stats["by_stage"][f"{stage} [{model}]"] = {
            "entries": n, "distinct_keys": keys,
            "prompt_tokens": int(pt or 0), "completion_tokens": int(ct or 0),
        }
        stats["entries"] += keys
    return stats
