"""Content-addressed response cache: append-only, fsynced JSONL logs, and an index.

A response is durable on disk before the caller sees it, so a crashed build never
pays for the same call twice. Writers batch their fsyncs (group commit) so the
cache does not cap throughput. Each process appends to its own file, so a torn
last line after `kill -9` only ever affects that file's tail, which readers skip.
DuckDB reads the logs directly: `read_json('<cache_dir>/*.jsonl')`.

The logs are the truth; `index.sqlite` beside them (key → log, offset, length) is derived
from them, so a cache of ten million entries opens without reading them and answers a
look-up from the index's B-tree and one read of the log. The index records how far into
each log it has got: a write is fsynced to its log first and indexed after, so an index
left behind by `kill -9` catches up from the logs' tails when the cache next opens.
`memsynth cache compact` and `gc` rewrite the logs (see `maintenance`).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memsynth.core import duck
from memsynth.core.errors import BuildFailed

# The cache's folder under the warehouse root, unless a config names another.
CACHE_DIR_NAME = "_cache"
INDEX_NAME = "index.sqlite"
LOCK_NAME = ".lock"
_HEX_KEY = re.compile(r"^(v\d+-(?:[a-z]+-)?)([0-9a-f]{64})$")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS logs (log_id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
                                 indexed_to INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS entries (key BLOB PRIMARY KEY, log_id INTEGER NOT NULL,
                                    offset INTEGER NOT NULL, length INTEGER NOT NULL) WITHOUT ROWID;
"""


def packed(key: str) -> bytes:
    """A key as the index stores it: `v2-<sha256 hex>` keys in 35 bytes rather than 67."""
    match = _HEX_KEY.match(key)
    return match.group(1).encode() + bytes.fromhex(match.group(2)) if match else key.encode()


class CacheIndex:
    """key → (log, offset, length) in `index.sqlite`: shared by processes (WAL), safe to use
    from the event loop and the writer thread (one connection, one lock)."""

    def __init__(self, directory: Path):
        self.path = directory / INDEX_NAME
        self._lock = threading.Lock()
        self._con = sqlite3.connect(self.path, timeout=60, check_same_thread=False, isolation_level=None)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.execute("PRAGMA synchronous=NORMAL")  # the logs, not the index, are fsynced
        self._con.executescript(_SCHEMA)
        self._logs: dict[str, int] = {}
        self._names: dict[int, str] = {}

    def log_id(self, name: str) -> int:
        """The id of a log file (registered on first use)."""
        if name not in self._logs:
            with self._lock:
                self._con.execute("INSERT OR IGNORE INTO logs (name, indexed_to) VALUES (?, 0)", (name,))
                (self._logs[name],) = self._con.execute("SELECT log_id FROM logs WHERE name = ?", (name,)).fetchone()
            self._names[self._logs[name]] = name
        return self._logs[name]

    def indexed_to(self) -> dict[str, int]:
        with self._lock:
            return dict(self._con.execute("SELECT name, indexed_to FROM logs").fetchall())

    def add(self, name: str, entries: list[tuple[str, int, int]], indexed_to: int) -> None:
        """Index (key, offset, length) entries of log `name`, which is now read up to `indexed_to`.
        The first entry of a key is kept: an answer once given stays the answer."""
        log_id = self.log_id(name)
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            try:
                self._con.executemany("INSERT OR IGNORE INTO entries VALUES (?, ?, ?, ?)",
                                      [(packed(k), log_id, o, n) for k, o, n in entries])
                self._con.execute("UPDATE logs SET indexed_to = max(indexed_to, ?) WHERE log_id = ?",
                                  (indexed_to, log_id))
                self._con.execute("COMMIT")
            except BaseException:
                if self._con.in_transaction:  # SQLite already rolled back on a full disk
                    self._con.execute("ROLLBACK")
                raise

    def forget(self, names: list[str]) -> None:
        """Drop the entries of logs that are gone from the folder."""
        with self._lock:
            self._con.execute("BEGIN IMMEDIATE")
            for name in names:
                row = self._con.execute("SELECT log_id FROM logs WHERE name = ?", (name,)).fetchone()
                if row:
                    self._con.execute("DELETE FROM entries WHERE log_id = ?", row)
                    self._con.execute("DELETE FROM logs WHERE log_id = ?", row)
            self._con.execute("COMMIT")

    def find(self, key: str) -> tuple[str, int, int] | None:
        """(log name, offset, length) of `key`, or None."""
        with self._lock:
            row = self._con.execute("SELECT log_id, offset, length FROM entries WHERE key = ?",
                                    (packed(key),)).fetchone()
            if row is None:
                return None
            name = self._names.get(row[0])
            if name is None:
                (name,) = self._con.execute("SELECT name FROM logs WHERE log_id = ?", (row[0],)).fetchone()
                self._names[row[0]] = name
        return name, row[1], row[2]

    def count(self) -> int:
        with self._lock:
            return self._con.execute("SELECT count(*) FROM entries").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._con.close()


def scan(path: Path, start: int = 0) -> Iterator[tuple[str, int, int]]:
    """(key, offset, length) of each complete line of a log from `start` (a torn or damaged
    line is skipped; only whole lines end in a newline)."""
    with open(path, "rb") as fh:
        fh.seek(start)
        offset = start
        for line in fh:
            length = len(line)
            if line.endswith(b"\n"):
                key = _key_of(line)
                if key is not None:
                    yield key, offset, length
            offset += length


