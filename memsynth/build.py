"""The build flow: personas → shards (Prefect tasks) → staged Parquet → one published version.

A shard is one Prefect task that runs a batch of personas through the recipe's whole
stage chain; the LLM calls inside it run concurrently on one shared event loop, so the
build's limits hold across all shards. Nothing is published unless every shard finished
and the share of failed items stays under `max_failure_rate`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import os
import secrets
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from prefect import flow, task, unmapped
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.runtime import flow_run
from prefect.settings import PREFECT_API_URL, temporary_settings
from prefect.task_runners import ThreadPoolTaskRunner

import memsynth
from memsynth.accounting import llm_totals
from memsynth.build_report import report_markdown
from memsynth.config import BuildConfig, redacted, resolve_warehouse
from memsynth.errors import BuildFailed, ConfigError, MemsynthError
from memsynth.integrity import cascade
from memsynth.interrupt import Interrupted, run_in_thread, stop_on_signals
from memsynth.llm.engine import LLMEngine
from memsynth.llm.loop import LoopThread
from memsynth.llm.session import cache_for, open_engine
from memsynth.persona_synthesis import synthesize_personas
from memsynth.personas import persona_pool
from memsynth.prefect_api import prefect_api_url
from memsynth.progress import BuildProgress
from memsynth.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.provenance import hashes, version_artifacts
from memsynth.recipe import PersonaContext, Recipe, ShardOutput, persona_rng
from memsynth.records import LLM_CALLS, STAGE_FAILURES
from memsynth.regenerate import RegenerationRequest, derive
from memsynth.stage import GenerationSettings, StageRunner
from memsynth.tables import Table
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.lock import BuildLock
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.staging import StagingArea, sweep_stale


def recipe_for(config: BuildConfig) -> Recipe:
    """The config's recipe, with its options (validated when the config was loaded)."""
    from flows.registry import recipe_class

    return recipe_class(config.recipe)(config.recipe_options)


@dataclass
class BuildOptions:
    """Command-line overrides of a config."""

    llm: Literal["simulator", "openai"] = "openai"
    personas: int | None = None
    concurrency: int | None = None
    warehouse: str | None = None
    no_cache: bool = False
    progress: bool = True
    simulator_latency_ms: float = 0.0
    regeneration: RegenerationRequest = field(default_factory=RegenerationRequest)


@dataclass
class BuildSession:
    """The live objects of one build, looked up by the shard tasks that share them."""

    build_id: str
    config: BuildConfig
    recipe: Recipe
    runner: StageRunner
    engine: LLMEngine
    loop: LoopThread
    staging: StagingArea
    personas: dict[str, Any]
    progress: BuildProgress
    tables: tuple[Table, ...]
    wanted: int = 0
    shard_size: int = 8
    synthesis: dict[str, int] = field(default_factory=dict)
    flow_run_id: str | None = None  # the Prefect run the build's report is attached to


_SESSIONS: dict[str, BuildSession] = {}


async def _run_personas(session: BuildSession, persona_ids: list[str]) -> ShardOutput:
    output = ShardOutput()
    contexts = [PersonaContext(persona=session.personas[pid], config=session.config,
                               runner=session.runner, output=output,
                               rng=persona_rng(session.config.seed, pid),
                               on_done=session.progress.persona_done)
                for pid in persona_ids]
    await session.recipe.run_shard(contexts)
    return output


def _stage_output(session: BuildSession, shard: str, output: ShardOutput) -> dict[str, Any]:
    """Make the shard whole (a dropped item's dependents leave too), write every table as
    Parquet, and return its tallies."""
    left = cascade(session.tables, output.rows)
    output.emit(STAGE_FAILURES, left)
    for table in session.tables:
        session.staging.write(table, shard, output.rows.get(table.name, []))
    calls = output.rows.get(LLM_CALLS.name, [])
    return {
        "rows": {t.name: len(output.rows.get(t.name, [])) for t in session.tables},
        "stage_stats": {k: dict(v) for k, v in output.stage_stats.items()},
        "check_stats": {k: dict(v) for k, v in output.check_stats.items()},
        "calls": len(calls),
        "cache_hits": sum(1 for c in calls if c.cache_hit),
        "integrity_drops": len(left),
        "problems": [p for f in output.rows.get(STAGE_FAILURES.name, [])[:5] for p in f.problems[:1]],
    }


