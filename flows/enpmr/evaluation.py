"""enpmr's evaluation tasks (seed 000 §5): memory retrieval and response generation.

retrieval: the query is the dialogue before the memory turn, the candidates the persona's
whole memory bank (its memory sessions); Recall, Precision and nDCG at k against the golden
memory, and TMR (the first memory's category can meet the need: Table 1), overall and per
need, for BM25, dense embeddings and Emotional RAG's four strategies.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from flows.enpmr.emotions import query_text, session_texts
from flows.enpmr.options import NEED_TARGETS, NEEDS
from memsynth.errors import MemsynthError
from memsynth.evaluation.emotional import EMOTIONS
from memsynth.evaluation.ranking import mean, ranking_scores, type_match
from memsynth.evaluation.retrievers import bm25_rank, embed_all, emotional_rank, semantic_distances
from memsynth.evaluation.run import EvalContext

EMOTIONAL = ("C-A", "C-M", "S-S", "S-E")
RETRIEVERS = ("bm25", "dense", *(f"emotional-{s}" for s in EMOTIONAL))


def fits_need(memory: Mapping[str, Any], need: str) -> bool:
    """The memory's category (and attributes) can meet the need, per the seed's Table 1."""
    attributes = memory["attributes"]
    attributes = json.loads(attributes) if isinstance(attributes, str) else attributes
    return any(kind.matches(memory["category"], attributes) for kind in NEED_TARGETS[need])


def retrieval(ctx: EvalContext) -> int:
    systems = ctx.options.systems or RETRIEVERS
    unknown = [s for s in systems if s not in RETRIEVERS]
    if unknown:
        raise MemsynthError(f"unknown retriever {unknown[0]!r} (known: {', '.join(RETRIEVERS)})")
    rows = ctx.read("memories", "memory_sessions", "benchmark", "emotions")
    memories = {m["memory_id"]: m for m in rows["memories"]}
    sessions = session_texts(rows["memory_sessions"])
    banks: dict[str, list[str]] = {}
    for mid, (pid, _) in sessions.items():
        if mid in memories:
            banks.setdefault(pid, []).append(mid)
    dialogues = ctx.limited(rows["benchmark"])
    if not dialogues:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no benchmark dialogues to score")
    emotions = {(e["item_kind"], e["item_id"]): [e[d] for d in EMOTIONS] for e in rows["emotions"]}
    wants_emotion = any(s.startswith("emotional-") for s in systems)
    if wants_emotion:
        missing = sum(1 for d in dialogues if ("query", d["dialogue_id"]) not in emotions)
        missing += sum(1 for mids in banks.values() for m in mids if ("memory", m) not in emotions)
        if missing:
            raise MemsynthError(f"{missing} memories and queries of version {ctx.version['version']} have no "
                                "emotion scores: run memsynth annotate emotions first (or build with "
                                "recipe_options.emotions: true)")
    vectors: dict[str, np.ndarray] = {}
    if wants_emotion or "dense" in systems:
        texts = [sessions[m][1] for mids in banks.values() for m in mids] + [query_text(d) for d in dialogues]
        vectors = ctx.session.run(embed_all(ctx.session.engine, ctx.options.embedding_model, texts))
    per: dict[str, list[dict[str, float]]] = {s: [] for s in systems}
    needs: list[str] = []
    for d in dialogues:
        bank = banks.get(d["persona_id"], [])
        query = query_text(d)
        needs.append(d["need"])
        for system in systems:
            order = _rank(system, query, d, bank, sessions, vectors, emotions, ctx)
            ranked = [bank[i] for i in order]
            scores = ranking_scores(ranked, {d["target_memory_id"]}, ctx.options.ks)
            scores["TMR"] = type_match(memories[ranked[0]] if ranked else None, d["need"], fits_need)
            per[system].append(scores)
    for system, results in per.items():
        for scope, chosen in [("all", range(len(results))),
                              *((f"need:{n}", [i for i, x in enumerate(needs) if x == n]) for n in NEEDS["en"])]:
            picked = [results[i] for i in chosen]
            if not picked:
                continue
            for metric in picked[0]:
                ctx.score(system, metric, mean([100 * p[metric] if metric != "TMR" else p[metric]
                                                for p in picked]), len(picked), scope)
    ctx.settings.update(embedding_model=ctx.options.embedding_model, metric=ctx.options.metric,
                        first_k=ctx.options.first_k, systems=list(systems))
    return len(dialogues)


def _rank(system: str, query: str, dialogue: Mapping[str, Any], bank: Sequence[str],
          sessions: Mapping[str, tuple[str, str]], vectors: Mapping[str, np.ndarray],
          emotions: Mapping[tuple[str, str], list[int]], ctx: EvalContext) -> list[int]:
    texts = [sessions[m][1] for m in bank]
    if system == "bm25":
        return bm25_rank(query, texts, ctx.language)
    if not bank:
        return []
    bank_vecs = np.stack([vectors[t] for t in texts])
    if system == "dense":
        return np.argsort(semantic_distances(vectors[query], bank_vecs, ctx.options.metric), kind="stable").tolist()
    return emotional_rank(system.removeprefix("emotional-"), vectors[query], bank_vecs,
                          emotions[("query", dialogue["dialogue_id"])],
                          np.array([emotions[("memory", m)] for m in bank], dtype=float),
                          metric=ctx.options.metric, first_k=ctx.options.first_k)


TASKS = {"retrieval": retrieval}
