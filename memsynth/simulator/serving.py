"""Serving a simulator: from a thread of its own (tests, `--llm simulator`) or until cancelled
(`memsynth simulator serve`)."""

from __future__ import annotations

import asyncio
import threading
from typing import Protocol

from aiohttp import web


class Servable(Protocol):
    """What serving needs of a simulator (memsynth.simulator.server.Simulator): its app."""

    def app(self) -> web.Application: ...


class SimulatorThread:
    """A simulator served on a loopback port from its own thread and event loop."""

    def __init__(self, simulator: Servable, host: str = "127.0.0.1", port: int = 0):
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


async def serve_forever(simulator: Servable, host: str, port: int) -> None:
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
