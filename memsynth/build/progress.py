"""The live build display: personas done, calls done / in flight / cached / failed, tokens, ETA."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from memsynth.llm.settings import EngineCounters


class BuildProgress:
    """Polls the engine's counters a few times a second; silent when disabled."""

    def __init__(self, total_personas: int, counters: EngineCounters, *, enabled: bool = True,
                 console: Console | None = None, unit: str = "personas"):
        self.counters = counters
        console = console or Console(stderr=True)
        # A live bar only makes sense on a terminal; logs and CI get the summary alone.
        self.enabled = enabled and console.is_terminal
        self._done = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._progress = Progress(
            SpinnerColumn(), TextColumn(f"[bold]{unit}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
            TextColumn("{task.fields[calls]}"),
            console=console, transient=False, auto_refresh=True,
        )
        self._task = self._progress.add_task("build", total=total_personas, calls="")
        self._poller = threading.Thread(target=self._poll, name="memsynth-progress", daemon=True)

    def __enter__(self) -> BuildProgress:
        if self.enabled:
            self._progress.start()
            self._poller.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.enabled:
            self._stop.set()
            self._poller.join(2)
            self._refresh()
            self._progress.stop()

    def set_total(self, total: int) -> None:
        self._progress.update(self._task, total=total)

    def persona_done(self) -> None:
        with self._lock:
            self._done += 1

    def _poll(self) -> None:
        while not self._stop.wait(0.25):
            self._refresh()

    def _refresh(self) -> None:
        c = self.counters
        calls = (f"calls {c.done} · in flight {c.in_flight} · cached {c.cached} · "
                 f"failed {c.failed} · retries {c.retries} · "
                 f"tokens {c.prompt_tokens + c.completion_tokens:,}")
        self._progress.update(self._task, completed=self._done, calls=calls)
