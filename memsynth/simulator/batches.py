"""The simulator's Files and Batch API: `/v1/files` and `/v1/batches`, answered offline.

A batch waits `delay_s`, then answers every line through the simulator's own
`complete` (so a line gets exactly the answer the online request would have had) and
writes the output and error files. A share of lines fails on purpose
(`failed_line_rate`, or a per-batch schedule) so clients are tested on partial batches.
The desk counts what it was sent, and in particular any line it is sent again after it
was already answered: money a real provider would have charged twice.
"""

from __future__ import annotations

import asyncio
import json
import random
import secrets
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

BATCH_ENDPOINTS = ("/v1/chat/completions",)


@dataclass
class BatchFaults:
    """How the desk misbehaves: its turnaround, and lines it fails."""

    delay_s: float = 0.0  # from creation to completed
    failed_line_rate: float = 0.0  # each line's chance of landing in the error file
    # Lines failed by their 1-based position across every batch, before the rate applies.
    failed_lines: tuple[int, ...] = ()
    seed: int = 0


@dataclass
class DeskCounters:
    batches_created: int = 0
    lines: int = 0
    lines_failed: int = 0
    answered: Counter[str] = field(default_factory=Counter)  # custom_id -> lines answered
    paid_twice: int = 0  # lines sent again although an earlier batch had answered them


class BatchDesk:
    """Files and batches held in memory, processed on the server's event loop."""

    def __init__(self, complete: Callable[[dict[str, Any]], dict[str, Any]],
                 faults: BatchFaults | None = None):
        self.complete = complete
        self.faults = faults or BatchFaults()
        self.counters = DeskCounters()
        self.files: dict[str, tuple[dict[str, Any], bytes]] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._rng = random.Random(self.faults.seed)
        self._tasks: set[asyncio.Task[None]] = set()

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self.upload)
        app.router.add_get("/v1/files/{file_id}", self.file)
        app.router.add_get("/v1/files/{file_id}/content", self.content)
        app.router.add_post("/v1/batches", self.create)
        app.router.add_get("/v1/batches", self.list)
        app.router.add_get("/v1/batches/{batch_id}", self.retrieve)
        app.router.add_post("/v1/batches/{batch_id}/cancel", self.cancel)

    def stats(self) -> dict[str, Any]:
        c = self.counters
        return {"batches_created": c.batches_created, "batch_lines": c.lines,
                "batch_lines_failed": c.lines_failed, "batch_paid_twice": c.paid_twice}

    def _store(self, data: bytes, filename: str, purpose: str) -> dict[str, Any]:
        meta = {"id": f"file-sim-{secrets.token_hex(8)}", "object": "file", "bytes": len(data),
                "created_at": int(time.time()), "filename": filename, "purpose": purpose,
                "status": "processed"}
        self.files[meta["id"]] = (meta, data)
        return meta

    async def upload(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload, purpose = form.get("file"), form.get("purpose")
        if upload is None or not hasattr(upload, "file") or purpose != "batch":
            return _error(400, "expected a multipart `file` and purpose=batch")
        meta = self._store(upload.file.read(), upload.filename or "input.jsonl", "batch")
        return web.json_response(meta)

    async def file(self, request: web.Request) -> web.Response:
        found = self.files.get(request.match_info["file_id"])
        return web.json_response(found[0]) if found else _error(404, "no such file")

    async def content(self, request: web.Request) -> web.Response:
        found = self.files.get(request.match_info["file_id"])
        if found is None:
            return _error(404, "no such file")
        return web.Response(body=found[1], content_type="application/jsonl")

    async def create(self, request: web.Request) -> web.Response:
        body = await request.json()
        found = self.files.get(body.get("input_file_id", ""))
        if found is None:
            return _error(400, "input_file_id names no uploaded file")
        if body.get("endpoint") not in BATCH_ENDPOINTS or body.get("completion_window") != "24h":
            return _error(400, f"endpoint must be one of {BATCH_ENDPOINTS}, completion_window 24h")
        try:
            lines = [json.loads(line) for line in found[1].splitlines() if line.strip()]
        except ValueError:
            return _error(400, "the input file is not JSONL")
        self.counters.batches_created += 1
        batch = {"id": f"batch_sim_{secrets.token_hex(8)}", "object": "batch", "endpoint": body["endpoint"],
                 "input_file_id": body["input_file_id"], "completion_window": "24h",
                 "status": "validating", "output_file_id": None, "error_file_id": None,
                 "created_at": int(time.time()), "completed_at": None, "errors": None,
                 "metadata": body.get("metadata"),
                 "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
        self.batches[batch["id"]] = batch
        task = asyncio.create_task(self._process(batch, lines))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return web.json_response(batch)

    async def list(self, request: web.Request) -> web.Response:
        newest = sorted(self.batches.values(), key=lambda b: b["created_at"], reverse=True)
        after = request.query.get("after")
        if after:
            ids = [b["id"] for b in newest]
            newest = newest[ids.index(after) + 1:] if after in ids else []
        limit = int(request.query.get("limit", 20))
        page = newest[:limit]
        return web.json_response({"object": "list", "data": page, "has_more": len(newest) > limit,
                                  "first_id": page[0]["id"] if page else None,
                                  "last_id": page[-1]["id"] if page else None})

    async def retrieve(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        return web.json_response(batch) if batch else _error(404, "no such batch")

    async def cancel(self, request: web.Request) -> web.Response:
        batch = self.batches.get(request.match_info["batch_id"])
        if batch is None:
            return _error(404, "no such batch")
        if batch["status"] in ("validating", "in_progress"):
            batch["status"] = "cancelling"
        return web.json_response(batch)

    async def _process(self, batch: dict[str, Any], lines: list[dict[str, Any]]) -> None:
        batch["status"] = "in_progress"
        await asyncio.sleep(self.faults.delay_s)
        if batch["status"] == "cancelling":
            batch.update(status="cancelled", cancelled_at=int(time.time()))
            return
        c = self.counters
        output, errors = [], []
        for line in lines:
            c.lines += 1
            custom_id = line.get("custom_id", "")
            if c.lines in self.faults.failed_lines or self._rng.random() < self.faults.failed_line_rate:
                c.lines_failed += 1
                errors.append({"id": f"batch_req_{secrets.token_hex(6)}", "custom_id": custom_id,
                               "response": {"status_code": 500, "request_id": "",
                                            "body": {"error": {"message": "simulated line failure",
                                                               "type": "server_error"}}},
                               "error": None})
                continue
            if c.answered[custom_id]:
                c.paid_twice += 1
            c.answered[custom_id] += 1
            output.append({"id": f"batch_req_{secrets.token_hex(6)}", "custom_id": custom_id,
                           "response": {"status_code": 200, "request_id": "",
                                        "body": self.complete(line.get("body") or {})},
                           "error": None})
        counts = batch["request_counts"]
        counts.update(completed=len(output), failed=len(errors))
        if output:
            batch["output_file_id"] = self._store(_jsonl(output), "batch_output.jsonl", "batch_output")["id"]
        if errors:
            batch["error_file_id"] = self._store(_jsonl(errors), "batch_errors.jsonl", "batch_output")["id"]
        batch.update(status="completed", completed_at=int(time.time()))


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, ensure_ascii=False).encode() + b"\n" for r in rows)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "simulated", "code": status}},
                             status=status)
