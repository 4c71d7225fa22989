"""What a recipe is, and the context its per-persona code runs in."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from pydantic import BaseModel

from memsynth.config import BuildConfig
from memsynth.stage import ItemResult, Stage, StageRunner
from memsynth.tables import Table
from schemas.records import LLM_CALLS, STAGE_FAILURES, LLMCallRow, PersonaRow, StageFailureRow


class Recipe(Protocol):
    """A dataset recipe: its stages, its tables, and the stage chain for one persona."""

    name: str
    stages: tuple[Stage, ...]
    tables: tuple[Table, ...]

    async def generate(self, ctx: PersonaContext) -> None:
        """Run every stage for `ctx.persona`, emitting rows into `ctx`."""
        ...


@dataclass
class ShardOutput:
    """Everything one shard produced: table rows, per-stage tallies."""

    rows: dict[str, list[BaseModel]] = field(default_factory=dict)
    stage_stats: dict[str, Counter[str]] = field(default_factory=dict)
    check_stats: dict[str, Counter[str]] = field(default_factory=dict)

    def tally_check(self, name: str, passed: bool) -> None:
        """Count one verdict of a quality check (for pass rates in the summary)."""
        stats = self.check_stats.setdefault(name, Counter())
        stats["total"] += 1
        stats["passed"] += int(passed)

    def emit(self, table: Table, rows: Iterable[BaseModel]) -> None:
        self.rows.setdefault(table.name, []).extend(rows)

    def record(self, result: ItemResult) -> None:
        """Tally an item and keep its calls and, if it failed, why."""
        stats = self.stage_stats.setdefault(result.stage, Counter())
        stats["items"] += 1
        stats[result.status] += 1
        # model_construct: these rows are assembled by the runner, not read from outside.
        self.emit(LLM_CALLS, [LLMCallRow.model_construct(**{**c, "started_at": datetime.fromtimestamp(
            c["started_at"], UTC)}) for c in result.calls])
        if result.status in ("dropped", "flagged"):
            self.emit(STAGE_FAILURES, [StageFailureRow(
                stage=result.stage, item_key=result.item_key, persona_id=result.persona_id,
                action=result.status, problems=result.problems)])

    def merge(self, other: ShardOutput) -> None:
        for name, rows in other.rows.items():
            self.rows.setdefault(name, []).extend(rows)
        for stage, stats in other.stage_stats.items():
            self.stage_stats.setdefault(stage, Counter()).update(stats)
        for name, stats in other.check_stats.items():
            self.check_stats.setdefault(name, Counter()).update(stats)


@dataclass
class PersonaContext:
    """The handle a recipe's per-persona code uses: run stages, emit rows."""

    persona: PersonaRow
    config: BuildConfig
    runner: StageRunner
    output: ShardOutput
    rng: random.Random
    on_done: Callable[[], None] | None = None

    def done(self) -> None:
        """Tell the build this persona's chain has finished (for progress)."""
        if self.on_done is not None:
            self.on_done()

    @property
    def language(self) -> str:
        return self.config.language

    def emit(self, table: Table, rows: Iterable[BaseModel]) -> None:
        self.output.emit(table, rows)

    async def run(self, stage: Stage, variables: Mapping[str, Any], item_key: str,
                  sample: int = 0) -> ItemResult:
        """Run one item of `stage` with the build-wide variables added.

        `sample` > 0 asks for another answer to the same prompt (a new cache key).
        """
        result = await self.runner.run(stage, {**self.common_variables(), **variables},
                                       item_key=item_key, persona_id=self.persona.persona_id,
                                       sample=sample)
        self.output.record(result)
        return result

    async def run_many(self, stage: Stage, items: Iterable[tuple[str, Mapping[str, Any]]]
                       ) -> list[ItemResult]:
        """Fan out: run (item_key, variables) items of `stage` concurrently, results in order."""
        return list(await asyncio.gather(*(self.run(stage, v, k) for k, v in items)))

    def derived_rng(self, purpose: str) -> random.Random:
        """A generator for one purpose of this persona, independent of call order."""
        return persona_rng(self.config.seed, self.persona.persona_id, purpose)

    def common_variables(self) -> dict[str, Any]:
        return {"language": self.config.language,
                "reference_date": self.config.reference_date.isoformat()}


def persona_rng(seed: int, persona_id: str, purpose: str = "") -> random.Random:
    """A generator that depends only on the build seed, the persona and the purpose."""
    return random.Random(f"{seed}:{persona_id}:{purpose}")
