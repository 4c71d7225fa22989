"""The build flow: personas → shards (Prefect tasks) → staged Parquet → one published version.

A shard is one Prefect task that runs a batch of personas through the recipe's whole
stage chain. Its inputs are plain data (a `ShardPlan`, the personas): on the thread
runner every shard finds the build's own runtime, so their LLM calls share one event
loop and the build's limits; on Dask each worker process builds its own runtime from the
plan with its share of the limits (memsynth.build.cluster). Nothing is published unless every
shard finished and the share of failed items stays under `max_failure_rate`.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import math
import os
import secrets
import time
from dataclasses import asdict, dataclass, field, replace
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
from memsynth.build import first_wave
from memsynth.build.cluster import dask_cluster, limit_share, task_runner
from memsynth.build.collector import collector_for_build
from memsynth.build.driver import BuildSession
from memsynth.build.failed_runs import keep_failed_run
from memsynth.build.interrupt import Interrupted, run_in_thread, stop_on_signals
from memsynth.build.prefect_api import prefect_api_url
from memsynth.build.progress import BuildProgress
from memsynth.build.regenerate import RegenerationRequest, derive
from memsynth.build.report import attach_report
from memsynth.build.shard_stats import failure_rate, lost_downstream, merge_stats, refuse_hollow
from memsynth.build.shards import (
    ShardPlan,
    concurrency_report,
    forget,
    open_runtime,
    recipe_for,
    register,
    runtime_for,
)
from memsynth.core.config import BuildConfig, redacted
from memsynth.core.errors import BuildFailed, ConfigError, MemsynthError
from memsynth.generation.personas import build_personas
from memsynth.generation.provenance import hashes, version_artifacts
from memsynth.generation.recipe import Recipe
from memsynth.generation.session import cache_dir_for, cache_for, open_engine
from memsynth.llm.accounting import llm_totals
from memsynth.simulator.endpoint import endpoint_for
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.location import location_of, resolve_warehouse
from memsynth.warehouse.lock import BuildLock
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.staging import sweep_stale

# The most shard threads a batch-mode build runs at once (each only waits on the loop).
BATCH_SHARD_THREADS = 512


@dataclass
class BuildOptions:
    """Command-line overrides of a config."""

    llm: Literal["simulator", "openai"] = "openai"
    personas: int | None = None
    concurrency: int | None = None
    warehouse: str | None = None
    catalog: str | None = None  # a postgres:// catalog database (overrides the config's)
    no_cache: bool = False
    progress: bool = True
    simulator_latency_ms: float = 0.0
    regeneration: RegenerationRequest = field(default_factory=RegenerationRequest)


# Driver-side only: the flow (which always runs in the building process) finds its session
# here; its tasks get the plain-data plan and find or build their runtime from it.
_BUILDS: dict[str, BuildSession] = {}


def _session(build_id: str) -> BuildSession:
    # A function, not the dict itself, in the flow's body: Prefect ships the flow to Dask
    # workers with its run context, and the flow's globals would go with it by value.
    return _BUILDS[build_id]


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
def prepare_personas(plan: ShardPlan, pool: list[Any], wanted: int) -> dict[str, Any]:
    """The build's personas, numbered; new ones written first when the pool is short."""
    missing = wanted - len(pool)
    if missing <= 0:
        return {"personas": first_wave.numbered(pool[:wanted])}
    runtime = runtime_for(plan)
    if runtime.recipe.persona_stage is None:
        raise ConfigError(f"the build asks for {wanted} personas but only {len(pool)} are "
                          f"available, and recipe {runtime.recipe.name} cannot write new ones")
    written = first_wave.personas_written(runtime, pool, missing)
    report = written.report
    if len(written.rows) < missing:
        raise BuildFailed(f"could write only {len(written.rows)} of {missing} distinct new personas "
                          f"({report.near_duplicates} near and {report.exact_duplicates} exact "
                          f"duplicates, {report.failed} failed); nothing was published")
    return {"personas": first_wave.numbered(pool + written.rows), "synthesis": report.as_dict(),
            "staged": runtime.stage("personas", written.output)}


@task(name="shard", cache_policy=NO_CACHE, persist_result=False, task_run_name="{label}")
@_expected_failures
def run_shard(plan: ShardPlan, index: int, personas: list[Any], label: str = "") -> dict[str, Any]:
    """Run one batch of personas through every stage and stage its rows as Parquet."""
    runtime = runtime_for(plan)
    if runtime.stopped:  # queued before a signal stopped the build
        return {"error": "cancelled"}
    output = runtime.shard_output(index, personas)
    return runtime.stage(f"shard-{index:05d}", output)


