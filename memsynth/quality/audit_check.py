"""`memsynth check-answers --judge`: the audit judges measured on answers whose label is known.

Each answer of an audited stage (the recipe's `AuditPlan`) gets the audit prompt a build
would send for it (memsynth.generation.audit): the writer's prompt rendered from the file's
variables, the answer and the stage's audit rules — never the label, nor the rule a
mistake breaks. Verdicts come from an endpoint or from a file a model wrote from the
rendered prompts (`--render-audits`), and are compared with the labels: per rule, the
violations labelled with that rule that it flagged, and the acceptable answers it wrongly
flagged on it.

A corpus labels a mistake in prose (`rule`: the line of the seed or prompt it breaks); which
rule ids of the recipe's table that prose names is a file of its own (`--label-rules`,
`read_label_rules`). With it, a violation is *in scope* when the audit of its stage covers a
rule it is labelled with, and *check-only* otherwise: the judge is never asked about those,
so they are counted apart from its recall.

An audited answer is named by an opaque key (a hash of recipe, language, stage and id), so a
rendered prompt's file name says nothing of its label either.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsynth.core.errors import ConfigError, MemsynthError
from memsynth.core.inputs import loads_json
from memsynth.generation.audit import VERDICTS, AuditStage, audit_variables, rule_lines
from memsynth.generation.prompts import PromptLibrary
from memsynth.quality.answer_check import (
    AnswerFileError,
    AnswerVerdict,
    _load,
    _variables,
    answer_files,
    find_stage,
)

Verdicts = dict[str, dict[str, tuple[str, str]]]  # answer key → rule → (verdict, reason)
LabelRules = dict[str, tuple[str, ...]]  # answer key → the rule ids its label names
_KEY = re.compile(r"^audit-[0-9a-f]{16}$")


@dataclass(frozen=True)
class AuditCase:
    """One answer of an audited stage and the audit prompt a build would send for it."""

    key: str  # opaque: audit-<16 hex>
    recipe: str
    stage: str
    language: str
    id: str
    label: str | None
    audit: AuditStage
    variables: dict[str, Any]  # the audit prompt's variables

    @property
    def rules(self) -> tuple[str, ...]:
        return tuple(r.id for r in self.audit.rules)

    @property
    def qualified_id(self) -> str:
        return f"{self.recipe}/{self.language}/{self.stage}/{self.id}"


def case_key(recipe: str, language: str, stage: str, answer_id: str) -> str:
    digest = hashlib.sha256("\0".join((recipe, language, stage, answer_id)).encode()).hexdigest()
    return f"audit-{digest[:16]}"


def audit_cases(paths: Iterable[str | Path], prompts: PromptLibrary | None = None) -> list[AuditCase]:
    """Every answer in `paths` whose stage a build audits, with its audit prompt's variables."""
    from memsynth.generation.registry import audits

    prompts = prompts or PromptLibrary()
    cases = []
    for path in answer_files(paths):
        data = _load(path)
        stage = find_stage(str(data["recipe"]), str(data["stage"]))
        try:
            audit = audits(stage.recipe).get(stage.name)
        except ConfigError:  # emotion scoring: no recipe, no audits
            audit = None
        if audit is None:
            continue
        variables = _variables(data)
        language = str(variables["language"])
        try:
            task = prompts.render(stage.template_for(language), dict(variables))
            lines = rule_lines(prompts, stage.template_for(language), variables, task)
        except Exception as exc:  # noqa: BLE001 - jinja's errors: the file's variables do not fit the prompt
            raise AnswerFileError(f"{path}: stage {stage.qualified_name} cannot take these variables: {exc}") from exc
        for i, entry in enumerate(data["answers"]):
            answer_id = str(entry.get("id", f"{path.stem}#{i}"))
            answer = entry["answer"]
            if isinstance(answer, str):
                try:
                    answer = json.loads(answer)
                except ValueError:
                    pass  # the text as the model wrote it
            cases.append(AuditCase(case_key(stage.recipe, language, stage.name, answer_id), stage.recipe,
                                   stage.name, language, answer_id, entry.get("label"), audit,
                                   audit_variables(audit, task, answer, language, lines)))
    return cases


