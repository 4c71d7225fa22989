"""`memsynth build CONFIG --estimate`: calls, tokens and cost before spending anything.

A dry run builds a few of the config's personas on the built-in simulator (no endpoint is
called, nothing is published where the config points), and its `llm_calls` per stage are
scaled to the whole build. The simulator's prompts are the real rendered prompts, so
prompt tokens are close to an endpoint's count; its answers are stand-ins, so completion
tokens are the rougher half of the figure.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from memsynth.core.config import BuildConfig, Price
from memsynth.warehouse.location import resolve_warehouse

DRY_PERSONAS = 4


def stage_models(config: BuildConfig, recipe: Any) -> dict[str, str]:
    """Qualified stage name -> the model llm.stages gives it (stages it names no alias for
    are left out: they use `default`)."""
    from memsynth.generation.emotions import SCORE

    stages = [*recipe.all_stages(), SCORE]
    stages += [s.judge.stage for s in stages if s.judge is not None]
    out = {}
    for stage in stages:
        alias = config.llm.alias_for(stage.recipe, stage.name, stage.kind)
        if alias is not None:
            out[stage.qualified_name] = config.llm.models[alias].model
    return out


def estimate_build(config: BuildConfig, *, personas: int | None = None, warehouse: str | None = None,
                   model: str | None = None, progress: bool = False) -> dict[str, Any]:
    """Per-stage calls and tokens for `config`'s build, and its cost online and in batch."""
    import os

    from memsynth.build.run import BuildOptions, run_build
    from memsynth.build.shards import recipe_for
    from memsynth.generation.personas import build_personas
    from memsynth.warehouse.catalog import run_query

    wanted = personas or config.personas.count
    root = resolve_warehouse(warehouse, config)
    recipe = recipe_for(config)
    pool = build_personas(recipe, config, root, wanted)  # refuses what the build would refuse
    dry = min(wanted, len(pool), DRY_PERSONAS) or 1
    dry_config = config.model_copy(deep=True)
    dry_config.personas.count = dry
    dry_config.cache_dir = None
    dry_config.llm.mode = "online"  # the same calls and tokens, without waiting on batches
    with tempfile.TemporaryDirectory(prefix="memsynth-estimate-") as scratch:
        # The dry run's bar (on a terminal) is the estimate's: it takes a minute or more.
        summary = run_build(dry_config, BuildOptions(llm="simulator", warehouse=scratch, progress=progress))
        _, rows, _ = run_query(Path(scratch), config.dataset,
                               "SELECT stage, count(*), sum(prompt_tokens), sum(completion_tokens), "
                               "sum(cached_prompt_tokens) FROM llm_calls GROUP BY stage ORDER BY min(started_at)")
    scale = wanted / dry
    model = model or os.environ.get("MEMSYNTH_MODEL") or config.llm.model
    model_of = stage_models(config, recipe)
    stages = [{"stage": stage, "model": model_of.get(stage, model), "calls": round(calls * scale),
               "prompt_tokens": round(prompt * scale), "completion_tokens": round(completion * scale),
               "cached_prompt_tokens": round(cached * scale)}
              for stage, calls, prompt, completion, cached in rows]
    prompt = sum(s["prompt_tokens"] for s in stages)
    completion = sum(s["completion_tokens"] for s in stages)
    cached = sum(s["cached_prompt_tokens"] for s in stages)
    # Each stage at its own model's price (llm.stages); unpriced if any of them has none.
    prices: list[Price | None] = [config.llm.prices.get(s["model"]) for s in stages]
    priced = all(p is not None for p in prices)

    def cost(batch: bool) -> float:
        return round(sum(p.cost(s["prompt_tokens"], s["completion_tokens"], s["cached_prompt_tokens"], batch=batch)
                         for s, p in zip(stages, prices) if p is not None), 2)

    return {
        "dataset": config.dataset, "personas": wanted, "dry_run_personas": dry,
        # A build with fewer personas available than asked writes the rest first: those
        # calls (one or a few per persona) are not in the figures.
        "personas_to_write": max(0, wanted - len(pool)),
        "stages": stages, "calls": sum(s["calls"] for s in stages),
        "prompt_tokens": prompt, "completion_tokens": completion, "model": model,
        "models": sorted({s["model"] for s in stages}),
        # Of the prompt tokens, those a provider's prompt cache would serve (prompts of over
        # 1,024 tokens sharing a prefix with an earlier one, as the simulator models it).
        "cached_prompt_tokens": cached,
        "cost_usd": {"online": cost(False), "batch": cost(True)} if priced else None,
        "dry_run_seconds": summary["seconds"],
    }
