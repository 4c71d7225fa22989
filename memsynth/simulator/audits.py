"""How the simulator answers audit judges (memsynth.generation.audit): mostly `pass`, and a
small seeded share of `violation`, so a build on the simulator writes an `audits` table with
both verdicts. The verdict is drawn from the request (its rules come in the variables), not
from reading the answer: the simulator's answers pass their checks, and what a real judge
would find in them is not something it can know."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memsynth.generation.registry import audits, names
from memsynth.simulator.answers import StageAnswer
from memsynth.simulator.text import TextMaker

VIOLATION_SHARE = 0.03  # of the verdicts: about the rate a careful writer's answers break a rule
_REASONS = {
    "en": ("The answer keeps this rule.", "The answer breaks this rule: {quote}"),
    "zh": ("回答遵守了这条规则。", "回答违反了这条规则：{quote}"),
}


def verdicts(draft: dict[str, Any], variables: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    """One verdict per rule the request lists, in order."""
    kept, broken = _REASONS.get(str(variables.get("language")), _REASONS["en"])
    out = []
    for rule in variables.get("rules", ()):
        violation = text.rng.random() < VIOLATION_SHARE
        out.append({"rule": rule["id"], "verdict": "violation" if violation else "pass",
                    "reason": broken.format(quote=text.phrase()) if violation else kept})
    draft["verdicts"] = out
    return draft


def audit_answers() -> dict[str, StageAnswer]:
    """The audit answer for every audit stage of every installed recipe, by schema name."""
    out: dict[str, StageAnswer] = {}
    for name in names():
        for audit in audits(name).values():
            out[audit.schema_name] = verdicts
    return out
