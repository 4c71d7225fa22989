"""A recipe's seed rules as data: where each comes from and what enforces it.

Every rule names its enforcer: a check (`stage.check`), a judge criterion (`stage.field` of a
judge's answer), or, when neither can, the reason the prompt alone carries it. `memsynth
recipes NAME` lists them; `rule_problems` says where a rule names an enforcer the recipe lacks.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from memsynth.generation.stage import Stage


@dataclass(frozen=True)
class Rule:
    """One rule of the seed (or of our prompt), and what enforces it at build time."""

    id: str
    rule: str  # the rule, in a line
    source: str  # where it comes from: "seed 000 Fig. 11", "prompt"
    checks: tuple[str, ...] = ()  # "stage.check_name", or "stage.schema" for the stage's output model
    judges: tuple[str, ...] = ()  # "stage.field": a judge's criterion (a.b for a field of list items)
    built_in: str = ""  # code that makes the rule hold by construction (the dialogue plan, say)
    prompt_only: str = ""  # why nothing but the prompt can enforce it

    @property
    def enforced_by(self) -> str:
        """The enforcers in a line: checks, judge criteria, construction; else the prompt and why."""
        parts = ([f"check {c}" for c in self.checks] + [f"judge {j}" for j in self.judges]
                 + ([f"built in: {self.built_in}"] if self.built_in else []))
        return "; ".join(parts) if parts else f"prompt only: {self.prompt_only}"

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "rule": self.rule, "source": self.source, "checks": list(self.checks),
                "judges": list(self.judges), "built_in": self.built_in, "prompt_only": self.prompt_only,
                "enforced_by": self.enforced_by}


def rule_problems(rules: Iterable[Rule], stages: Iterable[Stage]) -> Iterator[str]:
    """Rules whose enforcer the stages do not have, or that name none (one line each)."""
    by_name = {s.name: s for s in stages}
    seen: set[str] = set()
    for r in rules:
        if r.id in seen:
            yield f"{r.id}: the id is used twice"
        seen.add(r.id)
        if not (r.checks or r.judges or r.built_in or r.prompt_only):
            yield f"{r.id}: names no check, no judge criterion, no construction and no reason to leave it to the prompt"
        for ref in r.checks:
            stage, _, name = ref.partition(".")
            if stage not in by_name or (name != "schema" and name not in {c.name for c in by_name[stage].checks}):
                yield f"{r.id}: no check {ref}"
        for ref in r.judges:
            stage, _, field = ref.partition(".")
            if stage not in by_name or not _has_field(by_name[stage], field):
                yield f"{r.id}: no judge criterion {ref}"


def _has_field(stage: Stage, path: str) -> bool:
    """`path` (a.b for nested lists of models) is a field of the stage's answer."""
    model = stage.output
    for part in path.split("."):
        field = model.model_fields.get(part)
        if field is None:
            return False
        inner = _model_in(field.annotation)
        if inner is not None:
            model = inner
    return True


def _model_in(annotation: object) -> type | None:
    from typing import get_args

    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in get_args(annotation):
        found = _model_in(arg)
        if found is not None:
            return found
    return None
