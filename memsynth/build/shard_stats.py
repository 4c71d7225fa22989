"""What a build's shards report, added up for its summary and its failure limit."""

from __future__ import annotations

from collections import Counter
from typing import Any


def merge_stats(shard_stats: list[dict[str, Any]]) -> dict[str, Any]:
    """The build's rows, stage and check counts, calls and problems, summed over its shards."""
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


def failure_rate(stages: dict[str, dict[str, int]]) -> tuple[int, int]:
    """(failed, all) items over the stages: dropped and flagged items count as failed."""
    items = sum(s.get("items", 0) for s in stages.values())
    failed = sum(s.get("dropped", 0) + s.get("flagged", 0) for s in stages.values())
    return failed, items
