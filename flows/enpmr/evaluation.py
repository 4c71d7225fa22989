"""enpmr's evaluation tasks (seed 000 §5): memory retrieval and response generation.

retrieval: the query is the dialogue before the memory turn, the candidates the persona's
whole memory bank (its memory sessions); Recall, Precision and nDCG at k against the golden
memory, and TMR (the first memory's category can meet the need: Table 1), overall and per
need, for BM25, dense embeddings and Emotional RAG's four strategies.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from flows.enpmr.emotions import query_text, session_texts
from flows.enpmr.options import NEED_TARGETS, NEEDS, REPLY_LIMIT
from flows.enpmr.overlap_checks import draws_on_its_memory
from memsynth.core.errors import MemsynthError
from memsynth.core.textmatch import length_in_words
from memsynth.generation.stage import Stage, check, say
from memsynth.quality.evaluation.ranking import mean, ranking_scores, type_match
from schemas.enpmr import ReplyGrade, SupportReply

if TYPE_CHECKING:  # running an evaluation needs the LLM session; declaring one does not
    from memsynth.quality.evaluation.run import EvalContext


def fits_need(memory: Mapping[str, Any], need: str) -> bool:
    """The memory's category (and attributes) can meet the need, per the seed's Table 1."""
    attributes = memory["attributes"]
    attributes = json.loads(attributes) if isinstance(attributes, str) else attributes
    return any(kind.matches(memory["category"], attributes) for kind in NEED_TARGETS[need])


def retrieval(ctx: EvalContext) -> int:
    # Imported here, not at the top: a config check imports this module for its STAGES,
    # and should not pay for numpy (0.1 s).
    from memsynth.quality.evaluation.retrievers import chosen_retrievers, rank_bank, retrieval_inputs

    systems = chosen_retrievers(ctx.options.systems)
    rows = ctx.read("memories", "memory_sessions", "benchmark", "emotions")
    memories = {m["memory_id"]: m for m in rows["memories"]}
    sessions = session_texts(rows["memory_sessions"], ctx.language)
    banks: dict[str, list[str]] = {}
    for mid, (pid, _) in sessions.items():
        if mid in memories:
            banks.setdefault(pid, []).append(mid)
    dialogues = ctx.limited(rows["benchmark"])
    if not dialogues:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no benchmark dialogues to score")
    vectors, emotions = retrieval_inputs(
        ctx, systems, {m: sessions[m][1] for mids in banks.values() for m in mids},
        {d["dialogue_id"]: query_text(d, ctx.language) for d in dialogues}, rows["emotions"])
    per: dict[str, list[dict[str, float]]] = {s: [] for s in systems}
    needs: list[str] = []
    for d in dialogues:
        bank = banks.get(d["persona_id"], [])
        query = query_text(d, ctx.language)
        needs.append(d["need"])
        for system in systems:
            order = rank_bank(system, query, [sessions[m][1] for m in bank], language=ctx.language,
                              vectors=vectors, query_emotion=emotions.get(("query", d["dialogue_id"])),
                              bank_emotions=[emotions.get(("memory", m)) for m in bank],
                              metric=ctx.options.metric, first_k=ctx.options.first_k)
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


@check("names_a_listed_memory")
def names_a_listed_memory(out: SupportReply, v: Mapping[str, Any]) -> Iterator[str]:
    if not 1 <= out.memory <= len(v["memories"]):
        yield say(v, f"`memory` must be one of the listed numbers 1-{len(v['memories'])}",
                  f"`memory` 必须是列出的编号 1-{len(v['memories'])} 之一")


@check("reply_length")
def reply_length(out: SupportReply, v: Mapping[str, Any]) -> Iterator[str]:
    limit = REPLY_LIMIT["zh" if v.get("language") == "zh" else "en"]
    if (n := length_in_words(out.response)) > limit:
        yield say(v, f"`response` has {n} words; keep it to {limit} words or fewer",
                  f"`response` 有 {n} 个字；请控制在 {limit} 个字以内")


@check("reasoning_by_mode")
def reasoning_by_mode(out: SupportReply, v: Mapping[str, Any]) -> Iterator[str]:
    """Reasoning only in the CoT setting (seed 000 Figs. 13-15): base and golden replies answer
    without it, so the settings compare what the reasoning adds."""
    cot = v.get("mode") == "cot"
    if cot and not out.reasoning.strip():
        yield say(v, "reason step by step in `reasoning` first", "请先在 `reasoning` 中一步步推理")
    elif not cot and out.reasoning.strip():
        yield say(v, "leave `reasoning` empty in this setting", "这一设置下 `reasoning` 请留空")


RESPOND = Stage("enpmr", "eval_respond", SupportReply,
                checks=(names_a_listed_memory, reply_length, reasoning_by_mode, draws_on_its_memory),
                policy="drop",
                temperature=0.8)
JUDGE = Stage("enpmr", "eval_judge", ReplyGrade, policy="drop", temperature=0.0, kind="judge")
STAGES = (RESPOND, JUDGE)
SETTINGS = ("base", "cot", "golden")
PROFILE_FIELDS = ("name", "age", "gender", "occupation", "personality", "social", "emotional_pattern", "goals")


def response(ctx: EvalContext) -> int:
    """Response generation (seed 000 §5.2, Tables 3 and 5): base (the model picks one memory
    of the dialogue's life theme), w/CoT (the same, reasoning first) and w/Golden (given the
    target); a judge at T = 0 grades fluency, humanoid, information and empathy 1–5; TMR of
    the picked memories; empathy per need."""
    systems = ctx.options.systems or SETTINGS
    unknown = [s for s in systems if s not in SETTINGS]
    if unknown:
        raise MemsynthError(f"unknown setting {unknown[0]!r} (known: {', '.join(SETTINGS)})")
    rows = ctx.read("profiles", "memories", "benchmark")
    profiles = {p["persona_id"]: {k: p[k] for k in PROFILE_FIELDS} for p in rows["profiles"]}
    memories = {m["memory_id"]: m for m in rows["memories"]}
    by_theme: dict[tuple[str, Any], list[dict[str, Any]]] = {}
    for m in rows["memories"]:
        by_theme.setdefault((m["persona_id"], m["theme_id"]), []).append(m)
    dialogues = ctx.limited(rows["benchmark"])
    if not dialogues:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no benchmark dialogues to score")

    async def one(d: dict[str, Any], setting: str) -> dict[str, Any] | None:
        target = memories[d["target_memory_id"]]
        pool = [target] if setting == "golden" else by_theme.get((d["persona_id"], d["theme_id"]), [target])
        shown = [{"number": i + 1, "date": str(m["date"]), "text": m["text"]} for i, m in enumerate(pool)]
        history = [{"role": t["role"], "content": t["content"]} for t in d["turns"][: d["memory_turn"] - 1]]
        reply = await ctx.run(RESPOND, {"profile": profiles.get(d["persona_id"], {}), "memories": shown,
                                        "history": history, "mode": setting},
                              f"{d['dialogue_id']}/respond/{setting}", persona_id=d["persona_id"])
        if not reply.usable:
            return None
        name, description = NEEDS[ctx.language][d["need"]]
        grade = await ctx.run(JUDGE, {"need": name, "need_description": description, "history": history,
                                      "response": reply.output.response},
                              f"{d['dialogue_id']}/judge/{setting}", persona_id=d["persona_id"], judge=True)
        if not grade.usable:
            return None
        picked = pool[reply.output.memory - 1]
        return {"need": d["need"], "grade": grade.output.model_dump(), "fits": fits_need(picked, d["need"])}

    async def every() -> list[list[dict[str, Any] | None]]:
        return [list(await asyncio.gather(*(one(d, s) for d in dialogues))) for s in systems]

    for setting, results in zip(systems, ctx.session.run(every())):
        graded = [r for r in results if r is not None]
        for dim in ("fluency", "humanoid", "information", "empathy"):
            ctx.score(setting, dim, mean([r["grade"][dim] for r in graded]), len(graded))
        ctx.score(setting, "avg", mean([sum(r["grade"].values()) / 4 for r in graded]), len(graded))
        if setting != "golden":
            ctx.score(setting, "TMR", mean([float(r["fits"]) for r in graded]), len(graded))
        for need in NEEDS["en"]:
            chosen = [r["grade"]["empathy"] for r in graded if r["need"] == need]
            if chosen:
                ctx.score(setting, "empathy", mean(chosen), len(chosen), f"need:{need}")
    ctx.settings.update(settings=list(systems))
    return len(dialogues)


TASKS = {"retrieval": retrieval, "response": response}
