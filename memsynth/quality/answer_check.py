"""Check answers a model wrote to one stage's prompt, exactly as a build would judge them.

A file holds a stage's variables and one or more answers (the layout of
`shared/model-answers/`): `{"recipe", "stage", "language", "variables", "answers": [{"id",
"answer", "label"?, "rule"?}]}`. Each answer goes through the stage's JSON extraction, schema
and checks; a rejected one gets the repair message the build would send back.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from memsynth.core.errors import ConfigError, MemsynthError
from memsynth.core.inputs import loads_json
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.stage import Stage, evaluate, localized


class AnswerFileError(MemsynthError):
    """A file that is not an answer file, or names a stage that cannot take its variables."""

    exit_code = 2  # 1 means: some answer was rejected


@dataclass
class AnswerVerdict:
    """What a build would make of one answer."""

    file: str
    recipe: str
    stage: str
    language: str
    id: str
    passed: bool
    outcome: str
    problems: list[str] = field(default_factory=list)
    repair: str | None = None  # the message a build sends back with a rejected answer
    label: str | None = None  # `acceptable` / `violation`, when the file says
    rule: str | None = None

    @property
    def agrees(self) -> bool | None:
        """Did the checks agree with the label (None: the file gives none)?"""
        if self.label not in ("acceptable", "violation"):
            return None
        return self.passed == (self.label == "acceptable")

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "agrees": self.agrees}


def find_stage(recipe: str, name: str) -> Stage:
    """The stage `name` of `recipe`: a build stage, an evaluation stage, or emotion scoring."""
    from memsynth.generation.emotions import SCORE
    from memsynth.generation.registry import evaluation_stages, names, recipe_class

    if recipe == SCORE.recipe:
        candidates: tuple[Stage, ...] = (SCORE,)
    elif recipe in names():
        candidates = (*recipe_class(recipe).all_stages(), *evaluation_stages(recipe))
    else:
        raise AnswerFileError(f"unknown recipe {recipe!r} (known: {', '.join([*names(), SCORE.recipe])})")
    for stage in candidates:
        if stage.name == name:
            return stage
    raise AnswerFileError(f"recipe {recipe!r} has no stage {name!r} "
                          f"(its stages: {', '.join(s.name for s in candidates)})")


def answer_files(paths: Iterable[str | Path]) -> list[Path]:
    """The files named, and every `*.json` under a folder named, in a stable order."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.json") if p.is_file())
        elif path.is_file():
            found.append(path)
        else:
            raise AnswerFileError(f"{path}: no such file or folder")
    return found


def _load(path: Path) -> dict[str, Any]:
    try:
        data = loads_json(path.read_bytes(), str(path))
    except OSError as exc:
        raise AnswerFileError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except ConfigError as exc:  # not UTF-8, not JSON, or nested too deep
        raise AnswerFileError(str(exc)) from None
    if not isinstance(data, dict):
        raise AnswerFileError(f"{path}: expected an object with recipe, stage, variables and answers")
    missing = [k for k in ("recipe", "stage", "variables", "answers") if k not in data]
    if missing:
        raise AnswerFileError(f"{path}: missing {', '.join(missing)}")
    if not isinstance(data["variables"], dict):
        raise AnswerFileError(f"{path}: variables must be an object")
    if not isinstance(data["answers"], list) or not all(isinstance(a, dict) and "answer" in a
                                                        for a in data["answers"]):
        raise AnswerFileError(f"{path}: answers must be a list of objects, each with an answer")
    return data


def _variables(data: Mapping[str, Any]) -> dict[str, Any]:
    variables = dict(data["variables"])
    variables.setdefault("language", data.get("language", "en"))
    return variables


def _renders(prompts: PromptLibrary, stage: Stage, variables: Mapping[str, Any], path: Path) -> None:
    """Refuse variables the stage's prompt cannot be rendered from (a missing one, say)."""
    try:
        prompts.render(stage.template_for(variables["language"]), dict(variables))
    except jinja2.UndefinedError as exc:
        raise AnswerFileError(f"{path}: stage {stage.qualified_name} cannot take these variables: {exc.message}"
                              ) from exc
    except jinja2.TemplateNotFound as exc:
        raise AnswerFileError(f"{path}: stage {stage.qualified_name} has no prompt in "
                              f"language {variables['language']!r}") from exc
    except (TypeError, ValueError, KeyError, AttributeError) as exc:  # a variable of the wrong shape (null memories)
        raise AnswerFileError(f"{path}: stage {stage.qualified_name} cannot take these variables "
                              f"({type(exc).__name__}: {exc})") from exc


def check_file(path: Path, prompts: PromptLibrary | None = None) -> Iterator[AnswerVerdict]:
    """One verdict per answer in the file."""
    prompts = prompts or PromptLibrary()
    data = _load(path)
    stage = find_stage(str(data["recipe"]), str(data["stage"]))
    variables = _variables(data)
    _renders(prompts, stage, variables, path)
    for i, entry in enumerate(data["answers"]):
        answer = entry["answer"]
        content = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
        try:
            _output, problems, outcome = evaluate(stage, content, entry.get("finish_reason", "stop"), variables)
        except (KeyError, TypeError, ValueError) as exc:  # a check reading a variable the file lacks
            raise AnswerFileError(f"{path}: stage {stage.qualified_name} cannot take these variables "
                                  f"({type(exc).__name__}: {exc})") from exc
        repair = (prompts.render_text(localized("_repair.j2", variables["language"]), {"problems": problems})
                  if problems else None)
        yield AnswerVerdict(file=str(path), recipe=stage.recipe, stage=stage.name, language=variables["language"],
                            id=str(entry.get("id", f"{path.stem}#{i}")), passed=not problems, outcome=outcome,
                            problems=problems, repair=repair, label=entry.get("label"), rule=entry.get("rule"))


def check_paths(paths: Iterable[str | Path]) -> list[AnswerVerdict]:
    """Every answer of every file named (folders searched for `*.json`)."""
    prompts = PromptLibrary()
    return [v for path in answer_files(paths) for v in check_file(path, prompts)]
