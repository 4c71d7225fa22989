"""The simulator's HTTP server: OpenAI chat completions and embeddings, with injectable
faults, server profiles, a token rate and a slot capacity.

What it answers is `memsynth.simulator.completion`'s; the faults it injects,
`memsynth.simulator.faults`; what it counts, `memsynth.simulator.counters`; how it is run,
`memsynth.simulator.serving`.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import aiohttp
from aiohttp import web

from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.batches import BatchDesk, BatchFaults, DeskCounters
from memsynth.simulator.completion import MODEL_ID, AnswerMaker, format_name
from memsynth.simulator.counters import Counters
from memsynth.simulator.embeddings import embedding_of
from memsynth.simulator.faults import Faults, draw_fault, truncate
from memsynth.simulator.profiles import PROFILES, Runaways
from memsynth.simulator.prompt_cache import PrefixCache
from memsynth.simulator.serving import SimulatorThread, serve_forever
from memsynth.simulator.stages import recipe_answers

# What the rest of memsynth and its tests import from here.
__all__ = ["MODEL_ID", "Counters", "Faults", "Simulator", "SimulatorThread", "embedding_of", "serve_forever"]

class Simulator:
    """Request handling, independent of how the server is run."""

    def __init__(self, *, latency_ms: float = 0.0, faults: Faults | None = None,
                 upstream: str | None = None, answers: dict[str, StageAnswer] | None = None,
                 batch_faults: BatchFaults | None = None, prompt_cache: PrefixCache | None = None,
                 profile: str = "openai", models: tuple[str, ...] | None = None,
                 token_rate: float | None = None, capacity: int | None = None, ignores_seed: bool = False,
                 batch_slowdown: float = 0.0, runaway_rate: float = 0.0, interrupts: bool = False,
                 runaway_kind: str = "whitespace"):
        if profile not in PROFILES:
            raise ValueError(f"unknown server profile {profile!r} (known: {', '.join(PROFILES)})")
        self.profile = PROFILES[profile]
        # The model names served (listed at /models): another is refused with the profile's
        # 404, unless the profile answers any name. None: any name is answered.
        self.served = models
        # Completion tokens a second, as a local server generates them (None: at once).
        self.token_rate = token_rate
        # Requests generated at once (llama.cpp's --parallel slots); the rest wait silent in
        # a queue, headers unsent. None: no limit.
        self.capacity = capacity
        self._slots = asyncio.Semaphore(capacity) if capacity else None
        # Continuous batching: with b answers generating at once, each token takes
        # (1 + batch_slowdown * (b - 1) / capacity) times as long as alone. Throughput then rises
        # with b up to `capacity` and stays flat past it, while the queue adds latency.
        self.batch_slowdown = batch_slowdown
        self.generating = 0
        # llama-cpp-python's `interrupt_requests` (its default): while a request waits for the
        # slot, the answer being streamed ends after its next chunk with `[DONE]` and no
        # finish_reason, and the slot goes to the waiting one.
        self.interrupts = interrupts
        self.waiting = 0
        self.latency_s = latency_ms / 1000.0
        self.faults = faults or Faults()
        self.upstream = upstream.rstrip("/") if upstream else None
        self.counters = Counters()
        self.recorded: list[dict[str, Any]] = []  # request bodies, when record=True
        self.recorded_headers: list[dict[str, str]] = []  # and their headers
        self.record = False
        self.maker = AnswerMaker(answers if answers is not None else recipe_answers(), self.profile,
                                 prompt_cache or PrefixCache(), ignores_seed=ignores_seed)
        self._rng = random.Random(self.faults.seed)
        self._session: aiohttp.ClientSession | None = None
        self.desk = BatchDesk(self._complete_line, batch_faults)
        self.runaways = Runaways(runaway_rate, self.faults.seed, runaway_kind)  # answers that run on

    def _complete_line(self, body: dict[str, Any]) -> dict[str, Any]:
        """A batch line's answer: a small model runs on in a batch as it does online."""
        payload = self.complete(body)
        if self.runaways.apply(payload, body):
            self.counters.count("runaway")
        return payload

    @property
    def prompt_cache(self) -> PrefixCache:
        return self.maker.prompt_cache

    def script(self, schema_name: str, contents: list[Any]) -> None:
        """Answer the next requests for `schema_name` with these contents, in order (tests).

        An entry is the content itself, or a function of the stage's variables (the request's
        `memsynth.variables`, empty when none were sent) that returns it.
        """
        self.maker.script(schema_name, contents)

    def app(self) -> web.Application:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self.chat_completions)
        app.router.add_post("/v1/embeddings", self.embeddings)
        app.router.add_get("/v1/models", self.models)
        app.router.add_get("/stats", self.stats)
        app.router.add_post("/stats/reset", self.reset)
        self.desk.routes(app)
        app.on_cleanup.append(self._close_session)
        return app

    async def embeddings(self, request: web.Request) -> web.Response:
        """Deterministic embeddings (`embedding_of`): texts sharing words lie close."""
        c = self.counters
        c.requests += 1
        try:
            body = await request.json()
        except ValueError:
            c.count("bad_request")
            return _error(400, "request body is not JSON")
        inputs = body.get("input")
        inputs = [inputs] if isinstance(inputs, str) else inputs
        if not isinstance(inputs, list) or not all(isinstance(t, str) for t in inputs):
            c.count("bad_request")
            return _error(400, "input must be a string or a list of strings")
        c.count("embeddings")
        tokens = sum(max(1, len(t) // 4) for t in inputs)
        return web.json_response({
            "object": "list", "model": body.get("model") or MODEL_ID,
            "data": [{"object": "embedding", "index": i, "embedding": embedding_of(t)}
                     for i, t in enumerate(inputs)],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    async def _close_session(self, _app: web.Application) -> None:
        if self._session is not None:
            await self._session.close()

    async def models(self, _request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            self.profile.model_entry(m) for m in self.served or ()]})  # None: any name, none listed

    async def stats(self, _request: web.Request) -> web.Response:
        c = self.counters
        return web.json_response({"requests": c.requests, "in_flight": c.in_flight,
                                  "peak_in_flight": c.peak_in_flight, "by_outcome": c.by_outcome,
                                  **c.timing(), **self.desk.stats(),
                                  "redrawn": self.maker.redrawn, "failing_checks": self.maker.failing})

    async def reset(self, _request: web.Request) -> web.Response:
        now_busy = self.counters.in_flight
        self.counters = Counters(in_flight=now_busy, busy_since=time.time() if now_busy else None)
        self.desk.counters = DeskCounters()
        return web.json_response({"ok": True})

    async def chat_completions(self, request: web.Request) -> web.Response:
        c = self.counters
        c.requests += 1
        number = c.requests  # this request's place, before others arrive during the awaits below
        c.started()
        try:
            try:
                body = await request.json()
            except ValueError:
                c.count("bad_request")
                return _error(400, "request body is not JSON")
            if c.first_work_at is None and format_name(body) != "probe":
                c.first_work_at = time.time()  # the client's own work, past its endpoint probe
            if self.record:
                self.recorded.append(body)
                self.recorded_headers.append(dict(request.headers))
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            refusal = self._profile_refusal(body)
            if refusal is not None:
                return refusal
            fault = draw_fault(self.faults, self._rng, number)
            if fault == "429":
                c.count("429")
                return _error(429, "simulated rate limit", headers={"retry-after-ms": "50"})
            if fault == "500":
                c.count("500")
                return _error(500, "simulated server error")
            if fault == "dropped":
                c.count("dropped")
                if request.transport is not None:
                    request.transport.abort()
                return web.Response()  # never reaches the client
            if fault == "slow":
                await asyncio.sleep(self.faults.slow_ms / 1000)
            if self._slots is None:
                return await self._answer(request, body, fault)
            self.waiting += 1
            try:
                await self._slots.acquire()
            finally:
                self.waiting -= 1
            try:
                self.generating += 1
                return await self._answer(request, body, fault)
            finally:
                self.generating -= 1
                self._slots.release()
        finally:
            c.ended()

    async def _answer(self, request: web.Request, body: dict[str, Any], fault: str) -> web.StreamResponse:
        """Generate the answer (in one of the server's slots, when it has a capacity) and send it."""
        c = self.counters
        if self.upstream:
            status, payload = await self._forward(body)
            if status != 200:
                c.count(f"upstream_{status}")
                return web.json_response(payload, status=status)
        else:
            missing = self.maker.missing_variables(body)
            if missing:
                c.count("no_stage_variables")
                return _error(412, missing)
            payload = self.complete(body)
            if self.runaways.apply(payload, body):
                c.count("runaway")
        c.count(fault)
        if fault == "malformed" and not body.get("stream"):
            # Cut mid-body: a broken proxy, or a gateway's HTML error page sent as a 200.
            text = json.dumps(payload, ensure_ascii=False)
            return web.Response(text=text[: len(text) // 2], content_type="application/json")
        if fault == "truncated":
            truncate(payload)
        usage = payload.get("usage") or {}
        c.prompt_tokens += usage.get("prompt_tokens", 0)
        if body.get("stream"):  # its tokens are counted as they go: generation stops on a disconnect
            try:
                return await self._stream(request, payload, body, broken=fault == "malformed")
            except ConnectionResetError:  # the client hung up mid-answer: stop writing it
                c.count("disconnected")
                return web.Response()  # never reaches the client
        c.completion_tokens += usage.get("completion_tokens", 0)  # generated, read or not
        if self.token_rate:  # nothing is sent until all of it is generated
            await self._generate(usage.get("completion_tokens", 0))
            if request.transport is None or request.transport.is_closing():
                # The client gave up while it was generated: a server does not notice a
                # disconnect before it writes, so the whole answer was made for nobody.
                c.count("generated_for_nobody")
        return web.json_response(payload)

    async def _generate(self, tokens: float) -> None:
        """Take the time `tokens` take at `token_rate`, slowed by the batch they share."""
        remaining = tokens
        while remaining > 0:  # in steps, so the batch's size is read as it changes
            step = min(remaining, 16.0)
            slowdown = 1.0
            if self.capacity and self.batch_slowdown:
                slowdown += self.batch_slowdown * max(0, self.generating - 1) / self.capacity
            await asyncio.sleep(step * slowdown / self.token_rate)  # type: ignore[operator]
            remaining -= step

    async def _stream(self, request: web.Request, payload: dict[str, Any], body: dict[str, Any],
                      broken: bool = False) -> web.StreamResponse:
        """The answer as chat.completion.chunk events, at `token_rate` when set (a piece of
        about 16 tokens at a time), usage last when `stream_options.include_usage` asks."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await response.prepare(request)
        choice = payload["choices"][0]
        content = choice["message"]["content"] or ""
        head = {"id": payload.get("id", "chatcmpl-sim"), "object": "chat.completion.chunk",
                "created": payload.get("created", 0), "model": payload.get("model", "")}

        # Without a token rate the whole answer is ready at once: its events go out in one
        # write, as a server's buffered stream would, not one TCP segment each.
        pending: list[bytes] | None = None if self.token_rate or broken else []

        async def send(event: dict[str, Any] | str) -> None:
            data = event if isinstance(event, str) else json.dumps(event, ensure_ascii=False)
            line = f"data: {data}\n\n".encode()
            if pending is None:
                await response.write(line)
            else:
                pending.append(line)

        step = 64 if self.token_rate else max(1, len(content))
        tokens = (payload.get("usage") or {}).get("completion_tokens", 0)
        for start in range(0, len(content), step):
            if self.token_rate:
                await self._generate(step / 4)
            try:
                await send({**head, "choices": [{"index": 0, "delta": {"content": content[start:start + step]},
                                                 "finish_reason": None}]})
            except ConnectionResetError:  # what was generated before the client left
                self.counters.completion_tokens += tokens * start // max(1, len(content))
                raise
            if self.interrupts and self.waiting:  # the slot goes to the next request
                self.counters.completion_tokens += tokens * (start + step) // max(1, len(content))
                self.counters.count("interrupted")
                await send("[DONE]")
                await response.write_eof(b"".join(pending or ()))
                return response
            if broken:  # a proxy that cuts the stream: half an event, then nothing
                self.counters.completion_tokens += tokens  # the server made it all
                await response.write(b'data: {"id": "chatcmpl-')
                return response
        self.counters.completion_tokens += tokens
        await send({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
        if (body.get("stream_options") or {}).get("include_usage"):
            await send({**head, "choices": [], "usage": payload["usage"]})
        await send("[DONE]")
        await response.write_eof(b"".join(pending or ()))
        return response

    def _profile_refusal(self, body: dict[str, Any]) -> web.Response | None:
        """The answer this server profile gives a request it does not take (None: it takes it)."""
        profile, c = self.profile, self.counters
        model = body.get("model")
        if self.served is not None and model not in self.served and not profile.answers_any_model:
            c.count("unknown_model")
            return _error(404, profile.not_found.format(model=model))
        refused = profile.refusal(body.get("response_format") or {})
        if refused is not None:
            c.count("profile_refused")
            return _error(*refused)
        chars = sum(len(str(m.get("content", ""))) for m in body.get("messages") or [])
        too_long = profile.too_long(chars // 4, int(body.get("max_tokens") or 0))
        if too_long is not None:
            c.count("too_long")
            return _error(400, too_long)
        return None
    async def _forward(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        # The whole answer from upstream (this proxy streams it on itself, faults and all).
        body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        async with self._session.post(f"{self.upstream}/chat/completions", json=body) as resp:
            return resp.status, await resp.json()

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion answering `body` with JSON valid against its schema."""
        return self.maker.complete(body)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "simulated", "code": status}},
                             status=status, headers=headers)

