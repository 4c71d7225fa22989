"""When a streamed answer has gone silent, as opposed to waiting its turn.

A server with fewer slots than requests in flight (llama.cpp runs one at a time by default)
queues the rest without a byte, headers included. Timed from the moment it was sent, the
last of 32 queued requests waits 31 answers long and is taken for a dead server: abandoned,
sent again at the back of the queue, abandoned again (issue 50: 9 min 20 s, then a failure).

So the idle timeout governs the gaps between the events of an answer that has started, and
a request that has received nothing yet is timed by the endpoint, not by itself: it is
given up on when the endpoint has sent nothing to any of our requests for the idle timeout.
Its wait thus lasts as long as the answers ahead of it are being written, however many and
however long, while a server that stopped answering is still found within the idle timeout.

Not by a count of the requests ahead: the order in which requests reach the server is not
the order they were sent in (each opens its own connection), and how many slots a server
has is not said by the OpenAI API, so "its turn has come" cannot be told from the client.
"""

from __future__ import annotations

import asyncio
from typing import Any


class Pulse:
    """One endpoint's sign of life, shared by the requests one engine (or several engines of
    one build on the same base URL) sends there."""

    def __init__(self) -> None:
        self.heard_at = float("-inf")  # loop time of the last event from the endpoint


class Silence:
    """`async with Silence(pulse, idle_s) as watch:` around one request; `watch.heard()` on
    each event of its answer. Raises TimeoutError when the request has gone silent."""

    __slots__ = ("_pulse", "_idle", "_loop", "_task", "_handle", "_expired", "_cancelling", "_sent_at", "_own_at")

    def __init__(self, pulse: Pulse, idle_s: float):
        self._pulse = pulse
        self._idle = idle_s
        self._handle: asyncio.TimerHandle | None = None
        self._expired = False
        self._own_at: float | None = None

    def heard(self) -> None:
        """An event of this request's answer arrived: the answer has started."""
        self._own_at = self._pulse.heard_at = self._loop.time()

    def _quiet_since(self) -> float:
        if self._own_at is not None:  # answering: the gap since its last event
            return self._own_at
        # Waiting: the endpoint's silence. Only a byte is a sign of life; a request that ended
        # unanswered (timed out, refused) says nothing of whether the server still works.
        return max(self._sent_at, self._pulse.heard_at)

    def _check(self) -> None:
        due = self._quiet_since() + self._idle
        if self._loop.time() >= due:
            self._expired = True
            self._task.cancel()
        else:  # re-armed at most once per idle period: no timer work per event
            self._handle = self._loop.call_at(due, self._check)

    async def __aenter__(self) -> Silence:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        self._task = task
        self._cancelling = task.cancelling()
        self._sent_at = self._loop.time()
        self._handle = self._loop.call_at(self._sent_at + self._idle, self._check)
        return self

    async def __aexit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if self._handle is not None:
            self._handle.cancel()
        # As asyncio.timeout does: our own cancellation becomes a TimeoutError; anyone else's
        # (Ctrl-C, a cancelled build) stays a cancellation.
        if self._expired and exc_type is asyncio.CancelledError and self._task.uncancel() <= self._cancelling:
            raise TimeoutError("nothing from the endpoint for the idle timeout") from exc
