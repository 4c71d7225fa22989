"""The live objects a process runs shards with, built from a shard's plan (memsynth.build.plan).

A worker builds its own engine, cache handle and staging area from the plan (`runtime_for`)
and keeps them for the build's other shards in that process. The thread runner registers
the build's own runtime instead, so all its shards share one event loop, one client and one
set of limits.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memsynth.build.backoff import WORKER_ID, BackoffListener

# The plan and the counters' sums have modules of their own; the build still imports them from here.
from memsynth.build.plan import LimitShare as LimitShare
from memsynth.build.plan import ShardPlan
from memsynth.build.worker_counters import concurrency_report
from memsynth.build.worker_counters import merged_counters as merged_counters
from memsynth.core.config import BuildConfig
from memsynth.core.integrity import cascade
from memsynth.core.records import LLM_CALLS, PERSONAS, STAGE_FAILURES
from memsynth.core.tables import Table
from memsynth.generation.audit import AUDITS, Auditor
from memsynth.generation.emotion_scoring import annotate_shard
from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.generation.recipe import PersonaContext, Recipe, ShardOutput, persona_rng
from memsynth.generation.registry import audit_plan, audits
from memsynth.generation.session import engine_settings, generation_settings, open_routes, stage_alias
from memsynth.generation.stage import StageRunner
from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.loop import LoopThread
from memsynth.warehouse.staging import StagingArea


def complete_personas(recipe: Recipe, output: ShardOutput) -> set[str]:
    """The personas with a row in every benchmark table that names its persona."""
    asked = set(output.persona_items) | {r.persona_id for r in output.rows.get(PERSONAS.name, [])}
    for table in recipe.benchmark():
        if "persona_id" in table.row.model_fields:
            asked &= {r.persona_id for r in output.rows.get(table.name, [])}
    return asked


def recipe_for(config: BuildConfig) -> Recipe:
    """The config's recipe, with its options (validated when the config was loaded)."""
    from memsynth.generation.registry import recipe_class

    return recipe_class(config.recipe)(config.recipe_options)


def prompts_for(recipe: Recipe) -> PromptLibrary:
    return PromptLibrary(DEFAULT_PROMPTS_DIR, *([recipe.prompts_dir] if recipe.prompts_dir else []))


def build_tables(recipe: Recipe) -> tuple[Table, ...]:
    audits = (AUDITS,) if audit_plan(recipe.name) is not None else ()
    return (*recipe.output_tables(), *audits, LLM_CALLS, STAGE_FAILURES)


def auditor_for(recipe: Recipe, config: BuildConfig) -> Auditor | None:
    """The build's audit judges: the recipe's audit plan at the config's rate and seed."""
    return Auditor.for_recipe(audits(recipe.name), audit_plan(recipe.name), config.quality.audit_rate,
                              config.seed)


