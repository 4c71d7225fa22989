"""Checks that make the gold right, over a question as LongMemEval releases it (the instance)
and what the plan knows of it (`truth`: kind, values, terms, abstention).

Each returns the problems it finds; a build drops a question with any (tallied per check),
and the tests hold each against a mutant of a good instance.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from flows.longmem.plan import day_of
from flows.longmem.text import named, names

Gold = Callable[[Mapping[str, Any], Mapping[str, Any]], Iterator[str]]


def _sessions(instance: Mapping[str, Any]) -> dict[str, tuple[str, list[dict[str, Any]]]]:
    return {sid: (date, turns) for sid, date, turns in zip(
        instance["haystack_session_ids"], instance["haystack_dates"], instance["haystack_sessions"])}


def answer_sessions_hold_evidence(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    sessions = _sessions(instance)
    for sid in instance["answer_session_ids"]:
        if sid not in sessions:
            yield f"answer session {sid} is not in the haystack"
        elif not any(t.get("has_answer") for t in sessions[sid][1]):
            yield f"answer session {sid} has no evidence turn (has_answer)"


def filler_leaves_the_attribute_alone(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    evidence = set(instance["answer_session_ids"])
    words = [*truth["terms"], *truth["values"]]
    for sid, (_, turns) in _sessions(instance).items():
        if sid in evidence:
            continue
        hits = sorted({w for t in turns for w in named(t["content"], words)})
        if hits:
            yield f"session {sid} is not evidence but mentions {', '.join(hits)}"


def update_answer_is_latest(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    if truth["kind"] != "update":
        return
    sessions = _sessions(instance)
    dated = sorted((day_of(sessions[s][0]), sessions[s][0], s) for s in instance["answer_session_ids"] if s in sessions)
    if not dated:
        yield "no answer session to take the latest value from"
        return
    latest = sessions[dated[-1][2]][1]
    if not any(t.get("has_answer") and names(t["content"], instance["answer"]) for t in latest):
        yield f"the answer {instance['answer']!r} is not the value revealed in the latest session {dated[-1][2]}"
    stale = [v for v in truth["values"][:-1] if names(instance["answer"], v)]
    if stale:
        yield f"the answer names an earlier value: {', '.join(stale)}"


def temporal_answer_follows_dates(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    if truth["kind"] != "temporal":
        return
    sessions = _sessions(instance)
    days = sorted(day_of(sessions[s][0]) for s in instance["answer_session_ids"] if s in sessions)
    number = re.search(r"\d+", instance["answer"])
    if len(days) != 2 or number is None:
        yield "a temporal answer needs two dated answer sessions and a number of days"
    elif int(number.group()) != (days[1] - days[0]).days:
        yield (f"the answer says {number.group()} days but the haystack dates are "
               f"{(days[1] - days[0]).days} days apart")


def count_matches_sessions(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    if truth["kind"] != "count":
        return
    number = re.search(r"\d+", instance["answer"])
    if number is None or int(number.group()) != len(instance["answer_session_ids"]):
        yield f"the answer {instance['answer']!r} is not the {len(instance['answer_session_ids'])} sessions counted"


def abstention_attribute_appears_nowhere(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    if not truth.get("abstention"):
        return
    for sid, (_, turns) in _sessions(instance).items():
        hits = sorted({w for t in turns for w in named(t["content"], truth["terms"])})
        if hits:
            yield f"the abstention's attribute appears in session {sid}: {', '.join(hits)}"


def sessions_in_time_order(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> Iterator[str]:
    if list(instance["haystack_dates"]) != sorted(instance["haystack_dates"]):
        yield "the haystack's sessions are not in time order"
    if instance["haystack_dates"] and instance["question_date"] < instance["haystack_dates"][-1]:
        yield "the question is dated before the last session"


CHECKS: dict[str, Gold] = {f.__name__: f for f in (
    answer_sessions_hold_evidence, filler_leaves_the_attribute_alone, update_answer_is_latest,
    temporal_answer_follows_dates, count_matches_sessions, abstention_attribute_appears_nowhere,
    sessions_in_time_order)}


def problems(instance: Mapping[str, Any], truth: Mapping[str, Any]) -> dict[str, list[str]]:
    """Each gold check's problems with the instance (an empty list: it holds)."""
    return {name: list(fn(instance, truth)) for name, fn in CHECKS.items()}
