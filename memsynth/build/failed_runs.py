"""A build that publishes nothing leaves its run behind: what it staged, and how it ended."""

from __future__ import annotations

import contextlib
import time
from datetime import UTC, datetime
from pathlib import Path

from memsynth.core.config import BuildConfig, redacted
from memsynth.core.secrets import mask
from memsynth.llm.settings import EngineCounters
from memsynth.warehouse.runs import keep_run
from memsynth.warehouse.staging import StagingArea


def keep_failed_run(exc: BaseException, staging: StagingArea, warehouse: Path, config: BuildConfig,
                    build_id: str, started: float, model: str, counters: EngineCounters) -> bool:
    """Keep the run of a build stopped by `exc`; False when even that fails (a full disk):
    the build's own error is what the user must see."""
    record = {
        "dataset": config.dataset, "recipe": config.recipe, "config_hash": config.hash(), "model": model,
        "started_at": datetime.fromtimestamp(started, UTC).isoformat(),
        "ended_at": datetime.now(UTC).isoformat(), "seconds": round(time.time() - started, 2),
        # A base URL in the error keeps no user:password (the run outlives the terminal).
        "error": mask(redacted(str(exc).splitlines()[0])) if str(exc) else type(exc).__name__,
        "personas": config.personas.count,
        "llm": {"requests": counters.requests, "done": counters.done, "cached": counters.cached,
                "failed": counters.failed, "prompt_tokens": counters.prompt_tokens,
                "completion_tokens": counters.completion_tokens},
    }
    with contextlib.suppress(Exception):
        keep_run(staging, warehouse, config.dataset, build_id, record)
        return True
    return False
