"""What a recipe is, and the context its per-persona code runs in."""

from __future__ import annotations

import abc
import asyncio
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel

from memsynth.core.config import BuildConfig
from memsynth.core.records import (
    LLM_CALLS,
    PERSONAS,
    REJECTED_ANSWER_CHARS,
    STAGE_FAILURES,
    LLMCallRow,
    PersonaRow,
    StageFailureRow,
)
from memsynth.core.tables import Table, trusted_row
from memsynth.generation.audit import Auditor, item_name, run_audit
from memsynth.generation.offers import Figure, ReviewTask
from memsynth.generation.rules import Rule
from memsynth.generation.stage import ItemResult, Stage, StageRunner

if TYPE_CHECKING:
    from memsynth.generation.emotions import EmotionSource


class Recipe(abc.ABC):
    """A dataset recipe: everything the build asks of one, with the default of each hook.

    A recipe sets `name`, `options_model`, `stages` and `tables` and writes `generate`;
    the rest is optional. The build finds it by name through `memsynth/generation/registry.py` (entry points), and
    calls nothing that is not declared here.
    """

    name: ClassVar[str]
    # `recipe_options` of a config: validated when the config loads, published and hashed
    # with every default filled in. Give each field a `Field(description=...)`.
    options_model: ClassVar[type[BaseModel]]
    # Every stage the recipe may run, in chain order (`memsynth recipes` lists them so).
    stages: ClassVar[tuple[Stage, ...]]
    # The recipe's tables; the build adds the engine's `llm_calls` and `stage_failures`.
    tables: ClassVar[tuple[Table, ...]]
    # The tables the benchmark is made of: a build that would leave any with fewer than
    # `min_benchmark_rows` rows publishes nothing, and a persona with no row in one of them
    # (those with a persona_id) lost its chain. Empty: every table but personas.
    benchmark_tables: ClassVar[tuple[Table, ...]] = ()
    min_benchmark_rows: ClassVar[int] = 1
    # Headline figures: name → SQL over the published version, one value each.
    statistics: ClassVar[Mapping[str, str]] = {}
    # The seed's own value of those figures, printed beside this build's.
    seed_figures: ClassVar[Mapping[str, float]] = {}
    # The stage that writes a new persona when the pool is short; None: the recipe cannot.
    persona_stage: ClassVar[Stage | None] = None
    # True: the chain writes each persona's profile from scratch (pal), so a persona is only a
    # numbered place and a short pool is topped up with numbered slots.
    persona_slots: ClassVar[bool] = False
    # The folder holding `<name>/<stage>.j2`; None: the project's prompts/.
    prompts_dir: ClassVar[Path | None] = None
    # What emotion annotation scores (memsynth.generation.emotions); None: the recipe cannot be annotated.
    emotion_source: ClassVar[EmotionSource | None] = None
    # False: the recipe's versions come only from `memsynth import` (a config cannot build it).
    buildable: ClassVar[bool] = True
    # The LLM's own labels that annotators judge again (`memsynth agreement` compares them):
    # SQL over the recipe's tables giving (item_id, criterion, value) rows. None: none.
    judge_labels: ClassVar[str | None] = None
    # `memsynth report` (and the release card): the recipe's own figures, and SQL giving
    # (persona_id, text) rows of what the model wrote, for the diversity section ...
    report_figures: ClassVar[tuple[Figure, ...]] = ()
    report_texts: ClassVar[str | None] = None
    # ... and SQL giving (persona_id, attribute, value) rows: how evenly personas cover each.
    report_personas: ClassVar[str | None] = None
    # `memsynth review`: what annotators can judge (the first is the default task).
    review_tasks: ClassVar[tuple[ReviewTask, ...]] = ()
    # The seed's rules, each with what enforces it (a check, a judge criterion, or why the
    # prompt alone must): `memsynth recipes NAME` lists them.
    rules: ClassVar[tuple[Rule, ...]] = ()

    def __init__(self, options: BaseModel | Mapping[str, Any] | None = None):
        if isinstance(options, self.options_model):
            self.options = options
        else:
            self.options = self.options_model.model_validate(dict(options or {}))

    @property
    def dedup_threshold(self) -> float:
        """MinHash Jaccard similarity above which a written persona is a near duplicate."""
        return 0.7

    def persona_variables(self, rng: random.Random, language: str = "en") -> dict[str, Any]:
        """The persona stage's variables for one new persona, drawn from `rng`."""
        return {}

    @property
    def annotates_emotions(self) -> bool:
        """`recipe_options.emotions` is on: the build scores memories and queries."""
        return self.emotion_source is not None and bool(getattr(self.options, "emotions", False))

    def output_tables(self) -> tuple[Table, ...]:
        """The tables a build of these options writes (the recipe's, and `emotions` when on)."""
        from memsynth.generation.emotions import emotions_table

        source = self.emotion_source
        return (*self.tables, *((emotions_table(source.refs),) if source and self.annotates_emotions else ()))

    def source_personas(self, config: BuildConfig, warehouse: Path) -> list[PersonaRow] | None:
        """The recipe's own personas, read from its source (stratmem: one per source
        conversation), in a stable order; None (the default): the build's persona pool."""
        return None

    async def prepare_shard(self, contexts: Sequence[PersonaContext]) -> None:
        """Work shared by a shard's personas, before their chains (pal writes profiles in
        batches here); what a chain needs is left in `ctx.prepared`. Default: nothing."""
        return None

    @abc.abstractmethod
    async def generate(self, ctx: PersonaContext) -> None:
        """Run the stage chain for `ctx.persona`, emitting rows into `ctx`."""

    async def run_shard(self, contexts: Sequence[PersonaContext],
                        annotate: Callable[[Recipe, Sequence[PersonaContext]], Awaitable[None]] | None = None) -> None:
        """What the build calls for a shard: `prepare_shard`, then every persona's chain
        concurrently, each reported done as it ends; with `annotate` (the build's emotion
        scoring, when the options ask for it), the shard's rows are scored before the personas
        are done. Not meant to be overridden."""
        await self.prepare_shard(contexts)

        async def one(ctx: PersonaContext) -> None:
            try:
                await self.generate(ctx)
            except Exception:
                # Left alone, the audits' own failure (the same budget or full disk) would be
                # logged as a never-retrieved task exception; waited for, what they paid for
                # is cached.
                await ctx.settle_audits()
                raise
            except BaseException:
                await ctx.settle_audits(cancel=True)
                raise
            await ctx.audits_done()
            if annotate is None:
                ctx.done()

        await asyncio.gather(*(one(ctx) for ctx in contexts))
        if annotate is not None and contexts:
            await annotate(self, contexts)
            for ctx in contexts:
                ctx.done()

    @classmethod
    def describe(cls) -> dict[str, Any]:
        """The recipe as data: its stages in chain order, tables and options with defaults."""
        return {
            "name": cls.name,
            "description": " ".join((cls.__doc__ or "").split()),
            "stages": [{"name": s.name, "template": s.template, "schema": s.schema_name,
                        "checks": [c.name for c in s.checks], "policy": s.policy,
                        "judge": s.judge.stage.name if s.judge else None,
                        "writes_personas": s is cls.persona_stage} for s in cls.all_stages()],
            "tables": [{"name": t.name, "columns": list(t.row.model_fields)}
                       for t in (*cls.tables, LLM_CALLS, STAGE_FAILURES)],
            "rules": [r.to_json() for r in cls.rules],
            "options": [{"name": name, "type": _type_name(f.annotation),
                         "default": cls.options_model().model_dump(mode="json")[name],
                         "description": f.description or ""}
                        for name, f in cls.options_model.model_fields.items()],
        }

    def benchmark(self) -> tuple[Table, ...]:
        """The benchmark tables of a build with these options: `benchmark_tables`, or every
        table of the recipe's but personas. A recipe whose options can leave one empty by
        request overrides this."""
        return self.benchmark_tables or tuple(t for t in self.tables if t.name != PERSONAS.name)

    @classmethod
    def all_stages(cls) -> tuple[Stage, ...]:
        """`stages`, plus the persona stage if it is not among them."""
        extra = (cls.persona_stage,) if cls.persona_stage and cls.persona_stage not in cls.stages else ()
        return (*cls.stages, *extra)