@dataclass
class ShardRuntime:
    """The live objects that run shards in one process: recipe, engine, loop, staging."""

    plan: ShardPlan
    recipe: Recipe
    runner: StageRunner
    engine: LLMEngine
    loop: LoopThread
    staging: StagingArea
    tables: tuple[Table, ...]
    auditor: Auditor | None = None
    on_persona_done: Callable[[], None] | None = None
    # Built here from a plan (a worker's): closed here too. The build's own is closed by it.
    owned: bool = False
    stopped: bool = False  # the build was stopped by a signal: run no more shards
    # Shards started before their task ran (`start_shards`): index -> (persona ids, its work).
    early: dict[int, tuple[tuple[str, ...], concurrent.futures.Future[ShardOutput]]] = field(default_factory=dict)
    early_personas: concurrent.futures.Future[Any] | None = None  # new personas being written (first_wave)
    waiting: dict[int, list[Any]] = field(default_factory=dict)  # shards not started: index -> personas
    at_once: int = 0  # shards whose calls run at the same time (the task runner's threads)
    _calling: int = 0  # shards whose calls are under way
    _writers: int = 0  # shards writing their Parquet (`_turn_to_write`)
    _write_turn: threading.Condition = field(default_factory=threading.Condition)
    _early_lock: threading.Lock = field(default_factory=threading.Lock)
    _listener: Any = None

    def start_shards(self, shards: list[list[Any]], at_once: int) -> None:
        """Start the first `at_once` shards' calls now, and the next one whenever a shard's
        calls end; each shard's task takes the work under way when a thread is free for it.

        A finished shard keeps its thread while it writes its Parquet (a second or more
        when shards end together): meanwhile the next shard's calls already go, instead
        of the endpoint idling until the thread is free."""
        with self._early_lock:
            self.waiting = dict(enumerate(shards))
            self.at_once = at_once
        self._start_waiting()

    def _start_waiting(self) -> None:
        # Fewer than `at_once` shards calling, and fewer than `at_once` started ones still
        # waiting for their task: outputs that finished early (a cached rebuild's do, fast)
        # are not piled up in memory while the tasks write theirs.
        while True:
            with self._early_lock:
                if (self.stopped or not self.waiting or self._calling >= self.at_once
                        or len(self.early) >= self.at_once):
                    return
                index = min(self.waiting)
                personas = self.waiting.pop(index)
                self._calling += 1
                future = self.loop.submit(self._calls(personas))
                self.early[index] = (tuple(p.persona_id for p in personas), future)
            if self.stopped:  # a signal between the check and the submit
                future.cancel()

    async def _calls(self, personas: list[Any]) -> ShardOutput:
        """A shard's calls; when they end (not when cancelled), the next waiting shard starts."""
        cancelled = False
        try:
            return await self.run_personas(personas)
        except asyncio.CancelledError:
            cancelled = True
            raise
        finally:
            with self._early_lock:
                self._calling -= 1
            with self._write_turn:  # the last calls ended: shards waiting to write may all go
                self._write_turn.notify_all()
            if not cancelled:
                self._start_waiting()

    def shard_output(self, index: int, personas: list[Any]) -> ShardOutput:
        """Run a shard's personas through every stage, or wait for the same shard started early."""
        with self._early_lock:
            started = self.early.pop(index, None)
            self.waiting.pop(index, None)  # its task runs it now: it is not started again
        if started is not None:
            self._start_waiting()  # one fewer started shard waits for its task
            ids, future = started
            if ids == tuple(p.persona_id for p in personas):
                return future.result()
            future.cancel()  # not this shard's personas after all: run them afresh
        with self._early_lock:
            self._calling += 1
        return self.loop.run(self._calls(personas))

    async def run_personas(self, personas: list[Any]) -> ShardOutput:
        output = ShardOutput()
        config = self.plan.config
        contexts = [PersonaContext(persona=p, config=config, runner=self.runner, output=output,
                                   rng=persona_rng(config.seed, p.persona_id), on_done=self.on_persona_done,
                                   auditor=self.auditor)
                    for p in personas]
        await self.recipe.run_shard(contexts, annotate=annotate_shard if self.recipe.annotates_emotions else None)
        return output

    def stage(self, shard: str, output: ShardOutput) -> dict[str, Any]:
        """Make the shard whole (a dropped item's dependents leave too), write every table
        as Parquet, and return its tallies."""
        with self._turn_to_write():
            left = cascade(self.tables, output.rows)
            output.emit(STAGE_FAILURES, left)
            for table in self.tables:
                self.staging.write(table, shard, output.rows.get(table.name, []))
        calls = output.rows.get(LLM_CALLS.name, [])
        return {
            "rows": {t.name: len(output.rows.get(t.name, [])) for t in self.tables},
            "stage_stats": {k: dict(v) for k, v in output.stage_stats.items()},
            "check_stats": {k: dict(v) for k, v in output.check_stats.items()},
            "largest_answer": dict(output.largest_answer),
            "budgets": dict(output.budgets),
            "calls": len(calls),
            "cache_hits": sum(1 for c in calls if c.cache_hit),
            "integrity_drops": len(left),
            # Items asked per persona, and the personas whose rows reach every benchmark table:
            # the build counts what a persona that lost its chain never got to ask.
            "persona_items": dict(output.persona_items),
            "complete": sorted(complete_personas(self.recipe, output)),
            "problems": [p for f in output.rows.get(STAGE_FAILURES.name, [])[:5] for p in f.problems[:1]],
            # This process's running totals: the build keeps each process's latest.
            "worker": {"id": WORKER_ID, "counters": asdict(self.engine.counters),
                       "backoffs": self.engine.limits.concurrency.backoffs,
                       "concurrency": concurrency_report(self.engine),
                       "heard": self._listener.heard if self._listener is not None else 0},
        }

    @contextlib.contextmanager
    def _turn_to_write(self) -> Iterator[None]:
        """While other shards' calls go, one shard at a time makes itself whole and writes.

        That work holds the GIL: when a wave of shards ended together and all wrote at
        once, the event loop's thread got a sliver of it, and answers waited unread for up
        to 0.7 s (`bench/build.py`, 200 personas). With no calls under way there is nothing
        to keep moving, and the last shards write together."""
        with self._write_turn:
            self._write_turn.wait_for(lambda: self._writers == 0 or self._calling == 0)
            self._writers += 1
        try:
            yield
        finally:
            with self._write_turn:
                self._writers -= 1
                self._write_turn.notify_all()

    def close(self) -> None:
        if self._listener is not None:
            self._listener.stop()
        try:
            self.loop.run(self.runner.aclose())
        finally:
            self.loop.stop()
            self.engine.cache.close()
            if self.owned and self.plan.location is not None and self.plan.mirror_cache:
                self.plan.location.push_cache(Path(self.plan.cache_dir))


