"""Audit judges: a model reads a sample of a stage's answers against the rules only a model
can see, and says per rule `pass` or `violation`, with a reason.

A recipe declares its `AuditPlan` (`flows/<recipe>/audits.py`); the rules a stage is audited
on are those its prompt's lines name (`{# rule: id #}`), less the rules code holds whole and
those the plan leaves out with a reason (`audited_rules`). Stages that write gold labels are
audited on every item. Per audited item one call answers every rule of its stage, and shows
under each rule the prompt's own lines that state it (`AuditStage`, template `prompts/_audit.j2`):
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
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, create_model

from memsynth.core.tables import Table
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.rules import PromptLine, Rule, prompt_lines
from memsynth.generation.stage import Check, ItemResult, Stage, say

if TYPE_CHECKING:
    from memsynth.generation.stage import StageRunner

VERDICTS = ("pass", "violation")
AUDIT_TEMPLATE = "_audit.j2"
REASON_CHARS = 600


# Rules the parser and the in_language check hold whole, in every prompt: no audit asks.
STRUCTURAL = frozenset({"json-only", "json-schema", "repair", "language"})


@dataclass(frozen=True)
class AuditPlan:
    """A recipe's audits. Every stage is audited on the rules its prompt lines name, except:"""

    # Stage name → rules its audit reads beyond those its prompt lines name (a rule of the
    # seed no line of that prompt states, say).
    stages: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # Stages not audited, and why (none of ours: even the replies of a model under evaluation
    # are audited, by the judge, as a measure of how far it followed its prompt).
    unaudited_stages: Mapping[str, str] = field(default_factory=dict)
    # Rules whose every clause a check reads (counts, dates, lengths, turn order): an audit
    # would only repeat the check. Rule id → the checks' reach, in a line.
    checked: Mapping[str, str] = field(default_factory=dict)
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


def audited_rules(recipe: str, plan: AuditPlan | None, stages: Sequence[Stage],
                  prompts: PromptLibrary | None = None) -> dict[str, tuple[str, ...]]:
    """Stage name → the ids of the rules its audit reads, in the prompt's order: the rules its
    (en) prompt lines name, less STRUCTURAL, `plan.checked` and `plan.not_audited`, with
    `plan.stages`' extras after them. A stage left with none is not audited. `stages`: the
    recipe's chain and evaluation stages (memsynth.generation.registry.audited_stages)."""
    if plan is None:
        return {}
    prompts = prompts or _library()
    left_out = STRUCTURAL | set(plan.checked) | set(plan.not_audited)
    out = {}
    for stage in stages:
        if stage.name in plan.unaudited_stages:
            continue
        named = [i for i in _prompt_rule_ids(prompts, stage.template_for("en")) if i not in left_out]
        ids = tuple(dict.fromkeys([*named, *plan.stages.get(stage.name, ())]))
        if ids:
            out[stage.name] = ids
    return out


def audit_stages(recipe: str, rules: Sequence[Rule], plan: AuditPlan | None,
                 stages: Sequence[Stage]) -> dict[str, AuditStage]:
    """Stage name → its audit stage, for every stage with a rule to audit (`audited_rules`)."""
    by_id = {r.id: r for r in rules}
    out = {}
    for stage, ids in audited_rules(recipe, plan, stages).items():
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"{recipe} audits stage {stage} on rules its table lacks: {', '.join(missing)}")
        out[stage] = audit_stage(recipe, stage, [by_id[i] for i in ids])
    return out


@cache
def _library() -> PromptLibrary:
    return PromptLibrary()


def _prompt_rule_ids(prompts: PromptLibrary, template: str) -> list[str]:
    """The rule ids the lines of `template` and of the templates it includes name, in order."""
    return list(dict.fromkeys(i for _, line in _tagged_lines(prompts, template) for i in line.ids))


def _tagged_lines(prompts: PromptLibrary, template: str) -> list[tuple[str, PromptLine]]:
    """(file, line) for every line of `template`'s files that names rules: the template first."""
    files = prompts.files(template)
    return list(_tagged_in(tuple(sorted(files.items())), template))


@lru_cache(maxsize=256)
def _tagged_in(files: tuple[tuple[str, str], ...], template: str) -> tuple[tuple[str, PromptLine], ...]:
    # Keyed by the files' text: the same lines are read for every audited item.
    texts = dict(files)
    order = [template, *sorted(f for f in texts if f != template)]
    return tuple((f, line) for f in order for line in prompt_lines(texts[f]) if line.ids)


def rule_lines(prompts: PromptLibrary, template: str, variables: Mapping[str, Any],
               task: Sequence[Mapping[str, str]]) -> dict[str, list[str]]:
    """Rule id → the prompt's own lines that state it, rendered with the item's variables: what
    the audit judge holds the answer to, beside the rule's line in the table. Only lines the
    item's prompt (`task`, as sent) holds: a line of a branch not taken, or whose Jinja does
    not stand alone, is left out (the task shows it in place)."""
    sent = " ".join(" ".join(str(m["content"]) for m in task).split())
    out: dict[str, list[str]] = {}
    for _, line in _tagged_lines(prompts, template):
        text = _render_line(prompts, line.text, variables)
        if not text or text not in sent:
            continue
        for rule_id in line.ids:
            out.setdefault(rule_id, []).append(text)
    return out


@lru_cache(maxsize=4096)
def _compiled(env: Any, text: str) -> Any:
    return env.from_string(text)


def _render_line(prompts: PromptLibrary, text: str, variables: Mapping[str, Any]) -> str:
    try:
        rendered = _compiled(prompts.env, text).render(**variables)
    except Exception:  # noqa: BLE001 - a line holding half of an {% if %}, or a variable this item lacks
        return ""
    return " ".join(rendered.split())


def sampled(seed: int, stage: str, item: str, rate: float) -> bool:
    """Whether `item` of `stage` is audited at `rate`: seeded, independent of call order."""
    if rate >= 1:
        return True
    if rate <= 0:
        return False
    digest = hashlib.sha256(f"{seed}|{stage}|{item}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < rate


def audit_variables(audit: AuditStage, task: Sequence[Mapping[str, str]], answer: Any, language: str,
                    lines: Mapping[str, Sequence[str]] | None = None) -> dict[str, Any]:
    """What the audit prompt is rendered from: the writer's prompt as it was sent, its answer
    and the rules, each with the prompt's lines that state it (`rule_lines`); never a label,
    nor which rule a known mistake breaks."""
    dumped = answer.model_dump(mode="json") if isinstance(answer, BaseModel) else answer
    lines = lines or {}
    return {"language": language, "stage": f"{audit.recipe}.{audit.audited}",
            "task": "\n\n".join(str(m["content"]) for m in task), "answer": dumped,
            "rules": [{"id": r.id, "rule": r.rule, "lines": list(lines.get(r.id, ()))} for r in audit.rules]}


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
    def for_recipe(cls, stages: Mapping[str, AuditStage], plan: AuditPlan | None, rate: float,
                   seed: int) -> Auditor | None:
        """`stages`: the recipe's audits (memsynth.generation.registry.audits)."""
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
    lines = rule_lines(runner.prompts, stage.template_for(language), variables, task)
    result = await runner.run(audit, audit_variables(audit, task, answer, language, lines), item_key=f"{item}/audit",
                              persona_id=persona_id)
    output.record(result)
    output.emit(AUDITS, audit_rows(audit, result, item, persona_id, runner.route(audit).model, gold))
