"""Audit judges: a model reads a sample of a stage's answers against the rules only a model
can see, and says per rule `pass` or `violation`, with a reason.

A recipe declares its `AuditPlan` (`flows/<recipe>/audits.py`): which rules each writer stage
is audited on, and which stages write gold labels (audited on every item). Per audited
item one call answers every rule of its stage (`AuditStage`, template `prompts/_audit.j2`):
it goes through the stage runner like any call, so it is cached, resumable, priced by
`build --estimate` and sent to the model `llm.stages` names for judges. Its verdicts are
rows of the version's `audits` table.

Which items are audited is a pure function of the build seed, the stage and the item key,
so a resumed or repeated build audits the same items.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model

from memsynth.core.tables import Table
from memsynth.generation.rules import Rule
from memsynth.generation.stage import Check, ItemResult, Stage, say

if TYPE_CHECKING:
    from memsynth.generation.stage import StageRunner

VERDICTS = ("pass", "violation")
AUDIT_TEMPLATE = "_audit.j2"
REASON_CHARS = 600


@dataclass(frozen=True)
class AuditPlan:
    """A recipe's audits: writer stage name → the ids of the rules its answers are audited on."""

    stages: Mapping[str, tuple[str, ...]]
    # Stages whose answers are gold labels of the benchmark: audited on every item, and
    # their rules' violation rates are what a release card states.
    gold: tuple[str, ...] = ()
    # Rules a model could judge that no build stage is audited on, and why (an evaluation
    # stage's, say, which runs in `memsynth eval`, not in a build).
    not_audited: Mapping[str, str] = field(default_factory=dict)
    # The seed's own validation of its labels, as lines for the release card.
    seed_validation: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuditStage(Stage):
    """The audit of one writer stage: one verdict per rule, answered as `output`."""

    audited: str = ""  # the writer stage's bare name
    rules: tuple[Rule, ...] = ()

    @property
    def template(self) -> str:
        return AUDIT_TEMPLATE


class AuditRow(BaseModel):
    """One rule's verdict on one audited item."""

    item: str  # the audited item's key (`@n` added for another sample of the same prompt)
    persona_id: str | None
    stage: str  # the audited stage, qualified (`enpmr.scene`)
    rule: str  # a rule id of the recipe's rules table
    verdict: str  # pass | violation
    reason: str
    judge_model: str
    gold: bool  # the stage writes gold labels (every item audited)


AUDITS = Table("audits", AuditRow)


class _Verdict(BaseModel):
    rule: str
    verdict: Literal["pass", "violation"]
    reason: str = Field(min_length=1, max_length=REASON_CHARS,
                        description="one sentence; for a violation, quote the words that break the rule")


@cache
def answer_model(recipe: str, stage: str, ids: tuple[str, ...]) -> type[BaseModel]:
    """The audit's answer: `verdicts`, one per rule id (an enum of exactly these ids)."""
    verdict = create_model(f"AuditVerdict_{recipe}_{stage}", __base__=_Verdict,
                           rule=(Literal[ids], Field(description="the rule's id, as listed")))  # type: ignore[valid-type]
    return create_model(f"Audit_{recipe}_{stage}", verdicts=(
        list[verdict], Field(min_length=len(ids), max_length=len(ids),  # type: ignore[valid-type]
                             description="one verdict per listed rule, in the listed order")))


def _one_per_rule(output: Any, variables: Mapping[str, Any]) -> Iterable[str]:
    wanted = [r["id"] for r in variables.get("rules", ())]
    given = [v.rule for v in output.verdicts]
    for rule in wanted:
        if given.count(rule) != 1:
            yield say(variables, f"give exactly one verdict for rule {rule} (given {given.count(rule)})",
                      f"规则 {rule} 必须恰好有一条结论（现有 {given.count(rule)} 条）")


ONE_PER_RULE = Check("one_verdict_per_rule", _one_per_rule)


