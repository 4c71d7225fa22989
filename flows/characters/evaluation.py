"""characters' evaluation task: Emotional RAG's retrievers over a role's memory unit.

Role-playing data has no golden memory for a query; the seed scores retrieval only through
the personality of the replies (its Tables II–III). What can be scored from the data itself:
- own-scene Recall, Precision and nDCG at k: a fragment is relevant when it occurs in the
  query's own scene (the conversation the line is from);
- emotion distance at k: the mean cosine distance between the query's emotion vector and
  those of the first k fragments, the mood consistency Emotional RAG is built for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memsynth.core.errors import MemsynthError
from memsynth.quality.evaluation.ranking import mean, ranking_scores

if TYPE_CHECKING:  # running an evaluation needs the LLM session; declaring one does not
    from memsynth.quality.evaluation.run import EvalContext


def retrieval(ctx: EvalContext) -> int:
    """Rank each query's role's fragments with every retriever and score the rankings."""
    # Imported here, not at the top: a config check imports this module for its STAGES,
    # and should not pay for numpy (0.1 s).
    from memsynth.quality.evaluation.emotional import emotion_distance_at
    from memsynth.quality.evaluation.retrievers import chosen_retrievers, rank_bank, retrieval_inputs

    systems = chosen_retrievers(ctx.options.systems)
    rows = ctx.read("character_fragments", "character_queries", "emotions")
    fragments = {f["fragment_id"]: f for f in rows["character_fragments"]}
    banks: dict[str, list[str]] = {}
    for fid, f in fragments.items():
        banks.setdefault(f["persona_id"], []).append(fid)
    queries = ctx.limited(rows["character_queries"])
    if not queries:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no queries to score "
                            "(no scene ends with a line the role is to answer)")
    vectors, emotions = retrieval_inputs(ctx, systems, {f: fragments[f]["text"] for f in fragments},
                                         {q["query_id"]: q["query"] for q in queries}, rows["emotions"])
    k = max(ctx.options.ks)
    per: dict[str, list[dict[str, float | None]]] = {s: [] for s in systems}
    for q in queries:
        bank = banks.get(q["persona_id"], [])
        relevant = {f for f in bank if q["scene"] in fragments[f]["scenes"]}
        query_emotion = emotions.get(("query", q["query_id"]))
        for system in systems:
            order = rank_bank(system, q["query"], [fragments[f]["text"] for f in bank], language=ctx.language,
                              vectors=vectors, query_emotion=query_emotion,
                              bank_emotions=[emotions.get(("memory", f)) for f in bank],
                              metric=ctx.options.metric, first_k=ctx.options.first_k)
            ranked = [bank[i] for i in order]
            scores: dict[str, float | None] = {}
            if relevant:
                scores.update({m: 100 * v for m, v in ranking_scores(ranked, relevant, ctx.options.ks).items()})
            if query_emotion is not None:
                scores[f"emotion_distance@{k}"] = emotion_distance_at(
                    query_emotion, [emotions[("memory", f)] for f in ranked if ("memory", f) in emotions], k)
            per[system].append(scores)
    for system, results in per.items():
        for metric in dict.fromkeys(m for r in results for m in r):
            values = [r[metric] for r in results if r.get(metric) is not None]
            ctx.score(system, metric, mean(values), len(values))
    ctx.settings.update(embedding_model=ctx.options.embedding_model, metric=ctx.options.metric,
                        first_k=ctx.options.first_k, systems=list(systems), relevance="own scene")
    return len(queries)


TASKS = {"retrieval": retrieval}
