"""Batch mode: requests gathered into OpenAI Batch API files, answered within 24 hours at
the batch price.

Chains stay as they are: a stage item awaits its answer whether it comes from a POST or
from a batch. The queue gathers whatever the build asks while it is busy asking (one
stage's fan-out, across every persona at that point of its chain), sends it as one
batch once nothing new has joined for `gather_s`, and polls it with back-off. Each line's
answer goes through the same parse and cache as an online answer; a failed line is asked
again in the next batch, and so is a repair.

The journal (`batches.sqlite` beside the cache) records every uploaded file, its batch and
its lines before the build waits on them, so a build killed while batches are out collects
them when it is run again instead of paying for them twice.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openai

from memsynth.core.errors import BuildFailed
from memsynth.llm.request import LLMResponse

JOURNAL_NAME = "batches.sqlite"
# Statuses after which a batch changes no more.
FINAL = ("completed", "failed", "expired", "cancelled")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (input_file_id TEXT PRIMARY KEY, batch_id TEXT,
                                    uploaded_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS lines (custom_id TEXT PRIMARY KEY, input_file_id TEXT NOT NULL,
                                  stage TEXT NOT NULL, model TEXT NOT NULL);
"""


@dataclass(frozen=True)
class BatchSettings:
    """How requests are gathered into batches and how the batches are watched."""

    gather_s: float = 2.0  # a batch is sent once no request has joined it for this long,
    max_wait_s: float = 60.0  # or once its first request has waited this long,
    max_requests: int = 50_000  # or once it is this big (the API's limits per file)
    max_bytes: int = 190_000_000
    poll_s: float = 30.0  # the first wait before asking how a batch is doing; x1.5 each time
    poll_cap_s: float = 600.0
    api_attempts: int = 5  # tries of each upload, create, poll or download


class LineFailed(Exception):
    """One line of a batch came back without an answer (asked again in the next batch)."""


class BatchJournal:
    """Which requests are out in which batch, durably (SQLite, shared by processes)."""

    def __init__(self, directory: Path):
        directory.mkdir(parents=True, exist_ok=True)
        # Opened with the engine, used on its event loop's thread.
        self._con = sqlite3.connect(directory / JOURNAL_NAME, timeout=60, isolation_level=None,
                                    check_same_thread=False)
        self._con.execute("PRAGMA journal_mode=WAL")
        self._con.executescript(_SCHEMA)

    def uploaded(self, file_id: str, lines: list[tuple[str, str, str]]) -> None:
        """A file of (custom_id, stage, model) lines is on the provider; no batch yet."""
        with self._con:
            self._con.execute("BEGIN")
            self._con.execute("INSERT INTO batches VALUES (?, NULL, ?)", (file_id, time.time()))
            self._con.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?, ?, ?)",
                                  [(c, file_id, s, m) for c, s, m in lines])

    def submitted(self, file_id: str, batch_id: str) -> None:
        self._con.execute("UPDATE batches SET batch_id = ? WHERE input_file_id = ?", (batch_id, file_id))

    def open_batches(self) -> list[tuple[str, str | None, float]]:
        """(file, batch or None, uploaded at) of every batch not yet collected."""
        return self._con.execute("SELECT input_file_id, batch_id, uploaded_at FROM batches").fetchall()

    def lines_of(self, file_id: str) -> dict[str, tuple[str, str]]:
        """custom_id → (stage, model) of the lines a file still stands for."""
        rows = self._con.execute("SELECT custom_id, stage, model FROM lines WHERE input_file_id = ?", (file_id,))
        return {c: (s, m) for c, s, m in rows}

    def collected(self, file_id: str) -> None:
        with self._con:
            self._con.execute("BEGIN")
            self._con.execute("DELETE FROM lines WHERE input_file_id = ?", (file_id,))
            self._con.execute("DELETE FROM batches WHERE input_file_id = ?", (file_id,))

    def close(self) -> None:
        self._con.close()


@dataclass
class _Line:
    custom_id: str
    body: dict[str, Any]
    stage: str
    model: str
    size: int


@dataclass
class BatchCounters:
    """What batch mode did, for the build summary."""

    submitted: int = 0  # batches created by this run
    resumed: int = 0  # batches of an earlier run collected by this one
    collected: int = 0
    lines: int = 0
    lines_failed: int = 0
    waiting_s: float = 0.0  # summed time from creation to collection
    statuses: dict[str, int] = field(default_factory=dict)


# Turns one answered line into a stored response: parse, count, cache. Raises LineFailed
# for a body that is not a usable chat completion.
KeepAnswer = Callable[[str, dict[str, Any], str, str], Awaitable[LLMResponse]]


