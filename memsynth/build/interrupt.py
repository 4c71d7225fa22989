"""Stopping a build on SIGINT or SIGTERM within seconds: every call in flight is cancelled,
every answer already received is kept in the cache, and nothing is published."""

from __future__ import annotations

import contextvars
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from memsynth.core.errors import BuildFailed

T = TypeVar("T")


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
    one acts as it would have (a second Ctrl-C ends the process at once)."""
    request = StopRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request  # signals reach only the main thread; its owner handles them
        return
    wanted = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in wanted}

    def restore() -> None:
        for s, handler in previous.items():
            signal.signal(s, handler)

    def handler(number: int, _frame: Any) -> None:
        request.name, request.number = signal.Signals(number).name, number
        restore()
        on_stop()

    for s in wanted:
        signal.signal(s, handler)
    try:
        yield request
    finally:
        restore()


def run_in_thread(fn: Callable[[], T], name: str = "memsynth-build") -> T:
    """`fn()` on a worker thread, waited for here: the main thread stays free to handle
    signals (Prefect installs its own SIGTERM handler only when a flow runs on the main
    thread, and that one waits for every task to finish before acting)."""
    outcome: dict[str, Any] = {}
    context = contextvars.copy_context()

    def target() -> None:
        try:
            outcome["value"] = context.run(fn)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    while thread.is_alive():
        thread.join(0.2)
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]
