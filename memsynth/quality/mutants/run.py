"""Run the recipes' mutants over good answers and tally, per rule, how many its checks reject.

An original is a good answer with its stage and variables (`Case`): an acceptable answer of
an answer file (shared/model-answers' layout) or any other source (the golden fixtures' values
that stand for a stage's answer). Every aim of the recipe (flows/<recipe>/mutants.py) whose
stages include the case's turns it into mutants; each goes through the stage's schema and
checks as a build would. A mutant counts as killed when a check the rule names, or the
stage's schema, rejects it; the ones no check rejects at all
are the rule's judge work.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memsynth.generation.rules import EVERY_STAGE
from memsynth.quality.mutants.base import CHECK_RULE, SCHEMA_RULE, Aim, Context, Mutant
from memsynth.quality.mutants.language import Language

__all__ = ["SCHEMA_RULE", "Case", "Outcome", "RuleTally", "Runner", "corpus_cases", "format_table", "tally"]



@dataclass(frozen=True)
class Case:
    """One good answer to mutate."""

    recipe: str
    stage: str
    language: str
    id: str
    answer: Any
    variables: Mapping[str, Any]
    source: str = "corpus"  # corpus, golden, …
    file: str = ""  # the answer file it came from, if any


@dataclass
class Outcome:
    """One mutant and what the checks made of it."""

    case: Case
    rule: str
    mutant: Mutant
    problems: list[str]
    killed: bool  # rejected by a check the rule names

    @property
    def rejected(self) -> bool:
        return bool(self.problems)


@dataclass
class RuleTally:
    recipe: str
    rule: str
    checked: bool  # the rule names a check (the schema counts)
    enforcer: str = "check"  # check, judge, prompt or built-in: what the rules table says enforces it
    mutants: int = 0
    killed: int = 0
    rejected: int = 0  # by any check
    survivors: list[Outcome] = field(default_factory=list)  # no check rejects them: judge work

    @property
    def rate(self) -> float:
        return self.killed / self.mutants if self.mutants else 0.0

    @property
    def judge_work(self) -> dict[str, int]:
        """The kinds of mutant no check rejects, and how many of each."""
        return dict(sorted(Counter(o.mutant.mutator for o in self.survivors).items()))

    def to_json(self) -> dict[str, Any]:
        return {"recipe": self.recipe, "rule": self.rule, "enforcer": self.enforcer, "mutants": self.mutants,
                "killed": self.killed, "rate": round(self.rate, 4) if self.checked else None,
                "rejected_by_any_check": self.rejected, "judge_work": self.judge_work}


def corpus_cases(paths: Iterable[str | Path]) -> list[Case]:
    """The acceptable answers of answer files (folders searched for *.json); a file that is
    not an answer file is refused in one line (AnswerFileError), as check-answers refuses it."""
    from memsynth.quality.answer_check import _load, _variables, answer_files

    cases = []
    for path in answer_files(paths):
        data = _load(path)
        variables = _variables(data)
        for i, entry in enumerate(data["answers"]):
            if entry.get("label") == "acceptable" and isinstance(entry["answer"], dict | list):
                cases.append(Case(str(data["recipe"]), str(data["stage"]), variables["language"],
                                  str(entry.get("id", f"{path.stem}#{i}")), entry["answer"], variables, "corpus",
                                  str(path)))
    return cases


def _tags(problems: list[str]) -> set[str]:
    return {m.group(1) for p in problems if (m := re.match(r"\[([\w]+)\]", p))}


def _own_checks(rule: Any, stage: str) -> set[str]:
    """The check names (and `schema`) `rule` names on `stage`."""
    own = set()
    for ref in rule.checks:
        s, _, name = ref.partition(".")
        if s in (stage, EVERY_STAGE):
            own.add(name)
    return own


class Runner:
    """Evaluates answers of every recipe's stages (the stages and rules looked up once)."""

    def __init__(self) -> None:
        self._stages: dict[tuple[str, str], Any] = {}
        self._rules: dict[str, dict[str, Any]] = {}
        self._aims: dict[str, tuple[Aim, ...]] = {}

    def stage(self, recipe: str, name: str) -> Any:
        from memsynth.quality.answer_check import find_stage

        if (recipe, name) not in self._stages:
            self._stages[recipe, name] = find_stage(recipe, name)
        return self._stages[recipe, name]

    def rules(self, recipe: str) -> dict[str, Any]:
        """The recipe's rules table; for emotion scoring (a stage of no one recipe), its rules."""
        from memsynth.generation.emotions import SCORE
        from memsynth.generation.registry import names, recipe_class
        from memsynth.generation.rules import EMOTION_RULES

        if recipe not in self._rules:
            table = EMOTION_RULES if recipe == SCORE.recipe else recipe_class(recipe).rules if recipe in names() else ()
            self._rules[recipe] = {r.id: r for r in table}
        return self._rules[recipe]

    def aims(self, recipe: str) -> tuple[Aim, ...]:
        """The recipe's declared aims (AIMS), and those derived from each library check no
        declared aim covers (memsynth.quality.mutants.library)."""
        from memsynth.generation.emotions import SCORE
        from memsynth.generation.registry import mutant_aims, names, recipe_class

        if recipe not in self._aims:
            if recipe == SCORE.recipe:
                from memsynth.quality.mutants.emotions import AIMS

                declared, stages = AIMS, (SCORE,)
            else:
                known = recipe in names()
                declared = mutant_aims(recipe) if known else ()
                stages = recipe_class(recipe).all_stages() if known else ()
            # The shared language rule is every stage's (checklib.language): aimed at all of them.
            shared = (Aim("language", tuple(s.name for s in stages), Language()),) if "language" in self.rules(recipe) else ()
            self._aims[recipe] = declared + shared + self._derived(stages, declared, recipe)
        return self._aims[recipe]

    def _derived(self, stages: Iterable[Any], declared: tuple[Aim, ...], recipe: str) -> tuple[Aim, ...]:
        from memsynth.quality.mutants.library import derive, library_checks

        rules = self.rules(recipe)
        named = {ref: rule.id for rule in rules.values() for ref in rule.checks}
        covered = {f"{stage}.{ref.partition('.')[2]}" for a in declared if a.rule in rules for stage in a.stages
                   for ref in rules[a.rule].checks if ref.partition(".")[0] == stage}
        return tuple(Aim(named.get(ref) or f"{CHECK_RULE}{ref}", (stage.name,), mutator)
                     for stage in stages for check in library_checks(stage)
                     if (ref := f"{stage.name}.{check.name}") not in covered for mutator in derive(check))

    def problems(self, case: Case, answer: Any) -> list[str]:
        from memsynth.generation.stage import evaluate

        content = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        _out, problems, _outcome = evaluate(self.stage(case.recipe, case.stage), content, "stop", case.variables)
        return problems

    def killed_by(self, case: Case, rule_id: str, problems: list[str]) -> bool:
        # The schema enforces every rule's bounds it can express (a list's length, a field's
        # presence) before any check runs: its rejection kills a mutant of any rule.
        tags = _tags(problems)
        if tags & {"schema", "json"}:
            return True
        if rule_id.startswith(CHECK_RULE):  # a derived aim no rule names: its own check kills it
            return rule_id.rpartition(".")[2] in tags
        return rule_id != SCHEMA_RULE and bool(tags & _own_checks(self.rules(case.recipe)[rule_id], case.stage))

    def mutants(self, case: Case) -> Iterator[tuple[str, Mutant]]:
        stage = self.stage(case.recipe, case.stage)
        ctx = Context(case.recipe, case.stage, case.language, case.variables, case.id,
                      stage.output.model_json_schema())
        for aim in self.aims(case.recipe):
            if case.stage in aim.stages:
                for mutant in aim.mutator(case.answer, ctx):
                    yield aim.rule, mutant

    def outcomes(self, cases: Iterable[Case]) -> Iterator[Outcome]:
        for case in cases:
            for rule, mutant in self.mutants(case):
                problems = self.problems(case, mutant.answer)
                yield Outcome(case, rule, mutant, problems, self.killed_by(case, rule, problems))

    def checked(self, recipe: str, rule_id: str) -> bool:
        return rule_id in (SCHEMA_RULE,) or rule_id.startswith(CHECK_RULE) or bool(self.rules(recipe)[rule_id].checks)

    def enforcer(self, recipe: str, rule_id: str) -> str:
        """check, judge, built-in or prompt: the strongest enforcer the rules table names."""
        if self.checked(recipe, rule_id):
            return "check"
        rule = self.rules(recipe)[rule_id]
        return "judge" if rule.judges else "built-in" if rule.built_in else "prompt"


