"""The mutants of the check library's checks, derived from how a check was declared.

A `LibraryCheck` says its kind and parameters as data (`sentences(path, max=4)`), which is all
a mutator needs: where in the answer to work and which bound to break. `derive(check)` gives
the mutators aimed at it, so a recipe that declares library checks gets their mutants with no
`AIMS` of its own (`stage_aims`, used by the Runner for every library check no declared aim
covers), and `check_mutants` measures one stage's checks on one good answer.

What each kind gets (a mutant breaks the bound the check was declared with, by the mutators'
own reading, never the check's code):

  sentences, words, characters, questions   sentences, words or questions past max / below min
  items                                     a list's items past max / below min
  one_question                              a second question; the question mark dropped
  one_item                                  two items joined with or / alternatively / 或者 / 也可以
  dates_within                              a date field moved past the window, a date in prose past it
  times_within                              a clock time in prose past the window, in each way it is written
  chronological                             two values swapped out of order
  distinct                                  an item repeated (case changed) and reworded from another
  no_leak                                   a person named in each form the check claims to catch, a detail told
  no_mention                                a term said under its path, as written, upper-cased, full-width
  not_copied                                a run one to five words (characters) past `longest` copied in
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from memsynth.generation.checklib.paths import LibraryCheck
from memsynth.quality.mutants.bounded import (
    Copied,
    Named,
    OutOfOrder,
    OutsideDates,
    OutsideTimes,
    Questions,
    Repeat,
    Reworded,
    Shorter,
    Tells,
    bound,
    where,
)
from memsynth.quality.mutants.mutators import (
    CHECK_RULE,
    Aim,
    Context,
    Count,
    Join,
    Longer,
    Mutant,
    Mutator,
    Sentences,
)
from memsynth.quality.mutants.terms import Mentions

# Derivation ------------------------------------------------------------------------------


def derive(check: LibraryCheck) -> tuple[Mutator, ...]:
    """The mutators aimed at a library check, from its kind and parameters."""
    p, kind = check.params, check.kind
    at = where(p["path"])
    low, high = bound(p.get("min")), bound(p.get("max"))
    if kind == "sentences":
        return (Sentences(at, low, high, places=2),)
    if kind in ("words", "characters"):
        return tuple(m for m in (Longer(at, high, places=2) if high else None,
                                 Shorter(at, low, kind == "characters") if low else None) if m)
    if kind == "items":
        return (Count(at, low, high),)
    if kind == "questions":
        return (Questions(at, low, high),)
    if kind == "one_item":
        return (Join(at),)
    if kind == "dates_within":
        return (OutsideDates(at, p.get("start"), p.get("end")),)
    if kind == "times_within":
        return (OutsideTimes(at, p["start"], p["end"]),)
    if kind == "chronological":
        return (OutOfOrder(at, bool(p.get("strict"))),)
    if kind == "distinct":
        return (Repeat(at), *((Reworded(at, p["near"]),) if p.get("near") is not None else ()))
    if kind == "no_leak":
        return tuple(m for m in (Named(at, p["people"], bool(p.get("partial_names"))) if p.get("people") else None,
                                 Tells(at, p["details"]) if p.get("details") else None) if m)
    if kind == "no_mention":
        return (Mentions(at, p["terms"]),)
    if kind == "not_copied":
        return (Copied(at, p["source"], p["longest"]),)
    return ()


def library_checks(stage: Any) -> list[LibraryCheck]:
    return [c for c in stage.checks if isinstance(c, LibraryCheck)]


def stage_aims(stage: Any, rule_of: Callable[[str], str | None] = lambda ref: None) -> tuple[Aim, ...]:
    """An aim per mutator derived from each library check of `stage`; its rule is the one
    `rule_of("stage.check")` gives, or `check:<stage>.<check>`."""
    return tuple(Aim(rule_of(f"{stage.name}.{c.name}") or f"{CHECK_RULE}{stage.name}.{c.name}", (stage.name,), m)
                 for c in library_checks(stage) for m in derive(c))


def check_mutants(stage: Any, answer: Any, variables: Mapping[str, Any], answer_id: str = "a") -> dict[str, list[
        tuple[Mutant, list[str]]]]:
    """Per library check of `stage`: its derived mutants of `answer` and the problems the
    stage finds in each (`[check_name] …` when that check rejects it)."""
    from memsynth.generation.stage import evaluate

    language = "zh" if variables.get("language") == "zh" else "en"
    ctx = Context(stage.recipe, stage.name, language, variables, answer_id, stage.output.model_json_schema())
    out: dict[str, list[tuple[Mutant, list[str]]]] = {}
    for c in library_checks(stage):
        rows = out.setdefault(c.name, [])
        for mutator in derive(c):
            for mutant in mutator(answer, ctx):
                content = json.dumps(mutant.answer, ensure_ascii=False)
                rows.append((mutant, evaluate(stage, content, "stop", variables)[1]))
    return out


def rejected_by(name: str, problems: list[str], schema: bool = False) -> bool:
    """Did check `name` reject the answer (`schema`: or the stage's schema before any check
    ran, which the Runner also counts as a kill: a bound the schema holds too)?"""
    return any(p.startswith(f"[{name}]") or schema and p.startswith(("[schema]", "[json]")) for p in problems)
