"""Stopping a build on SIGINT or SIGTERM within seconds: every call in flight is cancelled,
every answer already received is kept in the cache, and nothing is published."""

from __future__ import annotations

import atexit
import contextlib
import contextvars
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

from memsynth.core.errors import BuildFailed

T = TypeVar("T")
# How long a stopped build waits for its flow to wind down: well under a second when its
# Prefect server is up.
STOP_GRACE_S = 5.0


class Interrupted(BuildFailed):
    """The build was stopped by a signal; the exit code says which (130 or 143)."""

    def __init__(self, name: str, number: int):
        super().__init__(f"stopped by {name}: every answer received so far is cached; "
                         "nothing was published. Run the same command again to resume")
        self.exit_code = 128 + number


@dataclass
class StopRequest:
    name: str | None = None
    number: int = 0


@contextmanager
def stop_on_signals(on_stop: Callable[[], None]) -> Iterator[StopRequest]:
    """While inside, the first SIGINT or SIGTERM calls `on_stop` and is recorded; a second
    one ends the process at once, with one line (`exit_at_once`). Once a signal came, that
    handler stays: the process is on its way out, and a second Ctrl-C while its threads end
    must not surface as 'Exception ignored … KeyboardInterrupt'."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request  # signals reach only the main thread; its owner handles them
        return
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in wanted}

    def handler(number: int, _frame: Any) -> None:
        if request.name is not None:
            exit_at_once(number)
        request.name, request.number = signal.Signals(number).name, number
        # What Prefect logs from here on is its flow failing to report a stop it did not ask
        # for (to a server that may be gone); the build's one line says what happened.
        logging.disable(logging.CRITICAL)
        on_stop()

    for s in wanted:
        signal.signal(s, handler)
    try:
        yield request
    finally:
        if request.name is None:
            for s, old in previous.items():
                signal.signal(s, old)


def exit_at_once(number: int) -> NoReturn:
    """A second signal: one line, then out with 128 + its number. The cache is an
    append-only log, so nothing received is lost; children die with this process (`tied`)."""
    name = signal.Signals(number).name
    with contextlib.suppress(Exception):
        from memsynth.build.prefect_api import stop_own_server

        stop_own_server()
    with contextlib.suppress(OSError):  # os.write: the handler may have interrupted a print
        os.write(2, f"error: stopped at once by a second {name}: every answer received so far is "
                    "cached; nothing was published\n".encode())
    os._exit(128 + number)


def raise_on_sigterm() -> None:
    """Until a build takes over its signals, SIGTERM stops the command as Ctrl-C does: one
    line and exit 143 (Python's default dies silently, skipping every cleanup)."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(number: int, _frame: Any) -> None:
    raise Interrupted(signal.Signals(number).name, number)


def leave(code: int) -> NoReturn:
    """Exit with `code` after a build was stopped, at once. Threads a stopped flow left
    behind (a Prefect call retrying a server that is gone) are not waited for; nor, with
    memsynth's own Prefect server, are Prefect's exit handlers, which send the flow's last
    events to that server (deleted with the build) and retry for seconds if it is gone."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    from memsynth.build.prefect_api import server_pid, stop_own_server

    if server_pid() is not None:
        with contextlib.suppress(Exception):
            stop_own_server()
    else:  # a server of the user's keeps the stopped flow's last events
        atexit._run_exitfuncs()
    os._exit(code)


def run_in_thread(fn: Callable[[], T], name: str = "memsynth-build", stopped: Callable[[], bool] = lambda: False,
                  grace_s: float = STOP_GRACE_S) -> T | None:
    """`fn()` on a worker thread, waited for here: the main thread stays free to handle
    signals (Prefect installs its own SIGTERM handler only when a flow runs on the main
    thread, and that one waits for every task to finish before acting).

    Once `stopped()`, its outcome no longer matters: None if it fails, or if it has not
    ended `grace_s` later (a flow whose API server is gone retries it for minutes)."""
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def target() -> None:
        try:
            outcome["value"] = context.run(fn)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    stop_seen: float | None = None
    while thread.is_alive():
        thread.join(0.2)
        if stop_seen is None and stopped():
            stop_seen = time.monotonic()
        if stop_seen is not None and time.monotonic() - stop_seen > grace_s:
            return None  # left behind: a daemon thread, and `leave` does not wait for others
    if "error" in outcome:
        if stopped():
            return None
        raise outcome["error"]
    return outcome["value"]
