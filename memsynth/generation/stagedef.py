"""What a stage is: a template, an output model, a few named checks, an optional judge and a
failure policy. Recipes declare their stages with these; memsynth.generation.stage runs them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

Policy = Literal["drop", "flag"]
CheckFn = Callable[[Any, Mapping[str, Any]], Iterable[str]]


@dataclass(frozen=True)
class Check:
    """A rule a JSON schema cannot express; yields one message per violation."""

    name: str
    fn: CheckFn

    def __call__(self, output: Any, variables: Mapping[str, Any]) -> list[str]:
        return [f"[{self.name}] {problem}" for problem in self.fn(output, variables)]


def check(name: str) -> Callable[[CheckFn], Check]:
    """Decorator: turn a generator of problems into a named `Check`."""
    return lambda fn: Check(name, fn)


def say(variables: Mapping[str, Any], en: str, zh: str) -> str:
    """A problem in the build's language: the repair prompt hands it back to the model."""
    return zh if variables.get("language") == "zh" else en


@dataclass(frozen=True)
class Judge:
    """A model reviewing an answer on rules code cannot see: its stage, and how its verdict
    becomes problems (worded for the repair prompt, like a check's)."""

    stage: Stage
    verdict: CheckFn  # (the judge's answer, the judged stage's variables) -> problems

    def variables(self, answer: BaseModel, variables: Mapping[str, Any]) -> dict[str, Any]:
        """The judge sees what the judged stage saw, and the answer under `answer`."""
        return {**variables, "answer": answer.model_dump(mode="json")}


@dataclass(frozen=True)
class Stage:
    """One prompt of a recipe: `prompts/<recipe>/<name>.j2` answered as `output`."""

    recipe: str
    name: str
    output: type[BaseModel]
    checks: tuple[Check, ...] = ()
    policy: Policy = "drop"
    temperature: float | None = None  # None: the build's default
    # The stage's token budget, declared (memsynth.llm.budget): about twice the largest answer
    # a strong model wrote to its prompt. None: from the schema's bounds when it bounds every
    # length, else the build's llm.max_tokens.
    max_tokens: int | None = None
    # Asked after the checks pass; a verdict against the answer is re-asked with its reasons,
    # then handled by the policy, like a failed check.
    judge: Judge | None = None
    # writer: it makes data; judge: it grades another stage's answer (llm.stages can send
    # each kind to its own model, say a judge from another family than the writer).
    kind: Literal["writer", "judge"] = "writer"

    def __post_init__(self) -> None:
        # Every prompt asks for the build's language in every text value: every stage reads
        # its answers for it, without each recipe declaring it (memsynth.generation.language).
        from memsynth.generation.language import NAME, in_language

        if all(c.name != NAME for c in self.checks):
            object.__setattr__(self, "checks", (*self.checks, Check(NAME, in_language)))

    @property
    def template(self) -> str:
        """The English template; `template_for` picks the one for a language."""
        return f"{self.recipe}/{self.name}.j2"

    def template_for(self, language: str) -> str:
        """`prompts/<recipe>/<name>.j2` for English, `<name>.<language>.j2` for any other."""
        return localized(self.template, language)

    @property
    def schema_name(self) -> str:
        return f"{self.recipe}_{self.name}"

    @property
    def qualified_name(self) -> str:
        return f"{self.recipe}.{self.name}"


def localized(template: str, language: str) -> str:
    """`name.j2` for English, `name.<language>.j2` otherwise."""
    return template if language == "en" else template.removesuffix(".j2") + f".{language}.j2"
