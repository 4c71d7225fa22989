"""One event loop, on its own thread, that every LLM call of a build runs on.

Prefect runs shards in worker threads; funnelling their coroutines into a single loop
lets one client and one set of limits (concurrency, RPM, TPM) govern the whole build.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


def new_event_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop where it is installed (Linux and macOS): the event loop's own work, in
    C, was a tenth of a build's CPU on asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


class LoopThread:
    def __init__(self, name: str = "memsynth-llm"):
        self.loop = new_event_loop()
        self._running: set[concurrent.futures.Future[Any]] = set()
        self._tasks: set[asyncio.Task[Any]] = set()  # the loop's side of what `submit` started
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the loop and block the calling thread until it finishes. Interrupted
        (Ctrl-C reaches the waiting thread), `coro` is cancelled and given a moment to unwind,
        so no task is left pending when the loop is closed (asyncio's "Task was destroyed but
        it is pending" at exit)."""
        future = self.submit(coro)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            self._settle(5.0)
            raise

    def _settle(self, timeout_s: float) -> None:
        """Until the coroutines `run`/`submit` started have finished (cancelled ones unwinding)."""
        async def settled() -> None:
            with self._lock:
                tasks = set(self._tasks)
            if tasks:
                await asyncio.wait(tasks, timeout=timeout_s)

        if self._thread.is_alive():
            try:
                asyncio.run_coroutine_threadsafe(settled(), self.loop).result(timeout_s + 1)
            except (concurrent.futures.TimeoutError, RuntimeError, KeyboardInterrupt):
                pass  # a second Ctrl-C, or a loop already stopping: leave at once

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        with self._lock:
            self._tasks.add(task)  # type: ignore[arg-type]
        try:
            return await coro
        finally:
            with self._lock:
                self._tasks.discard(task)  # type: ignore[arg-type]

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coro` on the loop and return at once; `cancel_running` cancels it too."""
        future = asyncio.run_coroutine_threadsafe(self._tracked(coro), self.loop)
        with self._lock:
            self._running.add(future)
        future.add_done_callback(self._finished)
        return future

    def _finished(self, future: concurrent.futures.Future[Any]) -> None:
        with self._lock:
            self._running.discard(future)

    def cancel_running(self) -> None:
        """Cancel every coroutine `run` or `submit` started (and the calls they await); tasks
        started on their own, such as the cache's writer, finish their work."""
        with self._lock:
            running = list(self._running)
        for future in running:
            future.cancel()

    def stop(self) -> None:
        if self._thread.is_alive():
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
        if not self.loop.is_running():
            self.loop.close()