@dataclass
class ShardOutput:
    """Everything one shard produced: table rows, per-stage tallies."""

    rows: dict[str, list[BaseModel]] = field(default_factory=dict)
    stage_stats: dict[str, Counter[str]] = field(default_factory=dict)
    check_stats: dict[str, Counter[str]] = field(default_factory=dict)
    persona_items: Counter[str] = field(default_factory=Counter)  # items asked, per persona
    # stage -> the most completion tokens one of its calls took (cached ones too): what its
    # answers need, beside the budget they were sent with.
    largest_answer: dict[str, int] = field(default_factory=dict)
    budgets: dict[str, int | None] = field(default_factory=dict)  # stage -> its budget

    def tally_check(self, name: str, passed: bool) -> None:
        """Count one verdict of a quality check (for pass rates in the summary)."""
        stats = self.check_stats.setdefault(name, Counter())
        stats["total"] += 1
        stats["passed"] += int(passed)

    def emit(self, table: Table, rows: Iterable[BaseModel]) -> None:
        self.rows.setdefault(table.name, []).extend(rows)

    def record(self, result: ItemResult) -> None:
        """Tally an item (and its judge's items) and keep its calls and, if it failed, why."""
        for review in result.reviews:
            self.record(review)
        stats = self.stage_stats.setdefault(result.stage, Counter())
        stats["items"] += 1
        if result.persona_id:
            self.persona_items[result.persona_id] += 1
        stats[result.status] += 1
        self.budgets[result.stage] = result.budget
        for c in result.calls:
            if c.get("outcome") == "runaway":
                stats["runaways"] += 1
            tokens = c.get("completion_tokens") or 0
            if tokens > self.largest_answer.get(result.stage, -1):
                self.largest_answer[result.stage] = tokens
        # Trusted: these rows are assembled by the runner, not read from outside.
        self.emit(LLM_CALLS, [trusted_row(LLMCallRow, {**c, "started_at": datetime.fromtimestamp(
            c["started_at"], UTC)}) for c in result.calls])
        if result.status in ("dropped", "flagged"):
            self.emit(STAGE_FAILURES, [StageFailureRow(
                stage=result.stage, item_key=result.item_key, persona_id=result.persona_id,
                action=result.status, problems=result.problems,
                rejected_answer=(result.rejected_answer or None) and result.rejected_answer[:REJECTED_ANSWER_CHARS])])

    def merge(self, other: ShardOutput) -> None:
        for name, rows in other.rows.items():
            self.rows.setdefault(name, []).extend(rows)
        for stage, stats in other.stage_stats.items():
            self.stage_stats.setdefault(stage, Counter()).update(stats)
        for name, stats in other.check_stats.items():
            self.check_stats.setdefault(name, Counter()).update(stats)
        self.persona_items.update(other.persona_items)
        for stage, tokens in other.largest_answer.items():
            self.largest_answer[stage] = max(tokens, self.largest_answer.get(stage, 0))
        self.budgets.update(other.budgets)