def complete_length(path: Path) -> int:
    """Bytes of `path` up to the end of its last complete line."""
    size = path.stat().st_size
    if size == 0:
        return 0
    with open(path, "rb") as fh:
        step = 1 << 16
        end = size
        while end > 0:
            begin = max(0, end - step)
            fh.seek(begin)
            chunk = fh.read(end - begin)
            cut = chunk.rfind(b"\n")
            if cut >= 0:
                return begin + cut + 1
            end = begin
    return 0


class ResponseCache:
    """Maps a request's cache key to its recorded response."""

    def __init__(self, directory: Path | str, *, read: bool = True, write: bool = True):
        self.directory = Path(directory)
        self.read_enabled = read
        self.write_enabled = write
        self._index: CacheIndex | None = None
        self._readers: dict[str, int] = {}
        self._log_path: Path | None = None
        self._log_fd: int | None = None
        self._log_size = 0
        self._lock_fd: int | None = None
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
        if self.directory.is_dir():
            self._lock_fd = hold_shared(self.directory)
            self._index = CacheIndex(self.directory)
            catch_up(self._index, self.directory)

    # -- reading ---------------------------------------------------------------------

    def log_files(self) -> list[Path]:
        return sorted(self.directory.glob("*.jsonl")) if self.directory.exists() else []

    def __len__(self) -> int:
        return self._index.count() if self._index else 0

    def __contains__(self, key: str) -> bool:
        return self._index is not None and self._index.find(key) is not None

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored response record for `key`, or None."""
        if not self.read_enabled or self._index is None:
            return None
        found = self._index.find(key)
        if found is None:
            return None
        name, offset, length = found
        try:
            fd = self._readers.get(name)
            if fd is None:
                fd = self._readers[name] = os.open(self.directory / name, os.O_RDONLY)
            entry = json.loads(os.pread(fd, length, offset))
        except (OSError, ValueError):  # removed, or damaged on disk (e.g. power loss): a miss
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
                await asyncio.to_thread(self._write_batch, [(k, b) for k, b, _ in batch])
            except (OSError, sqlite3.Error) as exc:
                # A full disk or a folder gone read-only: every waiting call hears of it at
                # once, and so does every later one; the build stops with this one line.
                self._broken = BuildFailed(
                    f"cannot write the response cache in {self.directory}: "
                    f"{getattr(exc, 'strerror', None) or exc} "
                    "(answers written before this are kept; free space and re-run)")
                for _, _, fut in batch + self._pending:
                    if not fut.done():
                        fut.set_exception(self._broken)
                self._pending = []
                return
            for _, _, fut in batch:
                self.writes += 1
                if not fut.done():
                    fut.set_result(None)

    def _write_batch(self, lines: list[tuple[str, bytes]]) -> None:
        if self._log_fd is None:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"calls-{socket.gethostname()}-{os.getpid()}-{time.time_ns()}.jsonl"
            self._log_path = self.directory / name
            self._log_fd = os.open(self._log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            self._log_size = 0
        if self._index is None:
            self._lock_fd = hold_shared(self.directory)
            self._index = CacheIndex(self.directory)
        entries = []
        for key, line in lines:
            entries.append((key, self._log_size, len(line)))
            self._log_size += len(line)
        os.write(self._log_fd, b"".join(b for _, b in lines))
        os.fsync(self._log_fd)
        assert self._log_path is not None
        self._index.add(self._log_path.name, entries, self._log_size)

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
        if self._index is not None:
            self._index.close()
            self._index = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def catch_up(index: CacheIndex, directory: Path) -> int:
    """Index what the logs hold beyond what the index has seen (other processes' writes, or
    a tail a crash left unindexed), and forget logs that are gone; the entries added."""
    known = index.indexed_to()
    present = {p.name: p for p in directory.glob("*.jsonl")}
    gone = [name for name in known if name not in present]
    if gone:
        index.forget(gone)
    added = 0
    for name, path in sorted(present.items()):
        start = known.get(name, 0)
        if path.stat().st_size <= start:
            continue
        end = complete_length(path)
        batch: list[tuple[str, int, int]] = []
        for entry in scan(path, start):
            if entry[1] + entry[2] > end:
                break
            batch.append(entry)
            if len(batch) >= 50_000:
                index.add(name, batch, entry[1] + entry[2])
                added += len(batch)
                batch = []
        index.add(name, batch, end)
        added += len(batch)
    return added


def hold_shared(directory: Path) -> int:
    """A shared lock on the cache folder for as long as the cache is open: compaction and gc
    take it exclusively, so they never rewrite logs a build is reading."""
    import fcntl

    fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(fd, fcntl.LOCK_SH)
    return fd


def _key_of(line: bytes) -> str | None:
    # The key is the first field written; avoid parsing whole responses at start-up.
    if not line.startswith(b'{"key":"'):
        return None
    end = line.find(b'"', 8)
    return line[8:end].decode() if end > 0 else None


def cache_stats(directory: Path | str) -> dict[str, Any]:
    """Entries, files, bytes and per-stage/model counts of a cache folder, via DuckDB."""

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
    con = duck.connect()
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
