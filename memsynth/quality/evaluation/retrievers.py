"""Retrievers that rank a memory bank for a query: BM25 (bm25s, jieba words for zh),
dense embeddings from the endpoint, and Emotional RAG over embeddings and emotion vectors."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from memsynth.core.errors import MemsynthError
from memsynth.llm.request import EmbeddingRequest
from memsynth.quality.evaluation.emotional import EMOTIONS, cosine_distance, euclidean, rank
from memsynth.quality.evaluation.text import tokens

if TYPE_CHECKING:  # the engine (openai) is needed by an evaluation, not by listing a recipe's stages
    from memsynth.llm.engine import LLMEngine
    from memsynth.quality.evaluation.run import EvalContext

EMOTIONAL = ("C-A", "C-M", "S-S", "S-E")
RETRIEVERS = ("bm25", "dense", *(f"emotional-{s}" for s in EMOTIONAL))


def chosen_retrievers(systems: Sequence[str]) -> tuple[str, ...]:
    """The `--systems` asked for (all of RETRIEVERS when none), refusing an unknown one."""
    unknown = [s for s in systems if s not in RETRIEVERS]
    if unknown:
        raise MemsynthError(f"unknown retriever {unknown[0]!r} (known: {', '.join(RETRIEVERS)})")
    return tuple(systems) or RETRIEVERS


def retrieval_inputs(ctx: EvalContext, systems: Sequence[str], memories: Mapping[str, str],
                     queries: Mapping[str, str], emotion_rows: Sequence[Mapping[str, Any]]
                     ) -> tuple[dict[str, np.ndarray], dict[tuple[str, str], list[int]]]:
    """What the chosen retrievers need besides the texts (`memories` and `queries`: id → text):
    each text's embedding, and the emotion vectors by (kind, id); refuses an emotional
    retriever when some item has no emotion scores."""
    emotions = {(e["item_kind"], e["item_id"]): [e[d] for d in EMOTIONS] for e in emotion_rows}
    wants_emotion = any(s.startswith("emotional-") for s in systems)
    if wants_emotion:
        missing = sum(1 for q in queries if ("query", q) not in emotions)
        missing += sum(1 for m in memories if ("memory", m) not in emotions)
        if missing:
            raise MemsynthError(f"{missing} memories and queries of version {ctx.version['version']} have no "
                                "emotion scores: run memsynth annotate emotions first (or build with "
                                "recipe_options.emotions: true)")
    vectors: dict[str, np.ndarray] = {}
    if wants_emotion or "dense" in systems:
        texts = [*memories.values(), *queries.values()]
        vectors = ctx.session.run(embed_all(ctx.session.engine, ctx.options.embedding_model, texts))
    return vectors, emotions


def rank_bank(system: str, query: str, bank: Sequence[str], *, language: str,
              vectors: Mapping[str, np.ndarray], query_emotion: Sequence[float] | None = None,
              bank_emotions: Sequence[Sequence[float]] = (), metric: str = "euclidean",
              first_k: int = 20) -> list[int]:
    """Indices of the bank's texts, best first, by one of RETRIEVERS (`vectors`: each text's
    embedding; the emotion vectors are needed by the emotional ones only)."""
    if system == "bm25":
        return bm25_rank(query, bank, language)
    if not bank:
        return []
    bank_vecs = np.stack([vectors[t] for t in bank])
    if system == "dense":
        return np.argsort(semantic_distances(vectors[query], bank_vecs, metric), kind="stable").tolist()
    return emotional_rank(system.removeprefix("emotional-"), vectors[query], bank_vecs, query_emotion,
                          np.asarray(bank_emotions, dtype=float), metric=metric, first_k=first_k)


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
    """Emotional RAG's ranking (see memsynth.quality.evaluation.emotional)."""
    if len(bank_vecs) == 0:
        return []
    return rank(strategy, semantic_distances(query_vec, bank_vecs, metric),
                cosine_distance(query_emotion, bank_emotions), first_k)