def audit_stage(recipe: str, stage: str, rules: Sequence[Rule]) -> AuditStage:
    """The audit stage of `recipe`'s `stage` over `rules` (temperature 0: a judge)."""
    ids = tuple(r.id for r in rules)
    return AuditStage(recipe, f"audit_{stage}", answer_model(recipe, stage, ids), checks=(ONE_PER_RULE,),
                      temperature=0.0, kind="judge", max_tokens=160 + 120 * len(ids), audited=stage,
                      rules=tuple(rules))


def audit_stages(recipe: str, rules: Sequence[Rule], plan: AuditPlan | None) -> dict[str, AuditStage]:
    """Writer stage name → its audit stage, for every stage the plan audits."""
    if plan is None:
        return {}
    by_id = {r.id: r for r in rules}
    out = {}
    for stage, ids in plan.stages.items():
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"{recipe} audits stage {stage} on rules its table lacks: {', '.join(missing)}")
        out[stage] = audit_stage(recipe, stage, [by_id[i] for i in ids])
    return out


def sampled(seed: int, stage: str, item: str, rate: float) -> bool:
    """Whether `item` of `stage` is audited at `rate`: seeded, independent of call order."""
    if rate >= 1:
        return True
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{seed}|{stage}|{item}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def audit_variables(audit: AuditStage, task: Sequence[Mapping[str, str]], answer: Any,
                    language: str) -> dict[str, Any]:
    """What the audit prompt is rendered from: the writer's prompt as it was sent, its answer
    and the rules; never a label, nor which rule a known mistake breaks."""
    dumped = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    return {"language": language, "stage": f"{audit.recipe}.{audit.audited}",
            "task": "\n\n".join(str(m["content"]) for m in task), "answer": dumped,
            "rules": [{"id": r.id, "rule": r.rule} for r in audit.rules]}


def audit_rows(audit: AuditStage, result: ItemResult, item: str, persona_id: str | None, model: str,
               gold: bool) -> list[AuditRow]:
    """The audit's verdicts as rows (none when the judge gave no usable answer)."""
    if not result.usable:
        return []
    return [AuditRow(item=item, persona_id=persona_id, stage=f"{audit.recipe}.{audit.audited}", rule=v.rule,
                     verdict=v.verdict, reason=v.reason, judge_model=model, gold=gold)
            for v in result.output.verdicts]


@dataclass(frozen=True)
class Auditor:
    """A build's audits: the recipe's audit stages, the sampling rate and the seed."""

    stages: Mapping[str, AuditStage]  # writer stage's bare name → its audit
    gold: frozenset[str]
    rate: float
    seed: int

    @classmethod
    def for_recipe(cls, recipe: str, rules: Sequence[Rule], plan: AuditPlan | None, rate: float,
                   seed: int) -> Auditor | None:
        stages = audit_stages(recipe, rules, plan)
        if not stages:
            return None
        return cls(stages, frozenset(plan.gold if plan else ()), rate, seed)

    def wants(self, stage: Stage, item: str) -> AuditStage | None:
        """The audit to run on this item of `stage`, or None (not audited, or not sampled)."""
        audit = self.stages.get(stage.name)
        if audit is None or audit.recipe != stage.recipe:
            return None
        rate = 1.0 if stage.name in self.gold else self.rate
        return audit if sampled(self.seed, stage.qualified_name, item, rate) else None


def item_name(item_key: str, sample: int) -> str:
    """An audited item's name: its key, and `@n` for another sample of the same prompt."""
    return f"{item_key}@{sample}" if sample else item_key


async def run_audit(runner: StageRunner, output: Any, audit: AuditStage, stage: Stage,
                    variables: Mapping[str, Any], answer: Any, item: str, persona_id: str | None, *,
                    gold: bool) -> None:
    """Audit one answer of `stage`: the call, recorded in `output` (the shard's `ShardOutput`)
    like any item, and its rows."""
    language = str(variables.get("language", "en"))
    task = runner.prompts.render(stage.template_for(language), dict(variables))
    result = await runner.run(audit, audit_variables(audit, task, answer, language), item_key=f"{item}/audit",
                              persona_id=persona_id)
    output.record(result)
    output.emit(AUDITS, audit_rows(audit, result, item, persona_id, runner.route(audit).model, gold))
