"""Ranking metrics for memory retrieval (ENPMR-Bench §5.1, Table 2): Recall, Precision and
nDCG at k against the golden memories, and the memory type match rate (TMR)."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Sequence
from typing import Any


def recall_at(ranked: Sequence[Any], relevant: Collection[Any], k: int) -> float:
    """Share of the relevant items found in the first `k`; 0 when nothing is relevant."""
    if not relevant:
        return 0.0
    return len(set(ranked[:k]) & set(relevant)) / len(relevant)


def precision_at(ranked: Sequence[Any], relevant: Collection[Any], k: int) -> float:
    """Relevant items in the first `k`, over `k` (a pool shorter than k still divides by k,
    as Table 2's P@10 = R@10 / 10 shows for one golden memory)."""
    return len(set(ranked[:k]) & set(relevant)) / k


def ndcg_at(ranked: Sequence[Any], relevant: Collection[Any], k: int) -> float:
    """Binary-relevance nDCG@k: Σ 1/log2(rank+1) over relevant hits, over the ideal."""
    if not relevant:
        return 0.0
    wanted = set(relevant)
    dcg = sum(1.0 / math.log2(i + 2) for i, item in enumerate(ranked[:k]) if item in wanted)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(k, len(wanted))))
    return dcg / ideal


def ranking_scores(ranked: Sequence[Any], relevant: Collection[Any], ks: Sequence[int]) -> dict[str, float]:
    """`recall@k`, `precision@k` and `ndcg@k` for every k."""
    out: dict[str, float] = {}
    for k in ks:
        out[f"recall@{k}"] = recall_at(ranked, relevant, k)
        out[f"precision@{k}"] = precision_at(ranked, relevant, k)
        out[f"ndcg@{k}"] = ndcg_at(ranked, relevant, k)
    return out


def type_match(top1: Any | None, need: str, fits: Callable[[Any, str], bool]) -> float:
    """1 when the first-ranked memory's type can meet the need (the seed's Table 1), else 0;
    averaged over queries this is TMR. An empty ranking matches nothing."""
    return 0.0 if top1 is None else float(fits(top1, need))


def mean(values: Sequence[float]) -> float | None:
    """The arithmetic mean; None for no values (a metric that applies to nothing)."""
    return sum(values) / len(values) if values else None