@dataclass
class PersonaContext:
    """The handle a recipe's per-persona code uses: run stages, emit rows."""

    persona: PersonaRow
    config: BuildConfig
    runner: StageRunner
    output: ShardOutput
    rng: random.Random
    on_done: Callable[[], None] | None = None
    # What the recipe's `prepare_shard` left for this persona's chain (pal: its profile).
    prepared: Any = None
    # The build's audit judges (memsynth.generation.audit); None: nothing is audited.
    auditor: Auditor | None = None
    _audits: list[asyncio.Future[None]] = field(default_factory=list)

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
        variables = {**self.common_variables(), **variables}
        result = await self.runner.run(stage, variables, item_key=item_key, persona_id=self.persona.persona_id,
                                       sample=sample)
        self.output.record(result)
        audit = self.auditor.wants(stage, item_name(item_key, sample)) if self.auditor and result.usable else None
        if audit is not None:  # beside the chain, which goes on: `audits_done` waits for it
            self._audits.append(asyncio.ensure_future(run_audit(
                self.runner, self.output, audit, stage, variables, result.output, item_name(item_key, sample),
                self.persona.persona_id, gold=stage.name in self.auditor.gold)))  # type: ignore[union-attr]
        return result

    async def audits_done(self) -> None:
        """Wait for the audits this persona's chain started; the first failure is raised once
        all have settled, so none is left with an exception nobody retrieves."""
        while self._audits:
            pending, self._audits = self._audits, []
            for outcome in await asyncio.gather(*pending, return_exceptions=True):
                if isinstance(outcome, BaseException):
                    await self.settle_audits()
                    raise outcome

    async def settle_audits(self, cancel: bool = False) -> None:
        """Wait until the audits still running have ended, whatever their outcome (`cancel`:
        cancel them first)."""
        while self._audits:
            pending, self._audits = self._audits, []
            for future in pending if cancel else ():
                future.cancel()
            await asyncio.gather(*pending, return_exceptions=True)

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


def _type_name(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def persona_rng(seed: int, persona_id: str, purpose: str = "") -> random.Random:
    """A generator that depends only on the build seed, the persona and the purpose."""
    return random.Random(f"{seed}:{persona_id}:{purpose}")
