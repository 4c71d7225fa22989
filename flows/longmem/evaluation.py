"""`memsynth eval longmem`: the model under test reads each question's whole haystack (the
full-context system) and answers it at the question's date; a judge grades the answer with the
criterion of its type (LongMemEval's per-type facts, our own prompts: off-by-one days pass for
temporal questions, an update answer may recall the old value beside the new one, a preference
answer is graded on a rubric, an abstention passes when it says the history does not tell).
BM25 over the haystack gives session and turn recall@k against the evidence."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from flows.longmem.options import TYPES
from flows.longmem.plan import released_turns
from memsynth.core.errors import MemsynthError
from memsynth.generation.stage import Stage
from memsynth.quality.evaluation.ranking import mean
from memsynth.quality.evaluation.retrievers import bm25_rank
from schemas.longmem import Reply, Verdict

if TYPE_CHECKING:
    from memsynth.quality.evaluation.run import EvalContext

RESPOND = Stage("longmem", "eval_respond", Reply, policy="drop", temperature=0.0)
JUDGE = Stage("longmem", "eval_judge", Verdict, policy="drop", temperature=0.0, kind="judge")
STAGES = (RESPOND, JUDGE)


def recall_any(ranked: list[str], relevant: set[str], k: int) -> float:
    return float(bool(set(ranked[:k]) & relevant))


def recall_all(ranked: list[str], relevant: set[str], k: int) -> float:
    return float(relevant <= set(ranked[:k]))


def _haystacks(ctx: EvalContext) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    rows = ctx.read("longmem_questions", "longmem_sessions")
    sessions = {s["session_id"]: s for s in rows["longmem_sessions"]}
    out = []
    for q in sorted(rows["longmem_questions"], key=lambda q: q["question_id"]):
        answers = set(q["answer_session_ids"])
        # Another fact's evidence session is a distractor here: its evidence turns are not this question's.
        out.append((q, [{"session_id": s, "date": sessions[s]["date"],
                         "turns": released_turns(json.loads(sessions[s]["turns_json"]), s in answers)}
                        for s in q["haystack_session_ids"]]))
    return out


async def _one(ctx: EvalContext, q: dict[str, Any], haystack: list[dict[str, Any]]) -> dict[str, Any] | None:
    # The reader sees the turns as a user would have written them: no evidence marks.
    shown = [{**s, "turns": [{"role": t["role"], "content": t["content"]} for t in s["turns"]]} for s in haystack]
    reply = await ctx.run(RESPOND, {"sessions": shown, "question": q["question"],
                                    "question_date": q["question_date"]}, f"{q['question_id']}/respond",
                          persona_id=q["persona_id"])
    if not reply.usable:
        return None
    abstention = q["question_id"].endswith("_abs")
    verdict = await ctx.run(JUDGE, {"criterion": "abstention" if abstention else q["question_type"],
                                    "question": q["question"], "gold": q["answer"], "response": reply.output.answer},
                            f"{q['question_id']}/judge", persona_id=q["persona_id"], judge=True)
    if not verdict.usable:
        return None
    return {"type": q["question_type"], "abstention": abstention, "correct": verdict.output.correct}


def _recall(ctx: EvalContext, chosen: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> None:
    for level in ("session", "turn"):
        found: dict[str, list[float]] = {}
        for q, haystack in chosen:
            if q["question_id"].endswith("_abs"):
                continue  # nothing to retrieve
            if level == "session":
                ids = [s["session_id"] for s in haystack]
                docs = [" ".join(t["content"] for t in s["turns"]) for s in haystack]
                relevant = set(q["answer_session_ids"])
            else:
                units = [(f"{s['session_id']}_{i}", t) for s in haystack for i, t in enumerate(s["turns"])]
                ids, docs = [u for u, _ in units], [t["content"] for _, t in units]
                relevant = {u for u, t in units if t.get("has_answer")}
            ranked = [ids[i] for i in bm25_rank(q["question"], docs, ctx.language)]
            for k in ctx.options.ks:
                found.setdefault(f"{level} recall_any@{k}", []).append(recall_any(ranked, relevant, k))
                found.setdefault(f"{level} recall_all@{k}", []).append(recall_all(ranked, relevant, k))
        for metric, values in found.items():
            ctx.score("bm25", metric, None if not values else 100 * mean(values), len(values))


def long_memory(ctx: EvalContext) -> int:
    chosen = ctx.limited(_haystacks(ctx))
    if not chosen:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no longmem question")

    async def every() -> list[dict[str, Any] | None]:
        return list(await asyncio.gather(*(_one(ctx, q, h) for q, h in chosen)))

    results = [r for r in ctx.session.run(every()) if r is not None]
    system = ctx.model
    ctx.score(system, "accuracy", None if not results else 100 * mean([float(r["correct"]) for r in results]),
              len(results))
    per_type = []
    for kind in TYPES:
        picked = [float(r["correct"]) for r in results if r["type"] == kind]
        value = None if not picked else 100 * mean(picked)
        per_type += [value] if value is not None else []
        ctx.score(system, f"accuracy {kind}", value, len(picked))
    ctx.score(system, "task-averaged accuracy", mean(per_type) if per_type else None, len(per_type))
    abstained = [float(r["correct"]) for r in results if r["abstention"]]
    ctx.score(system, "abstention accuracy", None if not abstained else 100 * mean(abstained), len(abstained))
    _recall(ctx, chosen)
    ctx.settings.update(dropped=len(chosen) - len(results), reader="full-context", retriever="bm25")
    return len(results)


TASKS = {"longmem": long_memory}
