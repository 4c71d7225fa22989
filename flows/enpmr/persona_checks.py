"""enpmr's checks that a profile keeps what its persona says (profile-keeps-persona): the two
wordings of it code can see, an age and a weekly routine's count. What the profile infers fills
the persona's silences; where the persona gives a number, the profile gives the same one. The
rest of the rule (its people, their events) is the audit judge's reading."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.stage import check, say
from memsynth.quality.textrules.ages import stated_ages
from memsynth.quality.textrules.frequency import weekly_counts
from memsynth.quality.textrules.meaning import meaning_units
from schemas.enpmr import Profile

_FIRST_SENTENCE = re.compile(r"^.*?(?:[。！？!?]|\.(?:\s|$)|$)", re.S)
_CLAUSES = re.compile(r"[，,；;。.!！?？]")
# The parts of a day and a week say when, not what: a routine is paired by what it does.
_WHEN = frozenset({*meaning_units("morning evening afternoon weekend day week before after work"),
                   *meaning_units("早上"), *meaning_units("晚上"), *meaning_units("下午"), *meaning_units("周末"),
                   "上班", "下班", "班前", "班后"})


@check("keeps_persona_age")
def keeps_persona_age(out: Profile, v: Mapping[str, Any]) -> Iterator[str]:
    """The age the persona's first sentence gives its person ("周晓岚今年32岁", "Megan, 31, …"):
    a profile of another age is of someone else. A persona naming other ages there (a parent's)
    gives no single one and is left to the judge."""
    first = _FIRST_SENTENCE.match(str(v.get("persona", "")).strip())
    ranges = set(stated_ages(first.group(0))) if first else set()
    if len(ranges) != 1 or not isinstance(out.age, int):
        return
    (low, high), = ranges
    if not low <= out.age <= high:
        stated = str(low) if low == high else f"{low}-{high}"
        yield say(v, f"age is {out.age}, but the persona gives {stated}; keep the persona's facts as it states them",
                  f"age 是 {out.age}，但人物设定写的是 {stated} 岁；人物设定里写明的事实要照写")


def _items(out: Profile) -> Iterator[tuple[str, str]]:
    for field in ("habits", "social", "emotional_pattern", "goals", "communication_style", "preferences"):
        for i, text in enumerate(getattr(out, field, None) or []):
            yield f"{field}[{i}]", str(text)


def _same_routine(a: frozenset[str], b: frozenset[str]) -> bool:
    """Two routines that share a unit of what they do (游泳, swim): one routine."""
    return bool((a & b) - _WHEN)


@check("keeps_persona_routines")
def keeps_persona_routines(out: Profile, v: Mapping[str, Any]) -> Iterator[str]:
    """A routine the persona counts a week ("每周挤出两个早上去游泳馆", "swims twice a week") keeps
    its count in the profile: "每周一、三、五…去游泳馆" makes two mornings three (held-out r26, r27).
    Routines are paired by what the count is of: the units of the two clauses without the count's
    own words."""
    persona = [(c, meaning_units(c.rest)) for clause in _CLAUSES.split(str(v.get("persona", "")))
               for c in weekly_counts(clause)]
    if not persona:
        return
    for where, text in _items(out):
        for count in weekly_counts(text):
            units = meaning_units(count.rest)
            for said, said_units in persona:
                if said.times != count.times and _same_routine(units, said_units):
                    yield say(v, f"{where} says {count.said!r} ({count.times} a week), where the persona says "
                                 f"{said.said!r} ({said.times}); keep the persona's routines as it states them",
                              f"{where} 写的是“{count.said}”（每周 {count.times} 次），人物设定写的是“{said.said}”"
                              f"（每周 {said.times} 次）；人物设定里写明的日常要照写")
                    return
