"""What code decides for one persona, with the build seed: its facts (drawn from the language's
catalog), the sessions that reveal them and their dates, and each question with its answer
computed from those facts — never asked of a model."""

from __future__ import annotations

import datetime as dt
import random
from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

from flows.longmem import catalog_en, catalog_zh
from flows.longmem.options import TYPE_OF_KIND, LongmemOptions

WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


# LongMemEval names a question's evidence sessions `answer_…` (its sampler lists as answer
# sessions the ids holding "answer"); a session is evidence for its own fact and a distractor in
# every other haystack of its persona, so it is stored under a plain id and released under this
# prefix only where it answers the question.
ANSWER_PREFIX = "answer_"


def released_id(session_id: str, answers: Collection[str]) -> str:
    return f"{ANSWER_PREFIX}{session_id}" if session_id in answers else session_id


def released_turns(turns: list[dict[str, Any]], answer: bool) -> list[dict[str, Any]]:
    """A session's turns in a question's haystack: `has_answer` only where it answers that question
    (LongMemEval's sampler clears it from every other session too)."""
    return turns if answer else [{k: v for k, v in t.items() if k != "has_answer"} for t in turns]


def haystack_share(evidence: int, others: int, options: LongmemOptions) -> tuple[int, int]:
    """(the persona's other evidence sessions, filler sessions) beside a question's own `evidence`
    sessions in its haystack, when `others` are at hand."""
    rest = max(0, options.haystack_sessions - evidence)
    distractors = min(others, round(options.distractor_share * rest))
    return distractors, rest - distractors


def catalog(language: str) -> Any:
    return catalog_zh if language == "zh" else catalog_en


def stamp(day: dt.date, minute: int) -> str:
    """LongMemEval's timestamp: 2023/05/20 (Sat) 02:21."""
    return f"{day:%Y/%m/%d} ({WEEKDAYS[day.weekday()]}) {minute // 60:02d}:{minute % 60:02d}"


def day_of(stamp_text: str) -> dt.date:
    return dt.datetime.strptime(stamp_text[:10], "%Y/%m/%d").date()


@dataclass
class PlannedSession:
    session_id: str
    date: str
    kind: str  # evidence | filler
    topic: str
    fact_id: str | None = None
    speaker: str = "user"
    value: str | None = None
    statement: str | None = None


@dataclass
class PlannedFact:
    fact_id: str
    entry: dict[str, Any]
    values: list[str]
    sessions: list[PlannedSession] = field(default_factory=list)

    @property
    def kind(self) -> str:
        return self.entry["kind"]


@dataclass
class PersonaPlan:
    facts: list[PlannedFact]
    fillers: list[PlannedSession]
    absent: list[dict[str, Any]]
    question_date: str


def answer_of(fact: PlannedFact, language: str) -> str:
    """The gold answer, computed from the fact and its sessions' dates."""
    kind, zh = fact.kind, language == "zh"
    if kind == "update":
        return fact.values[-1]  # the latest value wins
    if kind == "count":
        n = len(set(fact.values))
        return f"{n}个" if zh else str(n)
    if kind == "temporal":
        days = (day_of(fact.sessions[1].date) - day_of(fact.sessions[0].date)).days
        return f"{days}天" if zh else f"{days} days"
    if kind == "preference":
        return fact.entry["rubric"].format(value=fact.values[0])
    return fact.values[0]


def draw(persona_id: str, options: LongmemOptions, language: str, reference: dt.date,
         rng: random.Random) -> PersonaPlan:
    book = catalog(language)
    facts: list[PlannedFact] = []
    for kind in TYPE_OF_KIND:
        entries = [e for e in book.ATTRIBUTES if e["kind"] == kind]
        for entry in rng.sample(entries, min(options.per_type, len(entries))):
            fid = f"{persona_id}_{entry['key']}"
            if kind == "update":
                values = rng.sample(entry["values"], 2)
            elif kind == "count":
                low, high = options.count_items
                values = rng.sample(entry["values"], min(len(entry["values"]), rng.randint(low, max(low, high))))
            elif kind == "temporal":
                values = list(entry["events"])
            else:
                values = [rng.choice(entry["values"])]
            facts.append(PlannedFact(fid, entry, values))
    absent = rng.sample(book.ABSENT, min(options.abstentions, len(book.ABSENT)))
    evidence = sum(len(f.values) for f in facts)
    # Enough filler for the haystack that needs most: each question's own evidence, then the
    # persona's other evidence sessions as distractors, then filler (an abstention owns none).
    owns = [len(f.values) for f in facts] + ([0] if absent else [])
    fillers = max((haystack_share(own, evidence - own, options)[1] for own in owns), default=0)
    # A time for every session of the persona, in order; the question comes after all of them.
    times = sorted((rng.randrange(options.span_days), rng.randint(6 * 60, 23 * 60))
                   for _ in range(evidence + fillers))
    stamps = [stamp(reference - dt.timedelta(days=options.span_days - d), m) for d, m in times]
    slots = list(range(len(stamps)))
    evidence_slots = sorted(rng.sample(slots, evidence))
    rng.shuffle(facts)
    cursor = iter(evidence_slots)
    # Each fact's sessions take consecutive evidence slots, so an update's old value comes before
    # its new one and a temporal pair's first event before its second.
    for fact in facts:
        speaker = "assistant" if fact.kind == "assistant" else "user"
        for i, value in enumerate(fact.values):
            fact.sessions.append(PlannedSession(
                f"{fact.fact_id}_{i + 1}", stamps[next(cursor)], "evidence", fact.entry["topic"],
                fact.fact_id, speaker, value, fact.entry["statement"].format(value=value)))
    facts.sort(key=lambda f: f.fact_id)
    free = [s for s in slots if s not in set(evidence_slots)]
    topics = list(book.FILLER_TOPICS)
    rng.shuffle(topics)
    filler_sessions = [PlannedSession(f"{persona_id}_filler_{j + 1}", stamps[s], "filler", topics[j % len(topics)])
                       for j, s in enumerate(free)]
    question_day = reference
    return PersonaPlan(facts, filler_sessions, absent, stamp(question_day, rng.randint(9 * 60, 22 * 60)))
