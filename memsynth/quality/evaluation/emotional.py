"""Emotional RAG's retrieval (seed 001 §II-B): memories ranked by semantic distance,
emotion distance, or both.

Distances, smaller is closer: semantic is Euclidean (or cosine) between embeddings,
emotion is 1 − cosine similarity of the 8-dimension Plutchik vectors (Eq. 7). Strategies:
  C-A  semantic + emotion (Eq. 8, add)        C-M  semantic × emotion (multiply)
  S-S  the `first_k` semantically closest, re-ranked by emotion (semantic first)
  S-E  the `first_k` emotionally closest, re-ranked by semantics (emotion first)
plus `semantic` and `emotion` alone. The authors' code takes 20 in the first pass and keeps
10. Ties keep the memory bank's order (a stable sort), so a ranking is reproducible.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from memsynth.generation.emotions import EMOTIONS

STRATEGIES = ("semantic", "emotion", "C-A", "C-M", "S-S", "S-E")
FIRST_K = 20


def euclidean(query: Sequence[float], bank: np.ndarray) -> np.ndarray:
    """Euclidean distance from `query` to each row of `bank`."""
    return np.linalg.norm(np.asarray(bank, dtype=float) - np.asarray(query, dtype=float), axis=1)


def cosine_distance(query: Sequence[float], bank: np.ndarray) -> np.ndarray:
    """1 − cosine similarity between `query` and each row of `bank` (1 for a zero vector)."""
    q = np.asarray(query, dtype=float)
    b = np.asarray(bank, dtype=float)
    norms = np.linalg.norm(b, axis=1) * np.linalg.norm(q)
    dots = b @ q
    with np.errstate(invalid="ignore", divide="ignore"):
        similarity = np.where(norms > 0, dots / np.where(norms > 0, norms, 1.0), 0.0)
    return 1.0 - similarity


def _order(distances: np.ndarray) -> np.ndarray:
    return np.argsort(distances, kind="stable")


def rank(strategy: str, semantic: np.ndarray, emotion: np.ndarray, first_k: int = FIRST_K) -> list[int]:
    """Memory indices, closest first, from per-memory semantic and emotion distances.

    A sequential strategy returns only the `first_k` its first pass kept.
    """
    semantic = np.asarray(semantic, dtype=float)
    emotion = np.asarray(emotion, dtype=float)
    if semantic.shape != emotion.shape:
        raise ValueError("one semantic and one emotion distance per memory")
    if strategy == "semantic":
        return _order(semantic).tolist()
    if strategy == "emotion":
        return _order(emotion).tolist()
    if strategy == "C-A":
        return _order(semantic + emotion).tolist()
    if strategy == "C-M":
        return _order(semantic * emotion).tolist()
    if strategy in ("S-S", "S-E"):
        first, second = (semantic, emotion) if strategy == "S-S" else (emotion, semantic)
        kept = _order(first)[:first_k]
        return kept[_order(second[kept])].tolist()
    raise ValueError(f"unknown strategy {strategy!r} (one of {', '.join(STRATEGIES)})")


def emotion_vector(row: dict) -> list[float]:
    """The 8 intensities of an `emotions` row, in Plutchik's order."""
    return [float(row[e]) for e in EMOTIONS]


def emotion_distance_at(query_emotion: Sequence[float], ranked_emotions: Sequence[Sequence[float]],
                        k: int) -> float | None:
    """Mean emotion (cosine) distance from the query to the first k retrieved memories: how
    mood-consistent a retrieval is (lower: closer). None when nothing was retrieved."""
    top = np.asarray(ranked_emotions[:k], dtype=float)
    return float(cosine_distance(query_emotion, top).mean()) if len(top) else None
