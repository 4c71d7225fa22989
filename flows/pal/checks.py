"""pal's checks: the seed's rules a JSON schema cannot express.

Each one is calibrated on the released PAL-Set items of its kind
(tests/test_calibration.py runs it over them and prints how many it accepts).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Iterator, Mapping
from typing import Any

from flows.pal.options import LOG_TYPES
from memsynth.stage import check
from memsynth.textmatch import sentences
from schemas.pal import (
    ASPECTS,
    AspectPreferences,
    Candidates,
    Dialogue,
    Experience,
    Logs,
    MonthSituations,
    PalProfile,
    PalProfiles,
    RequirementTypes,
    SessionRequirements,
    SolutionPreferences,
    Timeline,
)

# Is the occupation itself "student" or "retired"? A teacher loved by her students is not.
_NOT_WORKING = re.compile(
    r"\b(a|an) (\w+ )?(student|retiree|pensioner)\b|\bretired\b"
    r"|(是|为)(一名|一位|一个)?[^，。；]{0,8}(学生|研究生|本科生|博士生)|在读|退休", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
MINUTE = "%Y-%m-%d %H:%M"
PROFILE_FIELDS = ("occupation", "health_status", "family_members", "hobbies")
# Asked for: 2-3 sentences per profile field, 4-5 per preference. Accepted: what real
# PAL-Set profiles and preferences are (one long sentence; two or three sentences).
PROFILE_SENTENCES = (1, 3)
PREFERENCE_SENTENCES = (2, 5)


def _sentence_range(label: str, text: str, low: int, high: int | None = None) -> Iterator[str]:
    n = len(sentences(text))
    if n < low or (high is not None and n > high):
        want = f"{low}-{high}" if high else f"at least {low}"
        yield f"{label} has {n} sentences; write {want}"


def profile_problems(i: int, p: PalProfile, allow_students_retirees: bool) -> Iterator[str]:
    """What is wrong with one profile of a batch (each profile is kept or dropped alone)."""
    for field in PROFILE_FIELDS:
        yield from _sentence_range(f"profiles[{i}].{field}", getattr(p, field), *PROFILE_SENTENCES)
    if not allow_students_retirees and _NOT_WORKING.search(p.occupation):
        yield f"profiles[{i}] is a student or retiree; everyone must be working"


@check("batch_size")
def batch_size(out: PalProfiles, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.profiles) != v["batch_size"]:
        yield f"give exactly {v['batch_size']} profiles, got {len(out.profiles)}"


@check("profile_fields")
def profile_fields(out: PalProfiles, v: Mapping[str, Any]) -> Iterator[str]:
    for i, p in enumerate(out.profiles):
        yield from profile_problems(i, p, v["allow_students_retirees"])


@check("varied_batch")
def varied_batch(out: PalProfiles, _: Mapping[str, Any]) -> Iterator[str]:
    """A batch must not be uniformly healthy, harmonious and outgoing."""
    if len(out.profiles) < 3:
        return
    vectors = {tuple(p.personality.model_dump().values()) for p in out.profiles}
    levels = {lvl for p in out.profiles for lvl in p.personality.model_dump().values()}
    if len(vectors) == 1:
        yield "every profile has the same Big Five levels; make the users differ"
    if not {"low", "high"} <= levels:
        yield "use both 'low' and 'high' Big Five levels across the batch"


@check("months_in_order")
def months_in_order(out: Timeline, v: Mapping[str, Any]) -> Iterator[str]:
    got = [m.month for m in out.months]
    if got != list(v["months"]):
        yield f"give exactly the months {', '.join(v['months'])} in order, got {', '.join(got)}"


@check("month_sentences")
def month_sentences(out: Timeline, _: Mapping[str, Any]) -> Iterator[str]:
    for m in out.months:
        yield from _sentence_range(f"month {m.month}", m.summary, 5)


@check("distinct_requirement_types")
def distinct_requirement_types(out: RequirementTypes, _: Mapping[str, Any]) -> Iterator[str]:
    seen: set[str] = set()
    for aspect in ASPECTS:
        for phrase in getattr(out, aspect):
            key = phrase.strip().lower()
            if key in seen:
                yield f"requirement type {phrase!r} appears twice"
            seen.add(key)


@check("covers_requirement_types")
def covers_requirement_types(out: AspectPreferences, v: Mapping[str, Any]) -> Iterator[str]:
    wanted = [r["requirement_id"] for r in v["requirements"]]
    got = [i.requirement_id for i in out.items]
    if sorted(got) != sorted(wanted):
        yield f"give one entry for each of {', '.join(wanted)} (got {', '.join(got)})"


@check("preference_sentences")
def preference_sentences(out: AspectPreferences, _: Mapping[str, Any]) -> Iterator[str]:
    for item in out.items:
        yield from _sentence_range(f"{item.requirement_id}.pos", item.pos, *PREFERENCE_SENTENCES)
        yield from _sentence_range(f"{item.requirement_id}.neg", item.neg, *PREFERENCE_SENTENCES)


def parse_span(span: str) -> tuple[dt.date, dt.date]:
    start, end = (part.strip() for part in span.split("~"))
    return dt.date.fromisoformat(start), dt.date.fromisoformat(end)


@check("spans_consecutive")
def spans_consecutive(out: MonthSituations, v: Mapping[str, Any]) -> Iterator[str]:
    """Spans of two days or more run back to back; the last ends in the month's final three days."""
    year, month = map(int, v["month"].split("-"))
    last_day = calendar.monthrange(year, month)[1]
    previous_end = dt.date.fromisoformat(v["previous_end"]) if v.get("previous_end") else None
    for i, s in enumerate(out.situations):
        try:
            start, end = parse_span(s.time_span)
        except ValueError:
            yield f"situations[{i}].time_span {s.time_span!r} is not a valid date span"
            return
        if start >= end:
            yield f"situations[{i}] must end on a later day than it starts ({s.time_span})"
        if (end.year, end.month) != (year, month):
            yield f"situations[{i}] ends on {end}, outside {v['month']}"
        if previous_end is not None and start != previous_end + dt.timedelta(days=1):
            yield f"situations[{i}] starts on {start}; it must start the day after {previous_end}"
        previous_end = end
    if out.situations and previous_end is not None and previous_end.day < last_day - 2:
        yield f"the last situation ends on {previous_end}; it must end in the month's final three days"