def render_audits(cases: Sequence[AuditCase], folder: Path, prompts: PromptLibrary | None = None) -> int:
    """Write each case's audit prompt to `folder/<key>.json` (messages, rules, the answer's JSON
    schema) and `folder/index.json`; nothing of a label. All or nothing: a folder that exists
    and holds anything is refused."""
    prompts = prompts or PromptLibrary()
    folder = Path(folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise MemsynthError(f"{folder} exists and is not an empty folder; name a new one")
    folder.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", dir=folder.parent))
    try:
        index = []
        # In key order, not the corpus's: a file lists its acceptable answers before its mistakes.
        for case in sorted(cases, key=lambda c: c.key):
            messages = prompts.render(case.audit.template_for(case.language), case.variables)
            record = {"key": case.key, "recipe": case.recipe, "stage": case.stage, "language": case.language,
                      "rules": case.variables["rules"], "messages": messages,
                      "response_schema": case.audit.output.model_json_schema()}
            (work / f"{case.key}.json").write_text(json.dumps(record, ensure_ascii=False, indent=2) + "\n",
                                                   encoding="utf-8")
            index.append({"key": case.key, "recipe": case.recipe, "stage": case.stage, "language": case.language,
                          "rules": list(case.rules)})
        (work / "index.json").write_text(json.dumps({
            "about": "audit prompts; answer each as verdicts.json: {key: {rule: {verdict: pass|violation, reason}}}",
            "prompts": index}, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        if folder.exists():
            folder.rmdir()
        os.rename(work, folder)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return len(cases)


def _named(cases: Sequence[AuditCase]) -> dict[str, list[AuditCase]]:
    by_name: dict[str, list[AuditCase]] = defaultdict(list)
    for case in cases:
        for name in {case.key, case.qualified_id, case.id}:
            by_name[name].append(case)
    return by_name


def _one(path: Path, by_name: dict[str, list[AuditCase]], name: str) -> AuditCase:
    found = by_name.get(name, [])
    if len(found) != 1:
        why = "names no audited answer" if not found else f"names {len(found)} answers: use its key"
        raise MemsynthError(f"{path}: {_shown(name)} {why}")
    return found[0]


def _json_object(path: Path, what: str) -> dict:
    try:
        data = loads_json(Path(path).read_bytes(), str(path))
    except OSError as exc:
        raise MemsynthError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ConfigError as exc:
        raise MemsynthError(str(exc)) from None
    if not isinstance(data, dict):
        raise MemsynthError(f"{path}: expected an object of {what}")
    return data


def read_verdicts(path: Path, cases: Sequence[AuditCase]) -> Verdicts:
    """A verdicts file: {answer: {rule: {"verdict": "pass"|"violation", "reason": "..."}}}, an
    answer named by its opaque key, by recipe/language/stage/id, or by its id where no other
    answer has it. One clear error for anything else."""
    data = _json_object(path, "answer → rule → verdict")
    by_name = _named(cases)
    out: Verdicts = {}
    for name, rules in data.items():
        case = _one(path, by_name, name)
        if not isinstance(rules, dict):
            raise MemsynthError(f"{path}: {_shown(name)}: expected an object of rule → verdict")
        mine = out.setdefault(case.key, {})
        for rule, given in rules.items():
            if rule not in case.rules:
                raise MemsynthError(f"{path}: {_shown(name)}: {_shown(rule)} is not one of its audit rules "
                                    f"({', '.join(case.rules)})")
            verdict, reason = (given, "") if isinstance(given, str) else (
                (given.get("verdict"), given.get("reason", "")) if isinstance(given, dict) else (None, ""))
            if verdict not in VERDICTS or not isinstance(reason, str):
                raise MemsynthError(f"{path}: {_shown(name)} {_shown(rule)}: the verdict must be pass or "
                                    "violation (and a reason, text)")
            mine[rule] = (verdict, reason)
    return out


def read_label_rules(path: Path, cases: Sequence[AuditCase]) -> LabelRules:
    """A file {answer: [rule id, ...]}: the ids, in the recipe's rules table, of the rules a
    violation's prose label names (an answer named as in a verdicts file). A corpus labels its
    mistakes in words; this is those words read once into our ids, kept beside the verdicts and
    never shown to a judge. One clear error for an answer that is not a labelled violation or
    an id the recipe's table lacks."""
    from memsynth.generation.registry import recipe_class

    data = _json_object(path, "answer → rule ids")
    by_name = _named(cases)
    out: LabelRules = {}
    for name, ids in data.items():
        case = _one(path, by_name, name)
        if case.label != "violation":
            raise MemsynthError(f"{path}: {_shown(name)} is not labelled a violation")
        if not (isinstance(ids, list) and ids and all(isinstance(i, str) for i in ids)):
            raise MemsynthError(f"{path}: {_shown(name)}: expected a list of rule ids")
        known = {r.id for r in recipe_class(case.recipe).rules}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise MemsynthError(f"{path}: {_shown(name)}: {_shown(unknown[0])} is no rule of {case.recipe}'s table")
        out[case.key] = tuple(dict.fromkeys(ids))
    return out


def _shown(value: object) -> str:
    """A name from the file, quoted and cut, safe to print on one line."""
    from memsynth.core.inputs import printable

    text = printable(str(value))
    return repr(text if len(text) <= 80 else text[:77] + "…")


def judge_with_endpoint(cases: Sequence[AuditCase], config: Any, endpoint: Any, warehouse: Path) -> Verdicts:
    """Each case's audit answered by the endpoint (cached like any call): its verdicts."""
    import asyncio

    from memsynth.generation.session import open_session

    with open_session(config, endpoint, warehouse) as session:
        async def one(case: AuditCase) -> tuple[str, Any]:
            return case.key, await session.runner.run(case.audit, case.variables, item_key=f"{case.key}/audit")

        async def every() -> list[tuple[str, Any]]:
            return list(await asyncio.gather(*(one(c) for c in cases)))

        results = session.run(every())
    return {key: {v.rule: (v.verdict, v.reason) for v in result.output.verdicts}
            for key, result in results if result.usable}


def judge_figures(cases: Sequence[AuditCase], verdicts: Verdicts, checked: Sequence[AnswerVerdict] = (),
                  labelled: LabelRules | None = None) -> dict[str, Any]:
    """The judge's figures against the labels.

    Per rule: the stages audited on it and the acceptable answers of those stages it wrongly
    flagged on it; the violations labelled with it (`labelled`), of those the ones whose stage's
    audit covers it (`labelled_in_scope`) and the judge flagged on it (`labelled_flagged`), and
    the labelled ones it flagged on any rule (`labelled_flagged_any`). Over answers: every
    violation flagged on any rule, and by the checks or the judge; the judge's recall on the
    violations in scope (flagged on a rule they are labelled with, or on any rule); the
    check-only violations (flagged anyway, rejected by the checks); the misses by name; and over
    every labelled violation of `checked`, audited stage or not (`all_*`): rejected by the
    checks, caught by the checks or the judge, and on a stage no audit reads."""
    labelled = labelled or {}
    rules: dict[str, dict[str, Any]] = {}
    passed = {(v.recipe, v.language, v.stage, v.id): v.passed for v in checked}
    totals = {"audited": 0, "unjudged": 0, "violations": 0, "violations_flagged": 0, "acceptable": 0,
              "acceptable_flagged": 0, "violations_caught_with_checks": 0, "unlabelled": 0,
              "in_scope": 0, "in_scope_flagged_rule": 0, "in_scope_flagged": 0,
              "check_only": 0, "check_only_flagged": 0, "check_only_rejected": 0}
    missed: list[str] = []
    wrongly: list[str] = []

    def row(rule: str) -> dict[str, Any]:
        return rules.setdefault(rule, {"rule": rule, "stages": set(), "labelled": 0, "labelled_in_scope": 0,
                                       "labelled_flagged": 0, "labelled_flagged_any": 0, "acceptable": 0,
                                       "acceptable_flagged": 0})

    for case in cases:
        given = verdicts.get(case.key)
        if given is None:
            totals["unjudged"] += 1
            continue
        totals["audited"] += 1
        flags = {rule for rule, (v, _) in given.items() if v == "violation"}
        for rule in case.rules:
            row(rule)["stages"].add(f"{case.recipe}.{case.stage}")
            if case.label == "acceptable":
                row(rule)["acceptable"] += 1
                row(rule)["acceptable_flagged"] += rule in flags
        if case.label == "acceptable":
            totals["acceptable"] += 1
            totals["acceptable_flagged"] += bool(flags)
            wrongly += [f"{case.qualified_id} ({', '.join(sorted(flags))})"] if flags else []
        if case.label != "violation":
            continue
        rejected = passed.get((case.recipe, case.language, case.stage, case.id)) is False
        totals["violations"] += 1
        totals["violations_flagged"] += bool(flags)
        totals["violations_caught_with_checks"] += bool(flags) or rejected
        named = labelled.get(case.key, ())
        if not named:
            totals["unlabelled"] += 1
            continue
        in_scope = [r for r in named if r in case.rules]
        for rule in named:
            r = row(rule)
            r["labelled"] += 1
            r["labelled_flagged_any"] += bool(flags)
            if rule in in_scope:
                r["labelled_in_scope"] += 1
                r["labelled_flagged"] += rule in flags
        if in_scope:
            totals["in_scope"] += 1
            totals["in_scope_flagged_rule"] += bool(flags & set(in_scope))
            totals["in_scope_flagged"] += bool(flags)
            if not flags & set(in_scope):
                missed.append(f"{case.qualified_id} ({', '.join(in_scope)})")
        else:
            totals["check_only"] += 1
            totals["check_only_flagged"] += bool(flags)
            totals["check_only_rejected"] += rejected
    # Every labelled violation, of audited stages or not: what a build's checks and audits catch together.
    audited = {(c.recipe, c.language, c.stage, c.id) for c in cases}
    flagged = {(c.recipe, c.language, c.stage, c.id) for c in cases
               if any(v == "violation" for v, _ in verdicts.get(c.key, {}).values())}
    every = [v for v in checked if v.label == "violation"]
    totals.update(all_violations=len(every), all_rejected=sum(not v.passed for v in every),
                  all_caught=sum(not v.passed or (v.recipe, v.language, v.stage, v.id) in flagged for v in every),
                  all_unaudited=sum((v.recipe, v.language, v.stage, v.id) not in audited for v in every))
    return {"rules": [{**r, "stages": sorted(r["stages"])} for _, r in sorted(rules.items())], **totals,
            "labelled_rules": bool(labelled), "missed": missed, "wrongly_flagged": wrongly}
