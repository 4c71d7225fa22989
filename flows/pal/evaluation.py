"""pal's evaluation task (seed 004 §5): requirement restatement and solution proposal.

Items are the topics of the query month's dialogues (every topic when the build has no
query month). A task's memory is the user's history-month records as PAL-Set releases them
(logs and dialogues; the generator's experience texts are not released) ranked by BM25
against the task's question, the top `MEMORY_K` shown, as the authors retrieved with the
task question itself.
  restatement: BLEU-1..4 against the requirement (jieba words for zh), and the judge's
               0–2 match with the two implicit needs, scaled to 0–100 (G-Score);
  selection:   two of the eight candidates (shown in an order drawn from the topic id),
               +1 per liked, −1 per disliked, scaled to −100…100 (S-Score);
  generation:  BLEU-1..4 against the two liked solutions, the better of the two.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from memsynth.core.errors import MemsynthError
from memsynth.core.textmatch import sentences
from memsynth.generation.stage import Stage, check, say
from memsynth.quality.evaluation.ranking import mean
from memsynth.quality.evaluation.text import best_bleu, bleu, scaled, selection_score
from schemas.pal import ProposedSolution, Restatement, RestatementGrade, SolutionChoice

if TYPE_CHECKING:  # running an evaluation needs the LLM session; declaring one does not
    from memsynth.quality.evaluation.run import EvalContext

MEMORY_K = 5
BLEU_ORDERS = (1, 2, 3, 4)


@check("two_listed_candidates")
def two_listed_candidates(out: SolutionChoice, v: Mapping[str, Any]) -> Iterator[str]:
    ids = {c["id"] for c in v["candidates"]}
    if len(set(out.selected_solutions)) != 2 or not set(out.selected_solutions) <= ids:
        yield say(v, f"choose two different ids among {min(ids)}-{max(ids)}",
                  f"请在 {min(ids)}-{max(ids)} 中选出两个不同的编号")


# The sentence of an analysis that concludes on a choice ("综合来看，2 和 6 最合适", "Overall, 2 and
# 6 suit him best"), and the candidate numbers it names: a number with a unit (45 分钟, 2 weeks)
# is none, nor a day of a month (11月15号); "2号和6号" names candidates 2 and 6.
_CONCLUDES = re.compile(r"最合适|最贴合|最合|最符合|最适合|选|推荐|综合来看|综合考虑|综上|总的来说"
                        r"|\b(best|choose|chose|pick|picked|recommend|most suitable|overall|all in all|on balance)\b",
                        re.IGNORECASE)
# A candidate's id: "2", "方案6", and "第6个" (an ordinal, not six of something).
_CANDIDATE = re.compile(r"第(\d{1,2})(?=个|号|条|项|种)|(?<!\d)(?<!\d\.)(?<!月)(\d{1,2})(?!\d|\.\d|\s*(?:分钟|分|小时|天|周|次|岁|个|年|月|日|点|%)"
                        r"|\s*(?:kg|km|min|minutes?|hours?|days?|weeks?|months?|years?|times|am|pm)\b)")


def concluded_choice(analysis: str, ids: set[int]) -> set[int]:
    """The candidate ids the analysis's last concluding sentence names (none: no such sentence)."""
    for sentence in reversed(sentences(analysis)):
        if _CONCLUDES.search(sentence):
            return {n for m in _CANDIDATE.finditer(sentence) if (n := int(m.group(1) or m.group(2))) in ids}
    return set()


@check("choice_as_concluded")
def choice_as_concluded(out: SolutionChoice, v: Mapping[str, Any]) -> Iterator[str]:
    """"Weigh the candidates … in `analysis`, then give the ids of the two that suit them best":
    where the analysis ends on two or more candidates, the ids chosen are among them."""
    named = concluded_choice(out.analysis, {int(c["id"]) for c in v["candidates"]})
    chosen = {int(i) for i in out.selected_solutions}
    if len(named) >= 2 and not chosen <= named:
        shown = ", ".join(map(str, sorted(named)))
        yield say(v, f"`analysis` concludes on {shown} but `selected_solutions` is {sorted(chosen)}; give the ids "
                     "the analysis chose",
                  f"`analysis` 的结论是 {shown}，`selected_solutions` 却是 {sorted(chosen)}；请填写分析所选方案的编号")