@flow(name="memsynth-build", persist_result=False, log_prints=False)
def build_flow(build_id: str, dataset: str) -> list[dict[str, Any]]:
    """Settle the personas, then map their shards over the task runner and wait for all."""
    session = _session(build_id)
    plan = session.plan
    prepared = prepare_personas(plan, list(session.personas.values()), session.wanted)
    if "error" in prepared:  # an expected failure, reported by run_build
        return [prepared]
    personas = prepared["personas"]
    session.personas = {p.persona_id: p for p in personas}
    session.synthesis = prepared.get("synthesis") or {}
    synthesis_stats = prepared.get("staged")
    if synthesis_stats:
        session.task_done(synthesis_stats, 0)
    session.progress.set_total(len(personas))
    session.flow_run_id = str(flow_run.id) if flow_run.id else None
    size = session.shard_size
    batches = first_wave.shards(personas, size)
    # Named by the personas they hold (their ordinals), as the UI lists them.
    labels = [f"personas {i * size + 1}-{i * size + len(b)}" if len(b) > 1 else f"persona {i * size + 1}"
              for i, b in enumerate(batches)]
    futures = run_shard.map(unmapped(plan), list(range(len(batches))), batches, labels)
    shown = create_progress_artifact(0.0, description=f"shards of {dataset} finished")
    position = {id(f): i for i, f in enumerate(futures)}
    results: dict[int, dict[str, Any]] = {}
    session.futures = list(futures)
    for future in as_completed(futures):
        i = position[id(future)]
        try:
            results[i] = future.result()
        except concurrent.futures.CancelledError:  # never started: the build was stopped
            results[i] = {"error": "cancelled"}
        session.task_done(results[i], len(batches[i]))
        update_progress_artifact(shown, 100.0 * len(results) / len(futures))
    return [results[i] for i in range(len(futures))] + ([synthesis_stats] if synthesis_stats else [])


