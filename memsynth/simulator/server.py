"""The simulator's HTTP server: OpenAI chat completions with injectable faults.

Answers are deterministic in the request's model, schema and first two messages (the
original prompt), so a repaired or retried call gets the answer the first call would
have had: a build through faults ends with the same rows as a clean one.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import random
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.batches import BatchDesk, BatchFaults, DeskCounters
from memsynth.simulator.fake import SchemaFaker
from memsynth.simulator.profiles import PROFILES, Runaways
from memsynth.simulator.prompt_cache import PrefixCache
from memsynth.simulator.stages import recipe_answers
from memsynth.simulator.text import TextMaker

MODEL_ID = "memsynth-simulator"
_SCHEMA_IN_PROMPT = re.compile(r'<json-schema name="([^"]*)">\s*(\{.*\})\s*</json-schema>', re.DOTALL)


@dataclass
class Faults:
    """Probabilities (0–1) of each injected failure, drawn per request."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_dropped: float = 0.0  # the connection is closed without an answer
    rate_malformed: float = 0.0  # a 200 whose body is not a readable chat completion
    rate_truncated: float = 0.0  # half the content, finish_reason "length"
    rate_slow: float = 0.0  # answered after an extra `slow_ms`
    slow_ms: float = 2000.0
    seed: int = 0
    # Forced outcomes ("429", "500", "dropped", "malformed", "truncated", "slow", "ok") for
    # the first requests, before the random draws take over: tests use it to be sure each
    # fault occurs.
    schedule: tuple[str, ...] = ()


@dataclass
class Counters:
    requests: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    by_outcome: dict[str, int] = field(default_factory=dict)
    # Tokens of the answers sent (cut-off ones too): what a real server would bill.
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # When chat requests began and ended (time.time()), and how long at least one was in
    # flight: a client's start-up, its tail and its idle gaps, to the millisecond.
    first_request_at: float | None = None
    first_work_at: float | None = None
    last_answer_at: float | None = None
    busy_seconds: float = 0.0
    busy_since: float | None = None

    def started(self) -> None:
        now = time.time()
        if self.first_request_at is None:
            self.first_request_at = now
        if self.in_flight == 0:
            self.busy_since = now
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def ended(self) -> None:
        self.in_flight -= 1
        now = self.last_answer_at = time.time()
        if self.in_flight == 0 and self.busy_since is not None:
            self.busy_seconds += now - self.busy_since
            self.busy_since = None

    def timing(self) -> dict[str, float | None]:
        ongoing = time.time() - self.busy_since if self.busy_since is not None else 0.0
        return {"first_request_at": self.first_request_at, "first_work_at": self.first_work_at,
                "last_answer_at": self.last_answer_at,
                "busy_seconds": round(self.busy_seconds + ongoing, 3)}

    def count(self, outcome: str) -> None:
        self.by_outcome[outcome] = self.by_outcome.get(outcome, 0) + 1