def _expected_failures(fn: Any) -> Any:
    """Turn a MemsynthError inside a task into an {"error": ...} result.

    A build that stops for a reason the user can act on (endpoint unreachable, key
    refused, too few personas) is reported by run_build as one line, not as a Prefect
    task crash with a traceback.
    """
    import functools

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemsynthError as exc:
            return {"error": str(exc)}
        except concurrent.futures.CancelledError:  # the build is being stopped (a signal)
            return {"error": "cancelled"}
    return wrapper


@task(name="personas", cache_policy=NO_CACHE, persist_result=False)
@_expected_failures
def prepare_personas(build_id: str) -> tuple[list[str], dict[str, Any] | None]:
    """The build's persona ids, writing new personas first when the pool is short."""
    session = _SESSIONS[build_id]
    ids = list(session.personas)
    missing = session.wanted - len(ids)
    if missing <= 0:
        return _numbered(session, ids[: session.wanted]), None
    stage = session.recipe.persona_stage
    if stage is None:
        raise ConfigError(f"the build asks for {session.wanted} personas but only {len(ids)} are "
                          f"available, and recipe {session.recipe.name} cannot write new ones")
    output = ShardOutput()
    config = session.config
    rows, report = session.loop.run(synthesize_personas(
        session.runner, stage, missing, seed=config.seed, language=config.language,
        threshold=session.recipe.dedup_threshold, existing=list(session.personas.values()),
        attributes=session.recipe.persona_variables, output=output))
    session.synthesis = report.as_dict()
    if len(rows) < missing:
        raise BuildFailed(f"could write only {len(rows)} of {missing} distinct new personas "
                          f"({report.near_duplicates} near and {report.exact_duplicates} exact "
                          f"duplicates, {report.failed} failed); nothing was published")
    session.personas.update({r.persona_id: r for r in rows})
    session.progress.set_total(session.wanted)
    return _numbered(session, ids + [r.persona_id for r in rows]), _stage_output(session, "personas", output)


def _numbered(session: BuildSession, ids: list[str]) -> list[str]:
    """Give each of the build's personas its ordinal (its place in `ids`)."""
    for i, pid in enumerate(ids):
        session.personas[pid] = session.personas[pid].model_copy(update={"ordinal": i})
    return ids


@task(name="shard", cache_policy=NO_CACHE, persist_result=False, task_run_name="{label}")
@_expected_failures
def run_shard(build_id: str, index: int, persona_ids: list[str], label: str = "") -> dict[str, Any]:
    """Run one batch of personas through every stage and stage its rows as Parquet."""
    session = _SESSIONS[build_id]
    output = session.loop.run(_run_personas(session, persona_ids))
    return _stage_output(session, f"shard-{index:05d}", output)


@flow(name="memsynth-build", persist_result=False, log_prints=False)
def build_flow(build_id: str, dataset: str) -> list[dict[str, Any]]:
    """Settle the personas, then map their shards over the task runner and wait for all."""
    prepared = prepare_personas(build_id)
    if isinstance(prepared, dict):  # an expected failure, reported by run_build
        return [prepared]
    persona_ids, synthesis_stats = prepared
    session = _SESSIONS[build_id]
    session.flow_run_id = str(flow_run.id) if flow_run.id else None
    size = session.shard_size
    starts = list(range(0, len(persona_ids), size))
    # Named by the personas they hold (their ordinals), as the UI lists them.
    labels = [f"personas {i + 1}-{min(i + size, len(persona_ids))}" if min(i + size, len(persona_ids)) > i + 1
              else f"persona {i + 1}" for i in starts]
    futures = run_shard.map(unmapped(build_id), list(range(len(starts))),
                            [persona_ids[i:i + size] for i in starts], labels)
    shown = create_progress_artifact(0.0, description=f"shards of {dataset} finished")
    position = {id(f): i for i, f in enumerate(futures)}
    results: dict[int, dict[str, Any]] = {}
    for future in as_completed(futures):
        results[position[id(future)]] = future.result()
        update_progress_artifact(shown, 100.0 * len(results) / len(futures))
    return [results[i] for i in range(len(futures))] + ([synthesis_stats] if synthesis_stats else [])