def run_build(config: BuildConfig, options: BuildOptions) -> dict[str, Any]:
    """Build `config` and publish it as the dataset's next version; returns the summary."""
    warehouse = resolve_warehouse(options.warehouse, config, catalog=options.catalog)
    with BuildLock(dataset_dir(warehouse, config.dataset), config.dataset), collector_for_build():
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
    floor_note = None
    if options.personas is None and (derivation.latest_personas or 0) > config.personas.count:
        # A dataset grown past its config keeps its personas: a plain or scheduled build
        # never quietly drops them. --personas N builds N.
        floor_note = (f"built {derivation.latest_personas} personas, as the last version has "
                      f"(the config says {config.personas.count}; --personas N builds N)")
        config.personas.count = derivation.latest_personas

    pool = build_personas(recipe, config, warehouse, config.personas.count)
    chosen = pool[: config.personas.count]

    location = location_of(warehouse)
    mirrored = location.shares_cache and not config.cache_dir  # the cache is the location's
    if mirrored:
        location.pull_cache(cache_dir_for(config, warehouse))
    cache = cache_for(config, warehouse, read=not options.no_cache)
    endpoint = endpoint_for(options.llm, options.simulator_latency_ms)  # the simulator, chosen here
    try:
        engine, model = open_engine(config, cache, endpoint=endpoint, model=model)
    except BaseException:
        cache.close()
        if endpoint is not None:
            endpoint.stop()
        raise
    build_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}-{secrets.token_hex(3)}"
    sweep_stale(dataset_dir(warehouse, config.dataset))
    plan = ShardPlan(build_id=build_id, config=config, warehouse=str(warehouse),
                     dataset_dir=str(dataset_dir(warehouse, config.dataset)),
                     cache_dir=str(cache.directory), cache_read=not options.no_cache,
                     base_url=engine.settings.base_url, model=model, simulated=endpoint is not None,
                     regenerations=derivation.regenerations, location=location, mirror_cache=mirrored)
    try:
        runtime = open_runtime(plan, engine, recipe=recipe)  # probes each model alias's endpoint
    except BaseException:
        cache.close()
        if endpoint is not None:
            endpoint.stop()
        raise
    prompts, staging, tables, loop = runtime.runner.prompts, runtime.staging, runtime.tables, runtime.loop
    progress = BuildProgress(len(chosen), engine.counters, enabled=options.progress)
    runtime.on_persona_done = progress.persona_done
    session = BuildSession(plan, runtime, {p.persona_id: p for p in chosen}, progress,
                           wanted=config.personas.count, shard_size=config.shard_size,
                           remote=config.runner == "dask")
    _BUILDS[build_id] = session
    register(runtime)
    # In batch mode every shard runs at once, so each batch holds all personas' requests at
    # one point of their chains rather than max_workers shards' worth.
    threads = min(BATCH_SHARD_THREADS, math.ceil(max(len(chosen), config.personas.count) / config.shard_size)
                  ) if config.llm.mode == "batch" else config.max_workers
    shard_stats: list[dict[str, Any]] = []
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(progress)
            stop = stack.enter_context(stop_on_signals(session.stop))  # from the first wave on
            if not session.remote:  # the first requests go while Prefect's server starts
                first_wave.start(runtime, list(session.personas.values()), session.wanted, session.shard_size, threads)
            api_url = prefect_api_url(stopped=lambda: stop.name is not None)
            if config.runner == "dask":
                cluster = stack.enter_context(dask_cluster(config))
                # Shards build their own runtime from the plan in their worker; the personas
                # task still runs here, on the build's own.
                session.plan = plan = replace(plan, share=limit_share(config, cluster.workers, build_id))
                cluster.open_channel(plan.share.backoff_channel)
                stack.callback(cluster.close_build, build_id, plan.share.backoff_channel)
                runner = task_runner(cluster)
            else:
                runner = ThreadPoolTaskRunner(max_workers=threads)
            run_flow = build_flow.with_options(task_runner=runner, flow_run_name=f"{config.dataset}-{build_id}")
            with temporary_settings(updates={PREFECT_API_URL: api_url} if api_url else {}):
                if stop.name is None:  # else a signal came while Prefect's server started
                    shard_stats = run_in_thread(lambda: run_flow(build_id=build_id, dataset=config.dataset))
        loop.run(runtime.runner.aclose())
        if stop.name is not None:
            raise Interrupted(stop.name, stop.number)
        errors = [s["error"] for s in shard_stats if "error" in s]
        if errors:
            raise BuildFailed(f"{errors[0]}; nothing was published")
        stats = merge_stats(shard_stats)
        examples = "; ".join(stats["problems"][:3]) or "none recorded"
        lost_personas, lost_items = lost_downstream(stats["persona_items"], stats["complete"])
        refuse_hollow(recipe, stats["rows"], lost_personas, len(session.personas), examples)
        failed, items = failure_rate(stats["stages"])
        # What a dropped item cost downstream counts too: items never asked for are lost.
        failed, items = failed + lost_items, items + lost_items
        if items and failed / items > config.max_failure_rate:
            downstream = (f", {lost_items} of them never asked by the {lost_personas} personas that lost "
                          "their chain" if lost_items else "")
            raise BuildFailed(
                f"{failed} of {items} items failed ({failed / items:.0%}, limit "
                f"{config.max_failure_rate:.0%}{downstream}); nothing was published. First problems: {examples}")
        totals = llm_totals(stats["calls"], stats["cache_hits"], engine.counters, config.llm.prices,
                            batch=config.llm.mode == "batch", free_models=(model,) if endpoint else ())
        # What `auto` settled on, the probe's small requests (0 once its answer is kept), and
        # whether llm.seed makes a sampled answer repeat (None: no seed, or not asked).
        totals.update(response_mode=config.llm.response_mode, probe_requests=engine.counters.probe_requests,
                      seed_honoured=engine.capabilities.seed_honoured if engine.capabilities else None)
        if config.llm.concurrency_auto:  # the ceiling found, and why (Dask: per worker, under "dask")
            totals["concurrency"] = concurrency_report(engine)
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
    except BaseException as exc:
        kept = keep_failed_run(exc, staging, warehouse, config, build_id, started, model, engine.counters)
        if kept and isinstance(exc, BuildFailed):  # its class (and exit code) kept, its line naming the run
            exc.args = (f"{exc} [run {build_id}: memsynth runs {config.dataset}]",)
        raise
    finally:
        loop.cancel_running()  # work started early whose flow never ran (its server failed)
        _BUILDS.pop(build_id, None)
        forget(build_id)
        staging.discard()
        with contextlib.suppress(Exception):  # a write error was reported where it happened
            loop.run(cache.drain())  # answers received before a failure or a signal stay cached
        loop.stop()
        cache.close()
        if mirrored:
            location.push_cache(cache.directory)  # this machine's new answers, for the next
        if endpoint is not None:
            endpoint.stop()
    summary = {
        "dataset": config.dataset,
        "warehouse": location.name,
        "version": published["version"],
        "snapshot_id": published["snapshot_id"],
        "row_counts": published["row_counts"],
        "stages": stats["stages"],
        "failed_items": failed,
        "items": items,
        # Of those, items never asked by personas whose chain a dropped item ended early.
        "lost_items": lost_items,
        "lost_personas": lost_personas,
        # Rows that left with an item they depend on (recorded in stage_failures as "integrity").
        "integrity_drops": stats["integrity_drops"],
        "llm": totals,
        "derivation": derivation.record,
        "personas_note": floor_note,
        "model": model,
        "seconds": round(time.time() - started, 2),
        "checks": stats["checks"],
        "statistics": statistics,
        # The seed's published (or measured-on-its-release) figures, beside ours.
        "seed_figures": dict(recipe.seed_figures),
        "personas": len(session.personas),
        "persona_synthesis": session.synthesis or None,
        "shards": len(shard_stats),
        "runner": config.runner,
        "dask": session.cluster_summary(),
        "batch": None if engine.batches is None else asdict(engine.batches.counters),
    }
    with temporary_settings(updates={PREFECT_API_URL: api_url} if api_url else {}):
        attach_report(session.flow_run_id, summary)
    return summary


def _statistics(recipe: Recipe, warehouse: Path, dataset: str, version: int) -> dict[str, Any]:
    """The recipe's headline figures, computed with SQL over the version just published."""
    from memsynth.warehouse.catalog import run_queries

    results, _ = run_queries(warehouse, dataset, list(recipe.statistics.values()), version)
    out: dict[str, Any] = {}
    for name, (_, rows) in zip(recipe.statistics, results):
        value = rows[0][0]
        out[name] = round(value, 2) if isinstance(value, float) else value
    return out