@check("valid_requirement_ids")
def valid_requirement_ids(out: MonthSituations, v: Mapping[str, Any]) -> Iterator[str]:
    valid = {r["requirement_id"] for r in v["requirement_types"]}
    for i, s in enumerate(out.situations):
        unknown = [r for r in s.requirement_ids if r not in valid]
        if unknown:
            yield f"situations[{i}] names unknown requirement ids {unknown}"
        if len(set(s.requirement_ids)) != len(s.requirement_ids):
            yield f"situations[{i}] repeats a requirement id"


@check("situation_sentences")
def situation_sentences(out: MonthSituations, _: Mapping[str, Any]) -> Iterator[str]:
    for i, s in enumerate(out.situations):
        yield from _sentence_range(f"situations[{i}].situation", s.situation, 5)


@check("situation_count")
def situation_count(out: MonthSituations, v: Mapping[str, Any]) -> Iterator[str]:
    if not v["min_situations"] <= len(out.situations) <= v["max_situations"]:
        yield f"give {v['min_situations']} to {v['max_situations']} situations, got {len(out.situations)}"


@check("ends_before_session")
def ends_before_session(out: Experience, v: Mapping[str, Any]) -> Iterator[str]:
    session_day = dt.datetime.strptime(v["span_end"], MINUTE).date()
    for date in _ISO_DATE.findall(out.experience):
        try:
            if dt.date.fromisoformat(date) > session_day:
                yield f"the experience mentions {date}, after the span ends on {session_day}"
        except ValueError:
            continue


@check("one_framework_per_topic")
def one_framework_per_topic(out: SessionRequirements, v: Mapping[str, Any]) -> Iterator[str]:
    wanted = [t["requirement_id"] for t in v["topics"]]
    got = [t.requirement_id for t in out.topics]
    if got != wanted:
        yield f"give one topic for each of {', '.join(wanted)}, in that order (got {', '.join(got)})"


@check("distinct_needs")
def distinct_needs(out: SessionRequirements, _: Mapping[str, Any]) -> Iterator[str]:
    for t in out.topics:
        if t.implicit_needs[0].need.strip().lower() == t.implicit_needs[1].need.strip().lower():
            yield f"{t.requirement_id}: the two implicit needs are the same; give two different aspects"