_RUNTIMES: dict[str, ShardRuntime] = {}
_LOCK = threading.Lock()


def register(runtime: ShardRuntime) -> None:
    """Make the build's own runtime the one its shards use in this process."""
    with _LOCK:
        _RUNTIMES[runtime.plan.build_id] = runtime


def forget(build_id: str) -> None:
    with _LOCK:
        _RUNTIMES.pop(build_id, None)


def runtime_for(plan: ShardPlan) -> ShardRuntime:
    """This process's runtime for the plan's build: the registered one, or one built from
    the plan (a worker's first shard of the build; runtimes of earlier builds are closed)."""
    with _LOCK:
        runtime = _RUNTIMES.get(plan.build_id)
        if runtime is None:
            for old in [r for r in _RUNTIMES.values() if r.owned]:
                _RUNTIMES.pop(old.plan.build_id)
                old.close()
            runtime = _RUNTIMES[plan.build_id] = _build_runtime(plan)
        return runtime


def open_runtime(plan: ShardPlan, engine: LLMEngine, *, recipe: Recipe | None = None,
                 owned: bool = False) -> ShardRuntime:
    """A runtime on `engine` for the plan's recipe (the build's own instance, or a new one
    that has read its source as the build's did), staging and sampling settings."""
    if recipe is None:
        recipe = recipe_for(plan.config)
        recipe.source_personas(plan.config, Path(plan.warehouse))  # stratmem keeps its conversations
    share = plan.share
    routes = open_routes(plan.config, engine, endpoint=plan.endpoint, probe=not owned,
                         workers=share.workers if share else 1)
    runner = StageRunner(engine, prompts_for(recipe), generation_settings(
        plan.config, plan.model, simulated=plan.simulated, regenerate=plan.regenerations),
        routes, stage_alias(plan.config))
    return ShardRuntime(plan, recipe, runner, engine, LoopThread(),
                        StagingArea(Path(plan.dataset_dir), plan.build_id, plan.location), build_tables(recipe),
                        auditor_for(recipe, plan.config), owned=owned)


def _build_runtime(plan: ShardPlan) -> ShardRuntime:
    share = plan.share
    if plan.location is not None and plan.mirror_cache:
        plan.location.pull_cache(Path(plan.cache_dir))
    cache = ResponseCache(Path(plan.cache_dir), read=plan.cache_read, write=True)
    try:
        engine = LLMEngine(engine_settings(
            plan.config, plan.base_url, concurrency=share.concurrency if share else None,
            rpm=share.rpm if share else None, tpm=share.tpm if share else None,
            budget_usd=share.budget_usd if share else None), cache, api_key=plan.api_key)
        if not plan.simulated:  # the driver probed: its record gives this engine the model's context
            engine.learn_capabilities(plan.model, probe_formats=False)
    except BaseException:
        cache.close()
        raise
    runtime = open_runtime(plan, engine, owned=True)
    if share is not None and share.backoff_channel:
        runtime._listener = BackoffListener.start(share.backoff_channel, engine.limits.concurrency, runtime.loop)
    return runtime


def close_runtime(build_id: str) -> None:
    """Close this process's runtime of a finished build, if it built one."""
    with _LOCK:
        runtime = _RUNTIMES.get(build_id)
        if runtime is None or not runtime.owned:
            return
        del _RUNTIMES[build_id]
    runtime.close()


async def close_runtime_off_loop(build_id: str) -> None:
    """`close_runtime` for `Client.run`, on a thread of its own: Dask runs a plain function on
    the worker's event loop, which the runtime's back-off listener needs for its last poll.
    Closed on that loop, the listener waited out its 2 s join and then polled a channel the
    build had deleted, which the scheduler logs as an error after the build's summary."""
    await asyncio.to_thread(close_runtime, build_id)


@atexit.register
def _close_all() -> None:
    with _LOCK:
        owned = [r for r in _RUNTIMES.values() if r.owned]
        _RUNTIMES.clear()
    for runtime in owned:
        try:
            runtime.close()
        except Exception:  # noqa: BLE001, S110 - at exit; every answer was fsynced when it came
            pass
