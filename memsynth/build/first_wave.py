"""The build's first requests, sent while Prefect is imported and its server starts.

Importing Prefect takes a second or more, its API server seconds more to start on every
build (it is a new process each time), and no task runs before it answers. The personas to write and the shards the task runner
will run first are known before then, so they start at once on the build's event loop,
and each next shard starts as soon as one's calls end (`ShardRuntime.start_shards`); their
Prefect tasks, when they run, take the work under way (`ShardRuntime.shard_output`,
`personas_written`). Only for shards that run in this process: Dask workers build their
own runtime.
"""

from __future__ import annotations

import concurrent.futures
from dataclasses import dataclass
from typing import Any

from memsynth.build.shards import ShardRuntime
from memsynth.generation.persona_synthesis import SynthesisReport, synthesize_personas
from memsynth.generation.recipe import ShardOutput


@dataclass
class WrittenPersonas:
    """New personas written for a build whose pool was short."""

    rows: list[Any]
    report: SynthesisReport
    output: ShardOutput  # their calls, staged as the build's `personas` shard


def numbered(personas: list[Any]) -> list[Any]:
    """Each of the build's personas with its ordinal (its place in the build)."""
    return [p.model_copy(update={"ordinal": i}) for i, p in enumerate(personas)]


def shards(personas: list[Any], size: int) -> list[list[Any]]:
    """The build's personas cut into shards of `size`, in order."""
    return [personas[i:i + size] for i in range(0, len(personas), size)]


async def write_personas(runtime: ShardRuntime, pool: list[Any], missing: int) -> WrittenPersonas:
    """Write `missing` new personas, distinct from the pool's and from each other."""
    output = ShardOutput()
    config = runtime.plan.config
    stage = runtime.recipe.persona_stage
    assert stage is not None  # the caller checked the recipe can write personas
    rows, report = await synthesize_personas(
        runtime.runner, stage, missing, seed=config.seed, language=config.language,
        threshold=runtime.recipe.dedup_threshold, existing=pool,
        attributes=runtime.recipe.persona_variables, output=output)
    return WrittenPersonas(rows, report, output)


def start(runtime: ShardRuntime, pool: list[Any], wanted: int, shard_size: int, threads: int) -> None:
    """Start writing the missing personas, if any, then `threads` shards at a time after them."""
    missing = wanted - len(pool)
    if missing <= 0:
        _start_shards(runtime, numbered(pool[:wanted]), shard_size, threads)
    elif runtime.recipe.persona_stage is not None:
        runtime.early_personas = runtime.loop.submit(_write_then_start(runtime, pool, missing, shard_size, threads))


async def _write_then_start(runtime: ShardRuntime, pool: list[Any], missing: int, shard_size: int,
                            threads: int) -> WrittenPersonas:
    written = await write_personas(runtime, pool, missing)
    if len(written.rows) >= missing:  # else the personas task refuses the build
        _start_shards(runtime, numbered(pool + written.rows), shard_size, threads)
    return written


def _start_shards(runtime: ShardRuntime, personas: list[Any], shard_size: int, threads: int) -> None:
    runtime.start_shards(shards(personas, shard_size), threads)


def personas_written(runtime: ShardRuntime, pool: list[Any], missing: int) -> WrittenPersonas:
    """The missing personas: those started early, or written now."""
    started: concurrent.futures.Future[WrittenPersonas] | None = runtime.early_personas
    runtime.early_personas = None
    if started is not None:
        return started.result()
    return runtime.loop.run(write_personas(runtime, pool, missing))

