"""One worker's back-off, heard by every other worker of a Dask build (a Dask Variable)."""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import Any

from memsynth.llm.limits import AdaptiveConcurrency
from memsynth.llm.loop import LoopThread

log = logging.getLogger(__name__)

# This process among a build's workers (the thread runner's is the build's own).
WORKER_ID = f"{socket.gethostname()}:{os.getpid()}"


class BackoffListener:
    """Tells the other workers when this one backs off, and backs off when they do.

    The announcement is a Dask Variable holding "<worker> <count>"; every worker polls it
    a few times a second. Polling and writing happen on this object's thread, never on
    the event loop.
    """

    POLL_S = 0.2

    def __init__(self, channel: str, concurrency: AdaptiveConcurrency, loop: LoopThread, client: Any,
                 *, identity: str = WORKER_ID):
        import distributed

        self.identity = identity
        self._variable = distributed.Variable(channel, client=client)
        self._concurrency = concurrency
        self._loop = loop
        self._announced = 0
        self._pending = threading.Event()
        self._stop = threading.Event()
        self._seen: str | None = None
        self.heard = 0  # back-offs of other workers applied here
        concurrency.on_backoff = self._pending.set
        self._thread = threading.Thread(target=self._run, name="memsynth-backoff", daemon=True)
        self._thread.start()

    @classmethod
    def start(cls, channel: str, concurrency: AdaptiveConcurrency, loop: LoopThread) -> BackoffListener | None:
        """A listener on the current Dask worker's client; None outside a worker."""
        import distributed

        try:
            client = distributed.get_client()
        except ValueError:
            log.warning("not on a Dask worker: this process's back-off is not shared")
            return None
        return cls(channel, concurrency, loop, client)

    def _run(self) -> None:
        while not self._stop.wait(self.POLL_S):
            try:
                if self._pending.is_set():
                    self._pending.clear()
                    self._announced += 1
                    self._seen = f"{self.identity} {self._announced}"
                    self._variable.set(self._seen)
                    continue
                value = self._variable.get(timeout=self.POLL_S)
            except TimeoutError:  # nobody has backed off yet
                continue
            except Exception as exc:  # noqa: BLE001 - the scheduler went away: the build is ending
                log.debug("back-off channel: %s", exc)
                continue
            if value != self._seen:
                self._seen = value
                if value and not str(value).startswith(f"{self.identity} "):
                    self.heard += 1
                    self._loop.loop.call_soon_threadsafe(self._concurrency.peer_backed_off)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(2)
