"""`memsynth check-answers --judge`: the audit judges measured on answers whose label is known.

Each answer of an audited stage (the recipe's `AuditPlan`) gets the audit prompt a build
would send for it (memsynth.generation.audit): the writer's prompt rendered from the file's
variables, the answer and the stage's audit rules — never the label, nor the rule a
mistake breaks. Verdicts come from an endpoint or from a file a model wrote from the
rendered prompts (`--render-audits`), and are compared with the labels: per rule, the
violations it flagged and the acceptable answers it wrongly flagged.

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
from memsynth.generation.audit import VERDICTS, AuditStage, audit_stages, audit_variables
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
    from memsynth.generation.registry import audit_plan, recipe_class

    prompts = prompts or PromptLibrary()
    cases = []
    for path in answer_files(paths):
        data = _load(path)
        stage = find_stage(str(data["recipe"]), str(data["stage"]))
        try:
            audit = audit_stages(stage.recipe, recipe_class(stage.recipe).rules, audit_plan(stage.recipe)).get(stage.name)
        except ConfigError:  # emotion scoring: no recipe, no audits
            audit = None
        if audit is None:
            continue
        variables = _variables(data)
        language = str(variables["language"])
        try:
            task = prompts.render(stage.template_for(language), dict(variables))
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
                                   audit_variables(audit, task, answer, language)))
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


def read_verdicts(path: Path, cases: Sequence[AuditCase]) -> Verdicts:
    """A verdicts file: {answer: {rule: {"verdict": "pass"|"violation", "reason": "..."}}}, an
    answer named by its opaque key, by recipe/language/stage/id, or by its id where no other
    answer has it. One clear error for anything else."""
    try:
        data = loads_json(Path(path).read_bytes(), str(path))
    except OSError as exc:
        raise MemsynthError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ConfigError as exc:
        raise MemsynthError(str(exc)) from None
    if not isinstance(data, dict):
        raise MemsynthError(f"{path}: expected an object of answer → rule → verdict")
    by_name: dict[str, list[AuditCase]] = defaultdict(list)
    for case in cases:
        for name in {case.key, case.qualified_id, case.id}:
            by_name[name].append(case)
    out: Verdicts = {}
    for name, rules in data.items():
        found = by_name.get(name, [])
        if len(found) != 1:
            why = "names no audited answer" if not found else f"names {len(found)} answers: use its key"
            raise MemsynthError(f"{path}: {_shown(name)} {why}")
        case = found[0]
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


def judge_figures(cases: Sequence[AuditCase], verdicts: Verdicts,
                  checked: Sequence[AnswerVerdict] = ()) -> dict[str, Any]:
    """Per rule: audited answers by label, violations flagged, acceptable answers wrongly
    flagged; and over answers: violations flagged by any rule, and by the checks or the judge."""
    rules: dict[str, dict[str, Any]] = {}
    passed = {(v.recipe, v.language, v.stage, v.id): v.passed for v in checked}
    totals = {"audited": 0, "unjudged": 0, "violations": 0, "violations_flagged": 0, "acceptable": 0,
              "acceptable_flagged": 0, "violations_caught_with_checks": 0}
    for case in cases:
        given = verdicts.get(case.key)
        if given is None:
            totals["unjudged"] += 1
            continue
        totals["audited"] += 1
        flagged_any = any(v == "violation" for v, _ in given.values())
        for rule in case.rules:
            row = rules.setdefault(rule, {"rule": rule, "stages": set(), "violations": 0, "violations_flagged": 0,
                                          "acceptable": 0, "acceptable_flagged": 0})
            row["stages"].add(f"{case.recipe}.{case.stage}")
            flagged = given.get(rule, ("pass", ""))[0] == "violation"
            if case.label == "violation":
                row["violations"] += 1
                row["violations_flagged"] += flagged
            elif case.label == "acceptable":
                row["acceptable"] += 1
                row["acceptable_flagged"] += flagged
        if case.label == "violation":
            totals["violations"] += 1
            totals["violations_flagged"] += flagged_any
            rejected = passed.get((case.recipe, case.language, case.stage, case.id)) is False
            totals["violations_caught_with_checks"] += flagged_any or rejected
        elif case.label == "acceptable":
            totals["acceptable"] += 1
            totals["acceptable_flagged"] += flagged_any
    return {"rules": [{**r, "stages": sorted(r["stages"])} for _, r in sorted(rules.items())], **totals}
