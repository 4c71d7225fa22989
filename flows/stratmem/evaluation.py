"""stratmem's evaluation task (seed 002 §4–5): strategic memory use.

Per instance, on the test split's pool (nice memories down-sampled to two, `in_test_split`)
shown in an order drawn from the instance id (the file lists must, nice, irr in turn): a
reply by the model under test at T = 0.6; the judge's memory-use verdicts, three runs at
T = 1.0 quoting evidence, a memory used when two of three say so; MIQ by the judge at
T = 0.1. Then SMC per scenario and overall, MIQ overall, on SMC passes and by used role,
PES and CIR.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

from flows.stratmem.form_checks import miq_score_agrees, unused_has_no_evidence
from flows.stratmem.source import spoken_time
from memsynth.core.errors import MemsynthError
from memsynth.core.textmatch import mentions_exactly
from memsynth.generation.checklib import sentences
from memsynth.generation.stage import Stage, check, say
from memsynth.quality.evaluation.ranking import mean
from memsynth.quality.evaluation.strategic import (
    ROLES,
    SCENARIOS,
    cir,
    majority,
    pes,
    scenario,
    smc,
    smc_table,
)
from schemas.stratmem import IntegrationScore, Reply, UseJudgment

if TYPE_CHECKING:  # running an evaluation needs the LLM session; declaring one does not
    from memsynth.quality.evaluation.run import EvalContext

JUDGE_RUNS = 3


@check("judges_every_memory")
def judges_every_memory(out: UseJudgment, v: Mapping[str, Any]) -> Iterator[str]:
    numbers = [m["number"] for m in v["memories"]]
    given = [x.index for x in out.verdicts]
    missing = [n for n in numbers if n not in given]
    if missing or len(given) != len(set(given)) or set(given) - set(numbers):
        yield say(v, f"give exactly one verdict per memory 1-{len(numbers)}"
                     + (f" (missing: {', '.join(map(str, missing))})" if missing else ""),
                  f"每条记忆 1-{len(numbers)} 恰好给一个判断" + (f"（缺少：{'、'.join(map(str, missing))}）" if missing else ""))


@check("evidence_is_quoted")
def evidence_is_quoted(out: UseJudgment, v: Mapping[str, Any]) -> Iterator[str]:
    for x in out.verdicts:
        if x.used and (not x.evidence.strip() or not mentions_exactly(v["response"], x.evidence)):
            yield say(v, f"memory {x.index} is marked used, but its evidence is not quoted from the reply",
                      f"第 {x.index} 条记忆判为用到，但证据不是从回复中原样摘录的")


RESPOND = Stage("stratmem", "eval_respond", Reply, policy="drop", temperature=0.6)
DETECT = Stage("stratmem", "eval_detect", UseJudgment, checks=(judges_every_memory, evidence_is_quoted,
                                                                unused_has_no_evidence),
               policy="drop", temperature=1.0)
MIQ = Stage("stratmem", "eval_miq", IntegrationScore, checks=(miq_score_agrees, sentences("analysis", max=2)),
            policy="drop", temperature=0.1, kind="judge")  # the prompt: `analysis` in a sentence or two
STAGES = (RESPOND, DETECT, MIQ)


def pools(ctx: EvalContext) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(instance, its test-split pool in presentation order), in export order."""
    rows = ctx.read("stratmem_instances", "stratmem_memories")
    by_instance: dict[str, list[dict[str, Any]]] = {}
    for m in rows["stratmem_memories"]:
        if m["in_test_split"]:
            by_instance.setdefault(m["instance_id"], []).append(m)
    out = []
    for inst in sorted(rows["stratmem_instances"], key=lambda i: i["ordinal"]):
        pool = sorted(by_instance.get(inst["instance_id"], []), key=lambda m: m["memory_index"])
        random.Random(f"stratmem-eval-order:{inst['instance_id']}").shuffle(pool)
        out.append((inst, pool))
    return out


async def _one(ctx: EvalContext, inst: dict[str, Any], pool: list[dict[str, Any]]) -> dict[str, Any] | None:
    persona = inst["persona"]
    shared = {"virtual_person": inst["virtual_person"], "human": inst["human"], "query": inst["query"],
              "query_time": spoken_time(inst["query_at"], inst["query_time"], ctx.language), "history": list(inst["history"]),
              "persona": persona if isinstance(persona, dict) else json.loads(persona),
              "memories": [{"number": i + 1, "fact": m["fact"]} for i, m in enumerate(pool)]}
    key = inst["instance_id"]
    reply = await ctx.run(RESPOND, shared, f"{key}/respond", persona_id=inst["persona_id"])
    if not reply.usable:
        return None
    response = reply.output.response
    runs = await asyncio.gather(*(ctx.run(DETECT, {**shared, "response": response}, f"{key}/detect",
                                          persona_id=inst["persona_id"], judge=True, sample=s)
                                  for s in range(JUDGE_RUNS)))
    verdicts = [{x.index: x.used for x in r.output.verdicts} for r in runs if r.usable]
    if len(verdicts) < 2:  # no majority can be formed
        return None
    used_flags = [majority([v.get(i + 1, False) for v in verdicts]) for i in range(len(pool))]
    used = {role: [u for u, m in zip(used_flags, pool) if m["role"] == role] for role in ROLES}
    quality = await ctx.run(MIQ, {**shared, "response": response,
                                  "used": [m["fact"] for u, m in zip(used_flags, pool) if u]},
                            f"{key}/miq", persona_id=inst["persona_id"], judge=True)
    return {"used": used, "miq": quality.output.score if quality.usable else None}


def strategic_use(ctx: EvalContext) -> int:
    chosen = [(i, p) for i, p in ctx.limited(pools(ctx)) if p]
    if not chosen:
        raise MemsynthError(f"{ctx.dataset} version {ctx.version['version']} has no instance with a memory pool")

    async def every() -> list[dict[str, Any] | None]:
        return list(await asyncio.gather(*(_one(ctx, i, p) for i, p in chosen)))

    results = [r for r in ctx.session.run(every()) if r is not None]
    system = ctx.model
    used = [r["used"] for r in results]
    for name, value in smc_table(used).items():
        n = len(used) if name == "all" else sum(1 for u in used if SCENARIOS[scenario(u)] == name)
        ctx.score(system, f"SMC {name}", None if value is None else 100 * value, n)
    scored = [r for r in results if r["miq"] is not None]
    ctx.score(system, "MIQ", mean([r["miq"] for r in scored]), len(scored))
    for code, name in SCENARIOS.items():
        passes = [r["miq"] for r in scored if scenario(r["used"]) == code and smc(r["used"])]
        ctx.score(system, f"MIQ on SMC-pass {name}", mean(passes), len(passes))
    passes = [r["miq"] for r in scored if smc(r["used"])]
    ctx.score(system, "MIQ on SMC-pass all", mean(passes), len(passes))
    for role in ROLES:  # Table 3: MIQ where a memory of the role was used
        picked = [r["miq"] for r in scored if any(r["used"][role])]
        ctx.score(system, f"MIQ {role}-used", mean(picked), len(picked))
    for name, fn in (("PES", pes), ("CIR", cir)):
        value = fn(used)
        ctx.score(system, name, None if value is None else 100 * value, len(used))
    ctx.settings.update(judge_runs=JUDGE_RUNS, dropped=len(chosen) - len(results))
    return len(results)


TASKS = {"stratmem": strategic_use}