def _merge_stats(shard_stats: list[dict[str, Any]]) -> dict[str, Any]:
    stages: dict[str, Counter[str]] = {}
    checks: dict[str, Counter[str]] = {}
    rows: Counter[str] = Counter()
    problems: list[str] = []
    for s in shard_stats:
        rows.update(s["rows"])
        problems += s["problems"]
        for stage, counts in s["stage_stats"].items():
            stages.setdefault(stage, Counter()).update(counts)
        for name, counts in s["check_stats"].items():
            checks.setdefault(name, Counter()).update(counts)
    return {
        "rows": dict(rows),
        "stages": {k: dict(v) for k, v in stages.items()},
        "checks": {k: {**v, "pass_rate": round(v["passed"] / v["total"], 4) if v["total"] else None}
                   for k, v in checks.items()},
        "calls": sum(s["calls"] for s in shard_stats),
        "cache_hits": sum(s["cache_hits"] for s in shard_stats),
        "integrity_drops": sum(s.get("integrity_drops", 0) for s in shard_stats),
        "problems": problems,
    }


def _failure_rate(stages: dict[str, dict[str, int]]) -> tuple[int, int]:
    items = sum(s.get("items", 0) for s in stages.values())
    failed = sum(s.get("dropped", 0) + s.get("flagged", 0) for s in stages.values())
    return failed, items


def run_build(config: BuildConfig, options: BuildOptions) -> dict[str, Any]:
    """Build `config` and publish it as the dataset's next version; returns the summary."""
    warehouse = resolve_warehouse(options.warehouse, config)
    with BuildLock(dataset_dir(warehouse, config.dataset), config.dataset):
        return _build(config, options, warehouse)


