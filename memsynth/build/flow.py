"""The build's Prefect flow: personas → shards (Prefect tasks) → staged Parquet.

A shard is one Prefect task that runs a batch of personas through the recipe's whole
stage chain. Its inputs are plain data (a `ShardPlan`, the personas): on the thread
runner every shard finds the build's own runtime, so their LLM calls share one event
loop and the build's limits; on Dask each worker process builds its own runtime from the
plan with its share of the limits (memsynth.build.cluster). `memsynth.build.run` runs the
flow and publishes what it staged.
"""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from prefect import flow, task, unmapped
from prefect.artifacts import create_progress_artifact, update_progress_artifact
from prefect.cache_policies import NO_CACHE
from prefect.futures import as_completed
from prefect.runtime import flow_run
from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY

from memsynth.build import first_wave
from memsynth.build.driver import BuildSession, find_session
from memsynth.build.shards import ShardPlan, runtime_for
from memsynth.core.errors import BuildFailed, ConfigError, MemsynthError


def _session(build_id: str) -> BuildSession:
    # A function, not the registry itself, in the flow's body: Prefect ships the flow to
    # Dask workers with its run context, and the flow's globals would go with it by value.
    return find_session(build_id)


def prefect_settings(api_url: str | None) -> dict[Any, Any]:
    """What the build's flow runs under: on memsynth's own server (`api_url`), no heartbeats.

    That server and its database end with the build, so nothing could act on a missed
    heartbeat; and stopping the heartbeat thread (it sleeps in whole seconds) held the
    flow's end up to a second. A server of the user's (`api_url` None) keeps them."""
    if api_url is None:
        # The user's server, as the environment names it now: Prefect read its settings when it
        # was imported, and a PREFECT_API_URL set after that (a program, or a test session,
        # that imports memsynth first) would leave the flow on an ephemeral server of Prefect's
        # own, started inside the build with a 20 s limit that a loaded machine can miss.
        users = os.environ.get("PREFECT_API_URL")
        return {PREFECT_API_URL: users} if users else {}
    return {PREFECT_API_URL: api_url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}


_derived: tuple[Any, str, Any] | None = None  # (the settings, the updates, them updated)


@contextmanager
def prefect_context(api_url: str | None) -> Iterator[None]:
    """Prefect's settings for the build's flow (`prefect_settings`) for the block's length:
    `temporary_settings`, without re-reading every settings source (profiles, pyproject,
    .env) each time, a tenth of a small build's CPU. Made once per base settings and URL."""
    global _derived
    updates = prefect_settings(api_url)
    if not updates:
        yield
        return
    from prefect.context import SettingsContext, get_settings_context

    context = get_settings_context()
    key = repr(sorted((str(k), v) for k, v in updates.items()))
    if _derived is None or _derived[0] is not context.settings or _derived[1] != key:
        _derived = (context.settings, key, context.settings.copy_with_update(updates=updates))
    with SettingsContext(profile=context.profile, settings=_derived[2]):
        yield


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