def tally(runner: Runner, outcomes: Iterable[Outcome]) -> dict[tuple[str, str], RuleTally]:
    rows: dict[tuple[str, str], RuleTally] = {}
    for o in outcomes:
        key = (o.case.recipe, o.rule)
        row = rows.setdefault(key, RuleTally(o.case.recipe, o.rule, runner.checked(*key), runner.enforcer(*key)))
        row.mutants += 1
        row.killed += o.killed
        row.rejected += o.rejected
        if not o.rejected:
            row.survivors.append(o)
    return dict(sorted(rows.items()))


def format_table(rows: Mapping[tuple[str, str], RuleTally], target: float = 0.95) -> str:
    """The per-rule table: mutants, killed by the rule's checks, rate, and the judge work.

    A rule no check enforces (`by` judge or prompt) has no rate: its mutants are all judge
    work by design, the set its judge (or an audit) is measured on."""
    lines = [f"{'recipe':<9}{'rule':<31}{'by':<7}{'mutants':>7}{'killed':>7}{'rate':>7}{'any':>6}  judge work "
             "(mutants no check rejects, by kind)"]
    for row in rows.values():
        work = ", ".join(f"{k} ×{n}" for k, n in row.judge_work.items()) or "-"
        rate = f"{row.rate:>6.0%}" + (" " if row.rate >= target else "<") if row.checked else f"{'-':>6} "
        lines.append(f"{row.recipe:<9}{row.rule:<31}{row.enforcer:<7}{row.mutants:>7}{row.killed:>7}{rate}"
                     f"{row.rejected:>6}  {work}")
    killed = sum(r.killed for r in rows.values() if r.checked)
    total = sum(r.mutants for r in rows.values() if r.checked)
    if total:
        lines.append(f"rules with a check: {killed}/{total} mutants killed ({killed / total:.1%}); "
                     f"'<' marks a rule below {target:.0%}")
    judged = sum(r.mutants for r in rows.values() if not r.checked)
    if judged:
        lines.append(f"rules with no check: {judged} mutants, all judge work by design")
    return "\n".join(lines)
