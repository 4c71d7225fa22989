"""What each process's engine has counted, summed for the build, and the ceiling its
`llm.concurrency: auto` settled on."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from memsynth.llm.engine import LLMEngine
from memsynth.llm.limits import AutoConcurrency
from memsynth.llm.settings import EngineCounters


def merged_counters(snapshots: dict[str, dict[str, Any]], *, into: EngineCounters) -> None:
    """Set `into` to the sum of each process's latest counters (in place: displays hold it)."""
    total = EngineCounters()
    for snap in snapshots.values():
        for name, value in snap.items():
            if name == "by_model":
                for model, tokens in value.items():
                    mine = total.by_model.setdefault(model, [0, 0, 0])
                    for i, n in enumerate(tokens):
                        mine[i] += n
            elif name != "in_flight":
                setattr(total, name, getattr(total, name) + value)
    for name, value in asdict(total).items():
        if name != "in_flight":
            setattr(into, name, value)


def concurrency_report(engine: LLMEngine) -> dict[str, Any] | None:
    """With `llm.concurrency: auto`, the ceiling the engine settled on and why (else None)."""
    limit = engine.limits.concurrency
    return limit.report() if isinstance(limit, AutoConcurrency) else None
