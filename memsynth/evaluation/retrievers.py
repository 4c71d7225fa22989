"""Retrievers that rank a memory bank for a query: BM25 (bm25s, jieba words for zh),
dense embeddings from the endpoint, and Emotional RAG over embeddings and emotion vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np

from memsynth.evaluation.emotional import cosine_distance, euclidean, rank
from memsynth.evaluation.text import tokens
from memsynth.llm.engine import LLMEngine
from memsynth.llm.request import EmbeddingRequest


def bm25_rank(query: str, documents: Sequence[str], language: str) -> list[int]:
    """Document indices by BM25 score, best first (ties in bank order)."""
    import bm25s

    if not documents:
        return []
    corpus = [tokens(d, language) or ["∅"] for d in documents]
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    words = tokens(query, language)
    scores = retriever.get_scores(words) if words else np.zeros(len(documents))
    return np.argsort(-np.asarray(scores, dtype=float), kind="stable").tolist()


async def embed_all(engine: LLMEngine, model: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
    """text → its embedding, each distinct text asked once (and cached by the engine)."""
    distinct = list(dict.fromkeys(texts))
    vectors = await asyncio.gather(*(engine.embed(EmbeddingRequest(model, t), stage="eval.embed")
                                     for t in distinct))
    return {t: np.asarray(v, dtype=float) for t, v in zip(distinct, vectors)}


def semantic_distances(query: np.ndarray, bank: np.ndarray, metric: str) -> np.ndarray:
    """Euclidean (the seed's default) or cosine distance from the query to each memory."""
    if len(bank) == 0:
        return np.zeros(0)
    return euclidean(query, bank) if metric == "euclidean" else cosine_distance(query, bank)


def emotional_rank(strategy: str, query_vec: np.ndarray, bank_vecs: np.ndarray, query_emotion: Sequence[float],
                   bank_emotions: np.ndarray, *, metric: str = "euclidean", first_k: int = 20) -> list[int]:
    """Emotional RAG's ranking (see memsynth.evaluation.emotional)."""
    if len(bank_vecs) == 0:
        return []
    return rank(strategy, semantic_distances(query_vec, bank_vecs, metric),
                cosine_distance(query_emotion, bank_emotions), first_k)