class Simulator:
    """Request handling, independent of how the server is run."""

    def __init__(self, *, latency_ms: float = 0.0, faults: Faults | None = None,
                 upstream: str | None = None, answers: dict[str, StageAnswer] | None = None,
                 batch_faults: BatchFaults | None = None, prompt_cache: PrefixCache | None = None,
                 profile: str = "openai", models: tuple[str, ...] | None = None,
                 token_rate: float | None = None, capacity: int | None = None, ignores_seed: bool = False,
                 batch_slowdown: float = 0.0, runaway_rate: float = 0.0):
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
        # Sampled answers (temperature above 0) differ on every request, `seed` or not.
        self.ignores_seed = ignores_seed
        self._draws = itertools.count()
        self.latency_s = latency_ms / 1000.0
        self.faults = faults or Faults()
        self.upstream = upstream.rstrip("/") if upstream else None
        self.counters = Counters()
        self.recorded: list[dict[str, Any]] = []  # request bodies, when record=True
        self.recorded_headers: list[dict[str, str]] = []  # and their headers
        self.record = False
        self._scripts: dict[str, list[Any]] = {}
        self.answers = answers if answers is not None else recipe_answers()
        self._rng = random.Random(self.faults.seed)
        self._session: aiohttp.ClientSession | None = None
        self.desk = BatchDesk(self.complete, batch_faults)
        self.prompt_cache = prompt_cache or PrefixCache()
        self.runaways = Runaways(runaway_rate, self.faults.seed)  # answers that run on in whitespace

    def script(self, schema_name: str, contents: list[Any]) -> None:
        """Answer the next requests for `schema_name` with these contents, in order (tests).

        An entry is the content itself, or a function of the stage's variables (the request's
        `memsynth.variables`, empty when none were sent) that returns it.
        """
        self._scripts.setdefault(schema_name, []).extend(contents)

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
                                  **c.timing(), **self.desk.stats()})

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
            if c.first_work_at is None and _format_name(body) != "probe":
                c.first_work_at = time.time()  # the client's own work, past its endpoint probe
            if self.record:
                self.recorded.append(body)
                self.recorded_headers.append(dict(request.headers))
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
            refusal = self._profile_refusal(body)
            if refusal is not None:
                return refusal
            fault = self._pick_fault(number)
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
            async with self._slots:
                self.generating += 1
                try:
                    return await self._answer(request, body, fault)
                finally:
                    self.generating -= 1
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
            missing = self._missing_variables(body)
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
            _truncate(payload)
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

    def _pick_fault(self, number: int) -> str:
        """The outcome of request `number` (1-based): scheduled, else drawn at the set rates."""
        f = self.faults
        if number <= len(f.schedule):
            return f.schedule[number - 1]
        draw = self._rng.random()
        if draw < f.rate_429:
            return "429"
        if draw < f.rate_429 + f.rate_500:
            return "500"
        if draw < f.rate_429 + f.rate_500 + f.rate_dropped:
            return "dropped"
        draw = self._rng.random()
        if draw < f.rate_malformed:
            return "malformed"
        if draw < f.rate_malformed + f.rate_truncated:
            return "truncated"
        if draw < f.rate_malformed + f.rate_truncated + f.rate_slow:
            return "slow"
        return "ok"

    async def _forward(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self._session is None:
            self._session = aiohttp.ClientSession()
        # The whole answer from upstream (this proxy streams it on itself, faults and all).
        body = {k: v for k, v in body.items() if k not in ("stream", "stream_options")}
        async with self._session.post(f"{self.upstream}/chat/completions", json=body) as resp:
            return resp.status, await resp.json()

    def _missing_variables(self, body: dict[str, Any]) -> str | None:
        """Why a recipe stage's request cannot be answered: it carries no stage variables."""
        fmt = body.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name")
        if name in self.answers and not self._scripts.get(name) and not body.get("memsynth"):
            return (f"memsynth simulator: the request for {name} carries no stage variables; "
                    "set llm.stage_variables: true in the config (or build with --llm simulator)")
        return None

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """A chat.completion answering `body` with JSON valid against its schema."""
        messages = body.get("messages") or []
        prompt = "\n".join(str(m.get("content", "")) for m in messages[:2])
        schema, name = _requested_schema(body, prompt, self.profile.schema_in_json_object)
        scripted = self._scripts.get(name or "")
        hints = body.get("memsynth") or {}
        # Another sample of the same prompt (a new cache key) gets another answer.
        sample = hints.get("sample", 0)
        salt = f"|{hints['salt']}" if hints.get("salt") else ""  # a regenerated item
        if self.ignores_seed and float(body.get("temperature") or 0) > 0:
            salt += f"|draw {next(self._draws)}"
        seed = hashlib.sha256(f"{body.get('model')}|{name}|{prompt}|{sample}{salt}".encode()).digest()
        rng = random.Random(int.from_bytes(seed[:8], "big"))
        variables = hints.get("variables") or {}
        text = TextMaker(rng, variables.get("language", "en"))
        if scripted:
            content = scripted.pop(0)
            content = content(variables) if callable(content) else content
        elif schema is None:
            content = text.paragraph(3)
        else:
            draft = SchemaFaker(text).generate(schema)
            answer = self.answers.get(name or "")
            if answer is not None and variables:
                draft = answer(draft, variables, text)
            content = json.dumps(draft, ensure_ascii=False)
        prompt_tokens = max(1, len(prompt) // 4)
        completion_tokens = max(1, len(content) // 4)
        cached_tokens = self.prompt_cache.read(str(body.get("model")), prompt)
        return {
            "id": "chatcmpl-sim-" + seed.hex()[:24],
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model") or MODEL_ID,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": cached_tokens}},
        }


EMBEDDING_DIMENSIONS = 256
_WORD = re.compile(r"[a-z0-9']+")


def embedding_of(text: str) -> list[float]:
    """A unit vector of hashed features: lower-cased words, and each CJK character and
    character pair, so texts that share words (or characters) are close in cosine and
    Euclidean distance, as a real embedding model's would tend to be."""
    lowered = text.lower()
    features = _WORD.findall(lowered)
    han = [ch for ch in lowered if "\u4e00" <= ch <= "\u9fff"]
    features += han + [a + b for a, b in zip(han, han[1:])]
    vector = [0.0] * EMBEDDING_DIMENSIONS
    for feature in features or [text]:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        slot = int.from_bytes(digest[:4], "big") % EMBEDDING_DIMENSIONS
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = sum(x * x for x in vector) ** 0.5 or 1.0
    return [round(x / norm, 6) for x in vector]


def _format_name(body: dict[str, Any]) -> str | None:
    """The name of the json_schema a request asks for (memsynth's endpoint probe's is "probe")."""
    fmt = body.get("response_format")
    spec = fmt.get("json_schema") if isinstance(fmt, dict) else None
    return spec.get("name") if isinstance(spec, dict) else None


def _requested_schema(body: dict[str, Any], prompt: str, schema_field: bool = False
                      ) -> tuple[dict[str, Any] | None, str | None]:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        spec = fmt.get("json_schema") or {}
        return spec.get("schema"), spec.get("name")
    if schema_field and fmt.get("type") == "json_object" and isinstance(fmt.get("schema"), dict):
        # llama-cpp-python's schema field carries no name: the prompt's copy has it.
        match = _SCHEMA_IN_PROMPT.search(prompt)
        return fmt["schema"], match.group(1) if match else None
    match = _SCHEMA_IN_PROMPT.search(prompt)
    if match:
        return json.loads(match.group(2)), match.group(1)
    return None, None


def _truncate(payload: dict[str, Any]) -> None:
    choice = payload["choices"][0]
    content = choice["message"]["content"] or ""
    choice["message"]["content"] = content[: max(1, len(content) // 2)]
    choice["finish_reason"] = "length"
    usage = payload.get("usage") or {}
    if "completion_tokens" in usage:  # what was generated before the cut
        usage["completion_tokens"] = max(1, usage["completion_tokens"] // 2)
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + usage["completion_tokens"]


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": {"message": message, "type": "simulated", "code": status}},
                             status=status, headers=headers)


class SimulatorThread:
    """A simulator served on a loopback port from its own thread and event loop."""

    def __init__(self, simulator: Simulator, host: str = "127.0.0.1", port: int = 0):
        self.simulator = simulator
        self.host = host
        self.port = port
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="memsynth-simulator", daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def start(self) -> SimulatorThread:
        self._thread.start()
        if not self._ready.wait(30):
            raise RuntimeError("the simulator did not start")
        return self

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())  # type: ignore[union-attr]
        self._loop.close()

    async def _start(self) -> None:
        self._runner = web.AppRunner(self.simulator.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> SimulatorThread:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def serve_forever(simulator: Simulator, host: str, port: int) -> None:
    """Serve until cancelled (the CLI's `simulator serve`)."""
    runner = web.AppRunner(simulator.app(), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    actual = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    print(f"memsynth simulator listening on http://{host}:{actual}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