@check("candidates_per_topic")
def candidates_per_topic(out: Candidates, v: Mapping[str, Any]) -> Iterator[str]:
    wanted = [t["requirement_id"] for t in v["topics"]]
    got = [t.requirement_id for t in out.topics]
    if got != wanted:
        yield f"give 8 solutions for each of {', '.join(wanted)}, in that order (got {', '.join(got)})"


@check("distinct_candidates")
def distinct_candidates(out: Candidates, _: Mapping[str, Any]) -> Iterator[str]:
    for t in out.topics:
        if len({s.strip().lower() for s in t.solutions}) != len(t.solutions):
            yield f"{t.requirement_id}: the 8 solutions must all differ"


@check("verbatim_choices")
def verbatim_choices(out: SolutionPreferences, v: Mapping[str, Any]) -> Iterator[str]:
    candidates = list(v["candidates"])
    picked = [r.solution for r in out.liked + out.disliked]
    for label, rated in (("liked", out.liked), ("disliked", out.disliked)):
        for i, r in enumerate(rated):
            if r.solution not in candidates:
                yield f"{label}[{i}].solution is not copied verbatim from the candidates: {r.solution[:80]!r}"
    if len(set(picked)) != len(picked):
        yield "the two liked and two disliked solutions must be four different candidates"


@check("one_sentence_reasons")
def one_sentence_reasons(out: SolutionPreferences, _: Mapping[str, Any]) -> Iterator[str]:
    for label, rated in (("liked", out.liked), ("disliked", out.disliked)):
        for i, r in enumerate(rated):
            yield from _sentence_range(f"{label}[{i}].reason", r.reason, 1, 1)


@check("enough_logs")
def enough_logs(out: Logs, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.logs) < v["min_logs"]:
        yield f"only {len(out.logs)} logs; write at least {v['min_logs']}"


@check("log_times")
def log_times(out: Logs, v: Mapping[str, Any]) -> Iterator[str]:
    """Timestamps are valid, strictly increasing, and inside the span (its end included, as
    real PAL-Set logs often fall on the dialogue's minute)."""
    start = dt.datetime.strptime(v["span_start"], MINUTE)
    end = dt.datetime.strptime(v["span_end"], MINUTE)
    previous: dt.datetime | None = None
    for i, log in enumerate(out.logs):
        try:
            stamp = dt.datetime.strptime(log.timestamp, MINUTE)
        except ValueError:
            yield f"logs[{i}].timestamp {log.timestamp!r} is not a valid time"
            continue
        if not start <= stamp <= end:
            yield f"logs[{i}].timestamp {log.timestamp} is outside {v['span_start']} … {v['span_end']}"
        if previous is not None and stamp <= previous:
            yield f"logs[{i}].timestamp {log.timestamp} is not later than the log before it"
        previous = stamp


def log_format_matches(log_type: str, content: str, language: str) -> bool:
    """Does a log's content follow its type's format (Table 6, as real logs write it)?"""
    return re.search(LOG_TYPES[log_type][f"{language}_pattern"], content) is not None


@check("log_format")
def log_format(out: Logs, v: Mapping[str, Any]) -> Iterator[str]:
    for i, log in enumerate(out.logs):
        if not log_format_matches(log.type, log.content, v["language"]):
            yield f"logs[{i}].content does not follow the {log.type} format: {log.content[:80]!r}"


@check("follows_skeleton")
def follows_skeleton(out: Dialogue, v: Mapping[str, Any]) -> Iterator[str]:
    skeleton = v["skeleton"]
    if len(out.turns) != len(skeleton):
        yield f"write exactly {len(skeleton)} turns, one per skeleton line, got {len(out.turns)}"
        return
    for i, (turn, slot) in enumerate(zip(out.turns, skeleton), start=1):
        for speaker in ("user", "assistant"):
            said = getattr(turn, speaker)
            action, reference = slot[f"{speaker}_action"], slot[f"{speaker}_reference"]
            if (said.action, said.reference) != (action, reference):
                yield (f"turn {i} {speaker}: expected {action} [{reference}], "
                       f"got {said.action} [{said.reference}]")
