"""What a build's shards report, added up for its summary, its failure limit and the
refusal of a version without its benchmark rows."""

from __future__ import annotations

from collections import Counter
from typing import Any

from memsynth.core.errors import BuildFailed
from memsynth.generation.recipe import Recipe


def merge_stats(shard_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """The build's rows, stage and check counts, calls and problems, summed over its shards."""
    stages: dict[str, Counter[str]] = {}
    checks: dict[str, Counter[str]] = {}
    rows: Counter[str] = Counter()
    persona_items: Counter[str] = Counter()
    complete: set[str] = set()
    problems: list[str] = []
    largest: dict[str, int] = {}
    budgets: dict[str, int | None] = {}
    for s in shard_stats:
        budgets.update(s.get("budgets", {}))
        for stage, tokens in s.get("largest_answer", {}).items():
            largest[stage] = max(tokens, largest.get(stage, 0))
        rows.update(s["rows"])
        persona_items.update(s.get("persona_items", {}))
        complete.update(s.get("complete", ()))
        problems += s["problems"]
        for stage, counts in s["stage_stats"].items():
            stages.setdefault(stage, Counter()).update(counts)
        for name, counts in s["check_stats"].items():
            checks.setdefault(name, Counter()).update(counts)
    return {
        "rows": dict(rows),
        # Each stage's counts, its budget (None: sent the build's limit), the largest answer
        # one of its calls took and the answers stopped as runaways.
        "stages": {k: {**v, "runaways": v.get("runaways", 0), "budget": budgets.get(k),
                       "largest_answer": largest.get(k, 0)} for k, v in stages.items()},
        "checks": {k: {**v, "pass_rate": round(v["passed"] / v["total"], 4) if v["total"] else None}
                   for k, v in checks.items()},
        "calls": sum(s["calls"] for s in shard_stats),
        "cache_hits": sum(s["cache_hits"] for s in shard_stats),
        "integrity_drops": sum(s.get("integrity_drops", 0) for s in shard_stats),
        "problems": problems,
        "persona_items": dict(persona_items),
        "complete": complete,
    }


def failure_rate(stages: dict[str, dict[str, int]]) -> tuple[int, int]:
    """(failed, all) items over the stages: dropped and flagged items count as failed."""
    items = sum(s.get("items", 0) for s in stages.values())
    failed = sum(s.get("dropped", 0) + s.get("flagged", 0) for s in stages.values())
    return failed, items


def lost_downstream(persona_items: dict[str, int], complete: set[str]) -> tuple[int, int]:
    """(personas that lost their chain, items they never asked): a persona that reached no
    benchmark row would have asked as many items as a complete one does on average (or as
    the furthest one got, when none completed)."""
    lost = {p: n for p, n in persona_items.items() if p not in complete}
    if not lost:
        return 0, 0
    done = [persona_items[p] for p in complete if p in persona_items]
    expected = sum(done) / len(done) if done else max(persona_items.values())
    return len(lost), round(sum(max(0.0, expected - n) for n in lost.values()))


def refuse_hollow(recipe: Recipe, rows: dict[str, int], lost_personas: int, personas: int,
                  examples: str) -> None:
    """A version without its benchmark rows is not published, whatever the failure limit."""
    short = [t.name for t in recipe.benchmark() if rows.get(t.name, 0) < recipe.min_benchmark_rows]
    if short:
        raise BuildFailed(
            f"the build made fewer than {recipe.min_benchmark_rows} rows of {', '.join(short)} "
            f"({lost_personas} of {personas} personas lost their chain); nothing was published. "
            f"First problems: {examples}")