def _build(config: BuildConfig, options: BuildOptions, warehouse: Path) -> dict[str, Any]:
    started = time.time()
    if options.personas is not None:
        config.personas.count = options.personas
    if options.concurrency is not None:
        config.llm.concurrency = options.concurrency
    model = os.environ.get("MEMSYNTH_MODEL") or config.llm.model
    recipe = recipe_for(config)
    derivation = derive(warehouse, config.dataset, recipe, options.regeneration)
    if derivation.personas is not None and options.personas is None:
        config.personas.count = derivation.personas

    pool = recipe.source_personas(config, warehouse)
    if pool is None:
        pool = persona_pool(config, warehouse)
    chosen = pool[: config.personas.count]

    cache = cache_for(config, warehouse, read=not options.no_cache)
    engine, simulator, model = open_engine(config, options.llm, cache, latency_ms=options.simulator_latency_ms,
                                           model=model)
    prompts = PromptLibrary(DEFAULT_PROMPTS_DIR, *([recipe.prompts_dir] if recipe.prompts_dir else []))
    runner = StageRunner(engine, prompts, GenerationSettings(
        model=model, response_mode=config.llm.response_mode, temperature=config.llm.temperature,
        max_tokens=config.llm.max_tokens, repairs=config.llm.repairs, seed=config.llm.seed,
        stage_variables=config.llm.stage_variables or options.llm == "simulator",
        regenerate=derivation.regenerations))

    build_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"
    sweep_stale(dataset_dir(warehouse, config.dataset))
    staging = StagingArea(dataset_dir(warehouse, config.dataset), build_id)
    tables = (*recipe.output_tables(), LLM_CALLS, STAGE_FAILURES)
    loop = LoopThread()
    progress = BuildProgress(len(chosen), engine.counters, enabled=options.progress)
    session = BuildSession(build_id, config, recipe, runner, engine, loop, staging,
                           {p.persona_id: p for p in chosen}, progress, tables,
                           wanted=config.personas.count, shard_size=config.shard_size)
    _SESSIONS[build_id] = session
    try:
        api_url = prefect_api_url()
        run_flow = build_flow.with_options(
            task_runner=ThreadPoolTaskRunner(max_workers=config.max_workers),
            flow_run_name=f"{config.dataset}-{build_id}")
        with progress, stop_on_signals(loop.cancel_running) as stop, temporary_settings(
                updates={PREFECT_API_URL: api_url} if api_url else {}):
            shard_stats = run_in_thread(lambda: run_flow(build_id=build_id, dataset=config.dataset))
        loop.run(engine.aclose())
        if stop.name is not None:
            raise Interrupted(stop.name, stop.number)
        errors = [s["error"] for s in shard_stats if "error" in s]
        if errors:
            raise BuildFailed(f"{errors[0]}; nothing was published")
        stats = _merge_stats(shard_stats)
        failed, items = _failure_rate(stats["stages"])
        if items and failed / items > config.max_failure_rate:
            examples = "; ".join(stats["problems"][:3])
            raise BuildFailed(
                f"{failed} of {items} items failed ({failed / items:.0%}, limit "
                f"{config.max_failure_rate:.0%}); nothing was published. First problems: {examples}")
        totals = llm_totals(stats["calls"], stats["cache_hits"], engine.counters, config.llm.prices)
        artifacts = version_artifacts(recipe, prompts, config)
        info = VersionInfo(
            build_id=build_id, recipe=recipe.name,
            config=redacted(config.model_dump(mode="json")), config_hash=config.hash(),
            memsynth_version=memsynth.__version__,
            prompt_hashes=hashes(artifacts, "template"), schema_hashes=hashes(artifacts, "schema"),
            options_hash=hashes(artifacts, "options")[recipe.name], artifacts=artifacts,
            model=model, started_at=started, llm=totals,
            derivation=derivation.record, regenerations=derivation.regenerations)
        files = {t.name: staging.files(t.name) for t in tables}
        published = publish(warehouse, config.dataset, files, info, tables=tables)
        statistics = _statistics(recipe, warehouse, config.dataset, published["version"])
    finally:
        _SESSIONS.pop(build_id, None)
        staging.discard()
        with contextlib.suppress(Exception):  # a write error was reported where it happened
            loop.run(cache.drain())  # answers received before a failure or a signal stay cached
        loop.stop()
        cache.close()
        if simulator is not None:
            simulator.stop()
    summary = {
        "dataset": config.dataset,
        "warehouse": str(warehouse),
        "version": published["version"],
        "snapshot_id": published["snapshot_id"],
        "row_counts": published["row_counts"],
        "stages": stats["stages"],
        "failed_items": failed,
        "items": items,
        # Rows that left with an item they depend on (recorded in stage_failures as "integrity").
        "integrity_drops": stats["integrity_drops"],
        "llm": totals,
        "derivation": derivation.record,
        "model": model,
        "seconds": round(time.time() - started, 2),
        "checks": stats["checks"],
        "statistics": statistics,
        # The seed's published (or measured-on-its-release) figures, beside ours.
        "seed_figures": dict(recipe.seed_figures),
        "personas": len(session.personas),
        "persona_synthesis": session.synthesis or None,
        "shards": len(shard_stats),
    }
    with temporary_settings(updates={PREFECT_API_URL: api_url} if api_url else {}):
        _report(session, summary)
    return summary


def _report(session: BuildSession, summary: dict[str, Any]) -> None:
    """Leave the summary on the build's Prefect run as a Markdown artifact."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactCreate

    if session.flow_run_id is None:
        return
    try:
        with get_client(sync_client=True) as client:
            client.create_artifact(ArtifactCreate(
                key=f"memsynth-{summary['dataset']}".replace("_", "-"), type="markdown",
                description=f"{summary['dataset']} version {summary['version']}",
                data=report_markdown(summary), flow_run_id=session.flow_run_id))
    except Exception as exc:  # noqa: BLE001 - the version is published; the report is a view of it
        logging.getLogger("memsynth").warning("could not attach the build report to Prefect: %s", exc)


def _statistics(recipe: Recipe, warehouse: Path, dataset: str, version: int) -> dict[str, Any]:
    """The recipe's headline figures, computed with SQL over the version just published."""
    from memsynth.warehouse.catalog import run_query

    out: dict[str, Any] = {}
    for name, sql in recipe.statistics.items():
        value = run_query(warehouse, dataset, sql, version)[1][0][0]
        out[name] = round(value, 2) if isinstance(value, float) else value
    return out
