"""LLM usage totals and estimated cost for a build summary and its `versions` row."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from memsynth.core.config import Price
from memsynth.llm.settings import EngineCounters


def estimated_cost(by_model: dict[str, list[int]], prices: dict[str, Price], *, batch: bool = False) -> float:
    """US dollars for the tokens actually sent upstream, by the config's price table (its
    batch prices for a build in batch mode)."""
    total = 0.0
    for model, (prompt, completion, *cached) in by_model.items():
        price = prices.get(model)
        if price is not None:
            total += price.cost(prompt, completion, sum(cached), batch=batch)
    return round(total, 6)


def llm_totals(calls: int, cache_hits: int, counters: EngineCounters,
               prices: dict[str, Price], *, batch: bool = False, free_models: Collection[str] = ()) -> dict[str, Any]:
    """Totals over the build's stage calls plus what the engine sent upstream; `free_models`
    (the simulator's) cost nothing and need no price."""
    return {
        "calls": calls,
        "cache_hits": cache_hits,
        "requests": counters.requests,
        "retries": counters.retries,
        "abandoned": counters.abandoned,  # given up on after a timeout, their connection closed
        "prompt_tokens": counters.prompt_tokens,
        "completion_tokens": counters.completion_tokens,
        "cached_prompt_tokens": counters.cached_prompt_tokens,
        "estimated_cost_usd": estimated_cost(counters.by_model, prices, batch=batch),
        "priced": all(m in prices or m in free_models for m in counters.by_model),
    }
