"""One build, from its config to a published version: `run_build`.

The first shards' requests go before Prefect is imported (a second or more) or its server
answers (`first_wave`); then the build's Prefect flow (memsynth.build.flow) runs every
shard, and the staged rows are published as the dataset's next version with its statistics.
"""

from __future__ import annotations

import contextlib
import math
import os
import secrets
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

import memsynth
from memsynth.build import first_wave
from memsynth.build.carry import carry
from memsynth.build.cluster import dask_cluster, limit_share, task_runner
from memsynth.build.collector import collector_for_build
from memsynth.build.driver import BuildSession, close_session, open_session
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
)
from memsynth.core.config import BuildConfig, redacted
from memsynth.core.errors import BuildFailed
from memsynth.generation.personas import build_personas
from memsynth.generation.provenance import hashes, version_artifacts
from memsynth.generation.session import cache_dir_for, cache_for, open_engine
from memsynth.llm.accounting import llm_totals
from memsynth.simulator.endpoint import endpoint_for
from memsynth.warehouse.ducklake import dataset_dir
from memsynth.warehouse.location import location_of, resolve_warehouse
from memsynth.warehouse.lock import BuildLock
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.staging import sweep_stale

BATCH_SHARD_THREADS = 512


@dataclass
class BuildOptions:
    """Command-line overrides of a config."""

    llm: Literal["simulator", "openai"] = "openai"
    personas: int | None = None
    concurrency: int | None = None
    model: str | None = None  # overrides llm.model and $MEMSYNTH_MODEL (`--model`)
    warehouse: str | None = None
    catalog: str | None = None  # a postgres:// catalog database (overrides the config's)
    no_cache: bool = False
    progress: bool = True
    simulator_latency_ms: float = 0.0
    regeneration: RegenerationRequest = field(default_factory=RegenerationRequest)
    # Publish a version even when it equals the latest (memsynth.warehouse.unchanged).
    publish_unchanged: bool = False



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
    model = options.model or os.environ.get("MEMSYNTH_MODEL") or config.llm.model
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
    carried = carry(derivation.latest, recipe, config, model, config.dataset)
    if carried.carried:  # the config now scores what the last version had scored
        recipe = recipe_for(config)
    derivation.record.update(carried.record())
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
    open_session(session)
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
            # Imported only now, while the first wave's requests go: Prefect's import takes
            # a second or more.
            from prefect.task_runners import ThreadPoolTaskRunner

            from memsynth.build.flow import build_flow, prefect_context

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
            with prefect_context(api_url):
                if stop.name is None:  # else a signal came while Prefect's server started
                    shard_stats = run_in_thread(lambda: run_flow(build_id=build_id, dataset=config.dataset),
                                                stopped=lambda: stop.name is not None) or []
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
        published = publish(warehouse, config.dataset, files, info, tables=tables, statistics=recipe.statistics,
                            skip_unchanged=not options.publish_unchanged)
        statistics = {name: round(value, 2) if isinstance(value, float) else value
                      for name, value in published["statistics"].items()}
    except BaseException as exc:
        kept = keep_failed_run(exc, staging, warehouse, config, build_id, started, model, engine.counters)
        if kept and isinstance(exc, BuildFailed):  # its class (and exit code) kept, its line naming the run
            exc.args = (f"{exc} [run {build_id}: memsynth runs {config.dataset}]",)
        raise
    finally:
        loop.cancel_running()  # work started early whose flow never ran (its server failed)
        with contextlib.suppress(Exception):  # closed above unless the build failed first
            loop.run(runtime.runner.aclose())
        close_session(build_id)
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
        # Nothing changed: `version` is the latest, and nothing was published.
        "unchanged": published.get("unchanged", False),
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
        # What the last version had that this build carried, or did not and why (one line).
        "carried": carried.line(),
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
    with prefect_context(api_url):
        attach_report(session.flow_run_id, summary)
    return summary