def _one_sentence(v: Mapping[str, Any], field: str, text: str, what: tuple[str, str]) -> Iterator[str]:
    """One sentence, and no list inside it ("1. …；2. …", "方案一：…方案二：…", "一是…二是…",
    "first, … second, …", three ；-joined clauses: memsynth.quality.textrules.forms.enumerated)."""
    from memsynth.quality.textrules.forms import enumerated

    n = len(sentences(text))
    listed = len(enumerated(text))
    if n != 1 or listed >= 2:
        got = say(v, f"{listed} listed items", f"列了 {listed} 项") if listed >= 2 else say(
            v, f"{n} sentences", f"{n} 句")
        yield say(v, f"`{field}` must be {what[0]} in one sentence, got {got}",
                  f"`{field}` 必须是一句话写成的{what[1]}，实际是{got}")


@check("one_sentence_requirement")
def one_sentence_requirement(out: Restatement, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _one_sentence(v, "requirement", out.requirement, ("the need", "需求"))


@check("one_solution")
def one_solution(out: ProposedSolution, v: Mapping[str, Any]) -> Iterator[str]:
    from memsynth.quality.textrules.forms import second_proposal

    yield from _one_sentence(v, "solution", out.solution, ("one solution", "一个方案"))
    if joint := second_proposal(out.solution):
        yield say(v, f"`solution` offers a second solution ({joint!r}); propose one",
                  f"`solution` 又提了第二个方案（“{joint}”）；只提一个方案")


RESTATE = Stage("pal", "eval_restate", Restatement, checks=(one_sentence_requirement,), policy="drop",
                temperature=0.0)
JUDGE = Stage("pal", "eval_judge_restatement", RestatementGrade, policy="drop", temperature=0.0, kind="judge")
PROPOSE = Stage("pal", "eval_propose", ProposedSolution, checks=(one_solution,), policy="drop", temperature=0.0)
SELECT = Stage("pal", "eval_select", SolutionChoice, checks=(two_listed_candidates, choice_as_concluded), policy="drop",
               temperature=0.0)
STAGES = (RESTATE, JUDGE, PROPOSE, SELECT)


def _records(rows: Mapping[str, list[dict[str, Any]]]) -> dict[str, list[str]]:
    """persona id → the user's history-month records as PAL-Set releases them: each log a line,
    each history dialogue one record (the user's preferences show only in its feedback)."""
    history = {s["situation_id"]: s for s in rows["situations"] if s["split"] == "history"}
    out: dict[str, list[str]] = {}
    for log in sorted(rows["logs"], key=lambda r: r["timestamp"]):
        if log["situation_id"] in history:
            out.setdefault(log["persona_id"], []).append(f"{log['timestamp']} {log['log_type']}: {log['content']}")
    dialogues: dict[str, list[dict[str, Any]]] = {}
    for turn in rows["dialogue_turns"]:
        if turn["situation_id"] in history:
            dialogues.setdefault(turn["situation_id"], []).append(turn)
    for situation_id, turns in sorted(dialogues.items(), key=lambda kv: str(history[kv[0]]["end_time"])):
        situation = history[situation_id]
        lines = [f"{t['speaker']}: {t['content']}" for t in sorted(turns, key=lambda t: (t["turn_index"], t["speaker"] != "user"))]
        out.setdefault(situation["persona_id"], []).append(f"{situation['end_time']} dialogue\n" + "\n".join(lines))
    return out


def _memory(records: list[str], question: str, language: str) -> list[str]:
    # Imported here, not at the top: a config check imports this module for its STAGES,
    # and should not pay for numpy (0.1 s).
    from memsynth.quality.evaluation.retrievers import bm25_rank

    return [records[i] for i in bm25_rank(question, records, language)[:MEMORY_K]]


async def _topic(ctx: EvalContext, topic: dict[str, Any], persona_id: str, records: list[str],
                 candidates: list[dict[str, Any]]) -> dict[str, Any]:
    lang = ctx.language
    key = topic["topic_id"]
    needs = [n["need"] for n in topic["implicit_needs"]]
    order = list(range(len(candidates)))
    random.Random(f"pal-eval-order:{key}").shuffle(order)
    shown = [{"id": i + 1, "solution": candidates[j]["solution"]} for i, j in enumerate(order)]
    feedback = {i + 1: candidates[j]["feedback"] for i, j in enumerate(order)}
    liked = [c["solution"] for c in candidates if c["feedback"] == "pos"]
    solution_memory = _memory(records, topic["requirement"], lang)
    restated, proposed, chosen = await asyncio.gather(
        ctx.run(RESTATE, {"memory": _memory(records, topic["user_query"], lang), "user_query": topic["user_query"]},
                f"{key}/restate", persona_id=persona_id),
        ctx.run(PROPOSE, {"memory": solution_memory, "requirement": topic["requirement"]},
                f"{key}/propose", persona_id=persona_id),
        ctx.run(SELECT, {"memory": solution_memory, "requirement": topic["requirement"], "candidates": shown},
                f"{key}/select", persona_id=persona_id))
    out: dict[str, Any] = {}
    if restated.usable:
        prediction = restated.output.requirement
        out["restate_bleu"] = [bleu([topic["requirement"]], prediction, n, lang) for n in BLEU_ORDERS]
        grade = await ctx.run(JUDGE, {"user_query": topic["user_query"], "requirement": topic["requirement"],
                                      "implicit_needs": needs, "prediction": prediction},
                              f"{key}/judge_restatement", persona_id=persona_id, judge=True)
        if grade.usable:
            out["g"] = float(grade.output.score)
    if proposed.usable and liked:
        out["generate_bleu"] = [best_bleu(liked, proposed.output.solution, n, lang) for n in BLEU_ORDERS]
    if chosen.usable:
        out["s"] = selection_score(chosen.output.selected_solutions, feedback)
    return out


def personalized_assistance(ctx: EvalContext) -> int:
    rows = ctx.read("situations", "topics", "candidate_solutions", "logs", "dialogue_turns")
    situations = {s["situation_id"]: s for s in rows["situations"]}
    query_month = [t for t in rows["topics"] if situations[t["situation_id"]]["split"] == "query"]
    topics = ctx.limited(query_month or rows["topics"])
    if not topics:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no dialogue topics to score")
    candidates: dict[str, list[dict[str, Any]]] = {}
    for c in sorted(rows["candidate_solutions"], key=lambda c: c["candidate_index"]):
        candidates.setdefault(c["topic_id"], []).append(c)
    records = _records(rows)

    async def every() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(
            _topic(ctx, t, situations[t["situation_id"]]["persona_id"],
                   records.get(situations[t["situation_id"]]["persona_id"], []), candidates.get(t["topic_id"], []))
            for t in topics)))

    results = ctx.session.run(every())
    system = ctx.model
    for task, field in (("restatement", "restate_bleu"), ("generation", "generate_bleu")):
        scored = [r[field] for r in results if field in r]
        for i, n in enumerate(BLEU_ORDERS):
            ctx.score(system, f"{task} BLEU-{n}", mean([s[i] for s in scored]), len(scored))
    grades = [r["g"] for r in results if "g" in r]
    ctx.score(system, "restatement G-Score", scaled(grades, 2), len(grades))
    picks = [r["s"] for r in results if "s" in r]
    ctx.score(system, "selection S-Score", scaled(picks, 2), len(picks))
    ctx.settings.update(memory_k=MEMORY_K, query_month=bool(query_month))
    return len(topics)


TASKS = {"pal": personalized_assistance}