class BatchQueue:
    """Gathers chat requests into batches, watches them, and hands each line its answer."""

    def __init__(self, client: Callable[[], openai.AsyncOpenAI], directory: Path,
                 settings: BatchSettings, keep: KeepAnswer):
        self._client = client
        self.settings = settings
        self._keep = keep
        self.journal = BatchJournal(directory)
        self.counters = BatchCounters()
        self._pending: list[_Line] = []
        self._pending_bytes = 0
        self._first_at = 0.0
        self._last_at = 0.0
        self._gatherer: asyncio.Task[None] | None = None
        self._waiting: dict[str, asyncio.Future[LLMResponse]] = {}
        self._out: dict[str, str] = {}  # custom_id → file of a batch being watched
        self._watchers: dict[str, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self._resumed: asyncio.Future[None] | None = None

    async def answer(self, custom_id: str, body: dict[str, Any], stage: str, model: str) -> LLMResponse:
        """The stored answer to `body`: from a batch already out for it, or the next one."""
        if self._resumed is None:
            self._resumed = self._spawn(self._resume())
        await asyncio.shield(self._resumed)  # nothing is sent before earlier batches are known
        future = asyncio.get_running_loop().create_future()
        self._waiting[custom_id] = future
        if custom_id not in self._out:
            size = len(json.dumps(body, ensure_ascii=False)) + len(custom_id) + 80
            self._add(_Line(custom_id, body, stage, model, size))
        try:
            return await future
        finally:
            self._waiting.pop(custom_id, None)

    # -- gathering and sending ----------------------------------------------------------

    def _add(self, line: _Line) -> None:
        s = self.settings
        if self._pending and (len(self._pending) >= s.max_requests or self._pending_bytes + line.size > s.max_bytes):
            self._send(self._take())
        now = time.monotonic()
        if not self._pending:
            self._first_at = now
        self._last_at = now
        self._pending.append(line)
        self._pending_bytes += line.size
        if self._gatherer is None or self._gatherer.done():
            self._gatherer = self._spawn(self._gather())

    def _take(self) -> list[_Line]:
        lines, self._pending, self._pending_bytes = self._pending, [], 0
        return lines

    async def _gather(self) -> None:
        s = self.settings
        while self._pending:
            due = min(self._last_at + s.gather_s, self._first_at + s.max_wait_s)
            delay = due - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
                continue
            self._send(self._take())

    def _send(self, lines: list[_Line]) -> None:
        for line in lines:
            self._out[line.custom_id] = ""  # out, though its file has no id yet
        self._spawn(self._submit(lines))

    async def _submit(self, lines: list[_Line]) -> None:
        data = b"".join(json.dumps({"custom_id": line.custom_id, "method": "POST", "url": "/v1/chat/completions",
                                    "body": line.body}, ensure_ascii=False).encode() + b"\n" for line in lines)
        try:
            upload = await self._api("upload a batch file", lambda c: c.files.create(
                file=("memsynth-batch.jsonl", data, "application/jsonl"), purpose="batch"))
            # Recorded before the batch exists: a build killed between the two finds the
            # batch by its file when it next runs.
            self.journal.uploaded(upload.id, [(ln.custom_id, ln.stage, ln.model) for ln in lines])
            batch = await self._api("create a batch", lambda c: c.batches.create(
                input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h",
                metadata={"memsynth": "build"}))
            self.journal.submitted(upload.id, batch.id)
        except BuildFailed as exc:
            for line in lines:
                self._out.pop(line.custom_id, None)
                self._fail(line.custom_id, exc)
            return
        self.counters.submitted += 1
        self.counters.lines += len(lines)
        self._watch(upload.id, batch.id, {ln.custom_id: (ln.stage, ln.model) for ln in lines})

    # -- resuming --------------------------------------------------------------------

    async def _resume(self) -> None:
        """Watch the batches an earlier run left out; find the ones it uploaded but did not
        record as created."""
        unrecorded: dict[str, float] = {}
        for file_id, batch_id, uploaded_at in self.journal.open_batches():
            if batch_id is None:
                unrecorded[file_id] = uploaded_at
            else:
                self.counters.resumed += 1
                self._watch(file_id, batch_id, self.journal.lines_of(file_id))
        if not unrecorded:
            return
        oldest = min(unrecorded.values()) - 3600  # clocks differ
        async for batch in await self._api("list batches", lambda c: c.batches.list(limit=100)):
            if batch.input_file_id in unrecorded:
                self.journal.submitted(batch.input_file_id, batch.id)
                self.counters.resumed += 1
                self._watch(batch.input_file_id, batch.id, self.journal.lines_of(batch.input_file_id))
                del unrecorded[batch.input_file_id]
            if not unrecorded or batch.created_at < oldest:
                break
        for file_id in unrecorded:  # never became a batch: its lines are asked again
            self.journal.collected(file_id)

    # -- watching and collecting ----------------------------------------------------------

    def _watch(self, file_id: str, batch_id: str, lines: dict[str, tuple[str, str]]) -> None:
        for custom_id in lines:
            self._out[custom_id] = file_id
        self._watchers[file_id] = self._spawn(self._collect(file_id, batch_id, lines))

    async def _collect(self, file_id: str, batch_id: str, lines: dict[str, tuple[str, str]]) -> None:
        started = time.monotonic()
        delay = self.settings.poll_s
        try:
            while True:
                await asyncio.sleep(delay)
                batch = await self._api("poll a batch", lambda c: c.batches.retrieve(batch_id))
                if batch.status in FINAL:
                    break
                delay = min(delay * 1.5, self.settings.poll_cap_s)
            answers = await self._read(batch.output_file_id)
            failures = await self._read(batch.error_file_id)
        except BuildFailed as exc:
            stopped = exc
            self._settle(file_id, lines, {}, lambda _: stopped)
            return
        c = self.counters
        c.collected += 1
        c.waiting_s += time.monotonic() - started
        c.statuses[batch.status] = c.statuses.get(batch.status, 0) + 1
        why = {row.get("custom_id"): _line_error(row) for row in failures}
        results = await asyncio.gather(*(self._land(row, lines) for row in answers
                                         if row.get("custom_id") in lines), return_exceptions=True)
        landed = {r.custom_id: r.response for r in results if isinstance(r, _Landed)}
        ended = f"batch {batch_id} ended {batch.status} without it"
        c.lines_failed += len(lines) - len(landed)
        self._settle(file_id, lines, landed, lambda custom_id: LineFailed(
            why.get(custom_id) or (ended if batch.status != "completed" else "no answer in the output file")))
        # Every answer is cached by now: the batch needs no collecting again.
        self.journal.collected(file_id)

    def _settle(self, file_id: str, lines: dict[str, tuple[str, str]], landed: dict[str, LLMResponse],
                failure: Callable[[str], BaseException]) -> None:
        """Hand every line of a batch its answer or its failure, all at once: a request for
        one of them either waits here first or, arriving after, finds its answer cached."""
        for custom_id in lines:
            if self._out.get(custom_id) == file_id:
                del self._out[custom_id]
            future = self._waiting.get(custom_id)
            if future is None or future.done():
                continue
            if custom_id in landed:
                future.set_result(landed[custom_id])
            else:
                future.set_exception(failure(custom_id))

    async def _land(self, row: dict[str, Any], lines: dict[str, tuple[str, str]]) -> _Landed:
        custom_id = row["custom_id"]
        response = row.get("response") or {}
        if response.get("status_code") != 200 or not isinstance(response.get("body"), dict):
            raise LineFailed(_line_error(row))
        stage, model = lines[custom_id]
        return _Landed(custom_id, await self._keep(custom_id, response["body"], stage, model))

    async def _read(self, file_id: str | None) -> list[dict[str, Any]]:
        if not file_id:
            return []
        content = await self._api("download a batch's results", lambda c: c.files.content(file_id))
        return [json.loads(line) for line in content.content.splitlines() if line.strip()]

    def _fail(self, custom_id: str, exc: BaseException) -> None:
        future = self._waiting.get(custom_id)
        if future is not None and not future.done():
            future.set_exception(exc)

    async def _api(self, what: str, call: Callable[[openai.AsyncOpenAI], Awaitable[Any]]) -> Any:
        """One Files or Batches call, tried a few times with back-off before the build stops."""
        for attempt in range(1, self.settings.api_attempts + 1):
            try:
                return await call(self._client())
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                if attempt == self.settings.api_attempts:
                    raise BuildFailed(f"could not {what} after {attempt} tries: {exc}. Batches already "
                                      "out are recorded: re-run the build to collect them") from exc
                await asyncio.sleep(min(30.0, 0.5 * 2 ** attempt))
            except openai.APIStatusError as exc:
                raise BuildFailed(f"the endpoint refused to {what}: HTTP {exc.status_code}: "
                                  f"{str(exc.message)[:200]}") from exc
        raise AssertionError("unreachable")

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        """Stop gathering and watching (batches out stay recorded for the next run)."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        self.journal.close()


@dataclass(frozen=True)
class _Landed:
    custom_id: str
    response: LLMResponse


def _line_error(row: dict[str, Any]) -> str:
    """Why a line of an error file failed, in one line."""
    error = row.get("error") or ((row.get("response") or {}).get("body") or {}).get("error") or {}
    status = (row.get("response") or {}).get("status_code")
    message = error.get("message") if isinstance(error, dict) else str(error)
    return f"batch line failed{f' (HTTP {status})' if status else ''}: {message or 'no reason given'}"
