"""pal — personalized assistant with logs (PAL-Bench / PAL-Set).

Per shard: `profile` in batches told to differ. Per persona:
  timeline → requirement_types → preferences (per aspect) → situations (month by month,
  the previous month as context) → per situation: experience (previous situation as
  context), logs, and per topic requirements → candidates → solution_preferences;
  then a dialogue skeleton built in code, worded by `dialogue`.
Templates: prompts/pal/<stage>.j2 · models: schemas/pal.py.
"""

from __future__ import annotations

import asyncio
import calendar
import datetime as dt
import json
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memsynth.config import PROJECT_ROOT
from memsynth.recipe import PersonaContext
from memsynth.stage import Check, ItemResult, Stage, check
from memsynth.tables import Table
from memsynth.textmatch import sentences
from schemas.pal import (
    ASPECTS,
    CANDIDATE_SOLUTIONS,
    DIALOGUE_TURNS,
    EXPERIENCES,
    LOGS,
    PAL_PROFILES,
    PREFERENCES,
    REQUIREMENT_TYPES,
    SITUATIONS,
    TIMELINES,
    TOPICS,
    AspectPreferences,
    Candidates,
    CandidateSolutionRow,
    Dialogue,
    DialogueTurnRow,
    Experience,
    ExperienceRow,
    LogRow,
    Logs,
    MonthSituations,
    NeedRow,
    PalProfile,
    PalProfileRow,
    PalProfiles,
    PreferenceRow,
    RequirementTypeRow,
    RequirementTypes,
    SituationRow,
    SolutionPreferences,
    Timeline,
    TimelineRow,
    TopicRequirement,
    TopicRow,
)
from schemas.records import PERSONAS

LOG_TYPES: dict[str, dict[str, str]] = json.loads(
    (PROJECT_ROOT / "data" / "pal" / "log_types.json").read_text(encoding="utf-8"))["types"]
_NOT_WORKING = re.compile(r"\b(student|retired|retiree|pensioner)\b|学生|退休", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
MINUTE = "%Y-%m-%d %H:%M"


class PalOptions(BaseModel):
    """`recipe_options` of a pal config."""

    model_config = ConfigDict(extra="forbid")
    months: tuple[int, int] = (7, 12)  # timeline length, drawn per persona with the build seed
    situations_per_month: tuple[int, int] = (4, 6)
    profile_batch_size: int = Field(5, ge=1, le=20)
    allow_students_retirees: bool = False
    target_logs: int = Field(20, ge=1)  # asked for
    min_logs: int = Field(15, ge=1)  # fewer is a failure
    query_share: float = Field(1.0, ge=0, le=1)  # share of the last month's sessions in the query split
    discussion_rate: float = Field(0.5, ge=0, le=1)  # chance of a discussion turn per proposed solution
    session_hour: int = Field(21, ge=0, le=23)  # the dialogue starts at this hour of the span's last day

    @model_validator(mode="after")
    def _ranges(self) -> PalOptions:
        if not 1 <= self.months[0] <= self.months[1] <= 36:
            raise ValueError("months: give [min, max] with 1 <= min <= max <= 36")
        if not 1 <= self.situations_per_month[0] <= self.situations_per_month[1] <= 10:
            raise ValueError("situations_per_month: give [min, max] with 1 <= min <= max <= 10")
        return self


# --- checks: rules a JSON schema cannot express --------------------------------------


def _sentence_range(label: str, text: str, low: int, high: int | None = None) -> Iterator[str]:
    n = len(sentences(text))
    if n < low or (high is not None and n > high):
        want = f"{low}-{high}" if high else f"at least {low}"
        yield f"{label} has {n} sentences; write {want}"


@check("batch_size")
def batch_size(out: PalProfiles, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.profiles) != len(v["personas"]):
        yield f"give exactly {len(v['personas'])} profiles, one per persona, got {len(out.profiles)}"


@check("profile_sentences")
def profile_sentences(out: PalProfiles, _: Mapping[str, Any]) -> Iterator[str]:
    for i, p in enumerate(out.profiles):
        for field in ("occupation", "health_status", "family_members", "hobbies"):
            yield from _sentence_range(f"profiles[{i}].{field}", getattr(p, field), 2, 3)


@check("working_adults")
def working_adults(out: PalProfiles, v: Mapping[str, Any]) -> Iterator[str]:
    if v["allow_students_retirees"]:
        return
    for i, p in enumerate(out.profiles):
        if _NOT_WORKING.search(p.occupation):
            yield f"profiles[{i}] is a student or retiree; everyone must be working"


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
        yield from _sentence_range(f"{item.requirement_id}.pos", item.pos, 4, 5)
        yield from _sentence_range(f"{item.requirement_id}.neg", item.neg, 4, 5)


def parse_span(span: str) -> tuple[dt.date, dt.date]:
    start, end = (part.strip() for part in span.split("~"))
    return dt.date.fromisoformat(start), dt.date.fromisoformat(end)


@check("spans_consecutive")
def spans_consecutive(out: MonthSituations, v: Mapping[str, Any]) -> Iterator[str]:
    """Spans run back to back inside the month; the last ends in its final three days."""
    year, month = map(int, v["month"].split("-"))
    last_day = calendar.monthrange(year, month)[1]
    previous_end = dt.date.fromisoformat(v["previous_end"]) if v.get("previous_end") else None
    for i, s in enumerate(out.situations):
        try:
            start, end = parse_span(s.time_span)
        except ValueError:
            yield f"situations[{i}].time_span {s.time_span!r} is not a valid date span"
            return
        if start > end:
            yield f"situations[{i}] starts after it ends ({s.time_span})"
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
    session_day = dt.datetime.strptime(v["session_time"], MINUTE).date()
    for date in _ISO_DATE.findall(out.experience):
        try:
            if dt.date.fromisoformat(date) > session_day:
                yield f"the experience mentions {date}, after the session on {session_day}"
        except ValueError:
            continue


@check("distinct_needs")
def distinct_needs(out: TopicRequirement, _: Mapping[str, Any]) -> Iterator[str]:
    if out.implicit_needs[0].need.strip().lower() == out.implicit_needs[1].need.strip().lower():
        yield "the two implicit needs are the same; give two different aspects"


@check("distinct_candidates")
def distinct_candidates(out: Candidates, _: Mapping[str, Any]) -> Iterator[str]:
    if len({s.strip().lower() for s in out.solutions}) != len(out.solutions):
        yield "the 8 solutions must all differ"


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
        yield f"only {len(out.logs)} logs; write at least {v['target_logs']} (fewer than {v['min_logs']} fails)"


@check("log_times")
def log_times(out: Logs, v: Mapping[str, Any]) -> Iterator[str]:
    """Timestamps are valid, strictly increasing, and inside the span before the session."""
    start = dt.datetime.strptime(v["span_start"], MINUTE)
    end = dt.datetime.strptime(v["span_end"], MINUTE)
    previous: dt.datetime | None = None
    for i, log in enumerate(out.logs):
        try:
            stamp = dt.datetime.strptime(log.timestamp, MINUTE)
        except ValueError:
            yield f"logs[{i}].timestamp {log.timestamp!r} is not a valid time"
            continue
        if not start <= stamp < end:
            yield f"logs[{i}].timestamp {log.timestamp} is outside {v['span_start']} … {v['span_end']}"
        if previous is not None and stamp <= previous:
            yield f"logs[{i}].timestamp {log.timestamp} is not later than the log before it"
        previous = stamp


@check("log_format")
def log_format(out: Logs, v: Mapping[str, Any]) -> Iterator[str]:
    key = "zh_pattern" if v["language"] == "zh" else "en_pattern"
    for i, log in enumerate(out.logs):
        if not re.search(LOG_TYPES[log.type][key], log.content):
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


# --- stages ------------------------------------------------------------------------


def _stage(name: str, output: type[BaseModel], *checks: Check, policy: str = "drop") -> Stage:
    return Stage("pal", name, output, checks=checks, policy=policy)  # type: ignore[arg-type]


PROFILE = _stage("profile", PalProfiles, batch_size, profile_sentences, working_adults, varied_batch)
TIMELINE = _stage("timeline", Timeline, months_in_order, month_sentences)
REQUIREMENT_TYPES_STAGE = _stage("requirement_types", RequirementTypes, distinct_requirement_types)
# Sentence counts are soft: PAL-Set's own preferences are often 3 sentences, not 4-5,
# so an answer that misses only on length is kept and flagged rather than lost.
PREFERENCES_STAGE = _stage("preferences", AspectPreferences, covers_requirement_types,
                           preference_sentences, policy="flag")
SITUATIONS_STAGE = _stage("situations", MonthSituations, situation_count, spans_consecutive,
                          valid_requirement_ids, situation_sentences)
EXPERIENCE = _stage("experience", Experience, ends_before_session)
REQUIREMENTS = _stage("requirements", TopicRequirement, distinct_needs)
CANDIDATES = _stage("candidates", Candidates, distinct_candidates)
SOLUTION_PREFERENCES = _stage("solution_preferences", SolutionPreferences, verbatim_choices,
                              one_sentence_reasons)
LOGS_STAGE = _stage("logs", Logs, enough_logs, log_times, log_format)
DIALOGUE = _stage("dialogue", Dialogue, follows_skeleton)


# --- the dialogue skeleton, built in code ------------------------------------------


@dataclass(frozen=True)
class TopicPlan:
    """One topic of a session: its framework and the solutions the assistant will propose."""

    index: int  # 1-based within the session
    requirement_id: str
    requirement: TopicRequirement
    proposals: tuple[tuple[str, str, str], ...]  # (solution, feedback pos|neg, reason)


def choose_proposals(prefs: SolutionPreferences, split: str, rng: random.Random
                     ) -> tuple[tuple[str, str, str], ...]:
    """Query sessions propose liked solutions only; history sessions may include disliked ones."""
    liked = [(r.solution, "pos", r.reason) for r in prefs.liked]
    disliked = [(r.solution, "neg", r.reason) for r in prefs.disliked]
    if split == "query":
        return tuple(rng.sample(liked, rng.randint(1, 2)))
    pool = liked + disliked
    return tuple(rng.sample(pool, rng.randint(1, 3)))


def build_skeleton(topics: Sequence[TopicPlan], rng: random.Random,
                   discussion_rate: float) -> list[dict[str, str]]:
    """The turn-by-turn actions and references, following the seed's action grammar."""
    turns: list[dict[str, str]] = []

    def turn(ua: str, ur: str, aa: str, ar: str) -> None:
        turns.append({"user_action": ua, "user_reference": ur,
                      "assistant_action": aa, "assistant_reference": ar})

    for t in topics:
        p = f"T{t.index}"
        turn("topic_inquiry", f"{p}_Q", "requirement_prediction", f"{p}_N1")
        if rng.random() < 0.5:  # two confirmations: the second need is inferred too
            turn("requirement_confirmation", f"{p}_N1", "requirement_prediction", f"{p}_N2")
            turn("requirement_confirmation", f"{p}_N2", "solution_proposal", f"{p}_S1")
        else:
            turn("requirement_confirmation", f"{p}_N1", "solution_proposal", f"{p}_S1")
        for j in range(1, len(t.proposals) + 1):
            if rng.random() < discussion_rate:
                turn("solution_discussion", f"{p}_S{j}", "solution_discussion", f"{p}_S{j}")
            if j < len(t.proposals):
                turn("solution_feedback", f"{p}_S{j}", "solution_proposal", f"{p}_S{j + 1}")
            else:
                turn("solution_feedback", f"{p}_S{j}", "feedback_response", f"{p}_S{j}")
    return turns


# The seed's action grammar as a regular language over (user, assistant) action pairs:
# per topic, inquiry, 1-2 confirmations, then per solution an optional discussion and
# the feedback (answered by the next proposal, or by a feedback response at the end).
_PAIR_LETTERS = {
    ("topic_inquiry", "requirement_prediction"): "Q",
    ("requirement_confirmation", "requirement_prediction"): "C",
    ("requirement_confirmation", "solution_proposal"): "P",
    ("solution_discussion", "solution_discussion"): "D",
    ("solution_feedback", "solution_proposal"): "F",
    ("solution_feedback", "feedback_response"): "R",
}
ACTION_GRAMMAR = re.compile(r"^(QC?P(D?F)*D?R)+$")


def conforms_to_grammar(pairs: Sequence[tuple[str, str]]) -> bool:
    """Does a sequence of (user action, assistant action) turns follow the action grammar?"""
    letters = "".join(_PAIR_LETTERS.get(tuple(p), "?") for p in pairs)
    return bool(ACTION_GRAMMAR.match(letters))


def reference_texts(topics: Sequence[TopicPlan]) -> dict[str, str]:
    """What each reference label of the skeleton stands for, for the dialogue prompt."""
    refs: dict[str, str] = {}
    for t in topics:
        p = f"T{t.index}"
        refs[f"{p}_Q"] = t.requirement.user_query
        for n, need in enumerate(t.requirement.implicit_needs, start=1):
            refs[f"{p}_N{n}"] = f"{need.need} (evidence: {'; '.join(need.evidences)})"
        for j, (solution, feedback, reason) in enumerate(t.proposals, start=1):
            refs[f"{p}_S{j}"] = f"{solution} (feedback: {feedback}; reason: {reason})"
    return refs


def months_before(reference: dt.date, count: int) -> list[str]:
    """The `count` whole months before the reference date's month, oldest first."""
    year, month = reference.year, reference.month
    out = []
    for _ in range(count):
        month -= 1
        if month == 0:
            year, month = year - 1, 12
        out.append(f"{year:04d}-{month:02d}")
    return out[::-1]


def last_days(month: str) -> list[str]:
    year, m = map(int, month.split("-"))
    n = calendar.monthrange(year, m)[1]
    return [f"{month}-{d:02d}" for d in range(n - 2, n + 1)]


# --- the recipe --------------------------------------------------------------------


@dataclass
class _Session:
    row: SituationRow
    span: str
    experience: str | None = None


class PalRecipe:
    name = "pal"
    stages = (PROFILE, TIMELINE, REQUIREMENT_TYPES_STAGE, PREFERENCES_STAGE, SITUATIONS_STAGE,
              EXPERIENCE, REQUIREMENTS, CANDIDATES, SOLUTION_PREFERENCES, LOGS_STAGE, DIALOGUE)
    tables: tuple[Table, ...] = (PERSONAS, PAL_PROFILES, TIMELINES, REQUIREMENT_TYPES, PREFERENCES,
                                 SITUATIONS, EXPERIENCES, TOPICS, CANDIDATE_SOLUTIONS, LOGS,
                                 DIALOGUE_TURNS)
    statistics = {
        "sessions_per_user": "SELECT avg(n) FROM (SELECT persona_id, count(*) n FROM situations GROUP BY 1)",
        "dialogue_turns_per_user": """SELECT avg(n) FROM (SELECT s.persona_id, count(DISTINCT (d.situation_id, d.turn_index)) n
            FROM dialogue_turns d JOIN situations s USING (situation_id) GROUP BY 1)""",
        "topics_per_dialogue": """SELECT avg(n) FROM (SELECT situation_id, count(*) n FROM topics
            WHERE situation_id IN (SELECT situation_id FROM dialogue_turns) GROUP BY 1)""",
        "logs_per_session": "SELECT avg(n) FROM (SELECT situation_id, count(*) n FROM logs GROUP BY 1)",
        "candidate_feedback": "SELECT string_agg(feedback || '=' || n, ' ' ORDER BY feedback) FROM "
                              "(SELECT feedback, count(*) n FROM candidate_solutions GROUP BY 1)",
        "query_sessions": "SELECT count(*) FROM situations WHERE split = 'query'",
    }

    def __init__(self, options: Mapping[str, Any]):
        self.options = PalOptions.model_validate(dict(options))

    async def generate(self, ctx: PersonaContext) -> None:
        await self.generate_many([ctx])

    async def generate_many(self, contexts: Sequence[PersonaContext]) -> None:
        """Profiles in batches told to differ, then each persona's chain concurrently."""
        size = self.options.profile_batch_size
        batches = [list(contexts[i:i + size]) for i in range(0, len(contexts), size)]
        profiles: dict[str, PalProfile] = {}
        results = await asyncio.gather(*(self._profiles(batch) for batch in batches))
        for batch, result in zip(batches, results):
            if result.usable:
                profiles.update({ctx.persona.persona_id: p
                                 for ctx, p in zip(batch, result.output.profiles)})

        async def chain(ctx: PersonaContext) -> None:
            ctx.emit(PERSONAS, [ctx.persona])
            profile = profiles.get(ctx.persona.persona_id)
            if profile is not None:
                await self._persona(ctx, profile)
            ctx.done()

        await asyncio.gather(*(chain(ctx) for ctx in contexts))

    async def _profiles(self, batch: list[PersonaContext]) -> ItemResult:
        first = batch[0]
        return await first.run(PROFILE, {
            "personas": [c.persona.description for c in batch],
            "allow_students_retirees": self.options.allow_students_retirees,
        }, f"profiles/{first.persona.persona_id}+{len(batch) - 1}")

    async def _persona(self, ctx: PersonaContext, profile: PalProfile) -> None:
        pid = ctx.persona.persona_id
        b5 = profile.personality
        ctx.emit(PAL_PROFILES, [PalProfileRow(
            persona_id=pid, **profile.model_dump(exclude={"personality"}), **b5.model_dump())])
        background = profile.model_dump(mode="json")
        rng = ctx.derived_rng("pal")

        months = months_before(ctx.config.reference_date, rng.randint(*self.options.months))
        timeline = await ctx.run(TIMELINE, {"profile": background, "months": months},
                                 f"{pid}/timeline")
        if not timeline.usable:
            return
        entries = timeline.output.months
        ctx.emit(TIMELINES, [TimelineRow(persona_id=pid, month=m.month, summary=m.summary)
                             for m in entries])
        timeline_json = [m.model_dump() for m in entries]

        types = await ctx.run(REQUIREMENT_TYPES_STAGE, {"profile": background, "timeline": timeline_json},
                              f"{pid}/requirement_types")
        if not types.usable:
            return
        requirement_rows = [RequirementTypeRow(persona_id=pid, requirement_id=f"{aspect}-{i}",
                                               aspect=aspect, description=text)
                            for aspect in ASPECTS
                            for i, text in enumerate(getattr(types.output, aspect), start=1)]
        ctx.emit(REQUIREMENT_TYPES, requirement_rows)
        requirements = [r.model_dump() for r in requirement_rows]

        preference_results = await ctx.run_many(PREFERENCES_STAGE, [
            (f"{pid}/preferences/{aspect}", {
                "profile": background, "aspect": aspect,
                "requirements": [r for r in requirements if r["aspect"] == aspect]})
            for aspect in ASPECTS])
        preferences: dict[str, PreferenceRow] = {}
        for result in preference_results:
            if result.usable:
                for item in result.output.items:
                    preferences[item.requirement_id] = PreferenceRow(
                        persona_id=pid, requirement_id=item.requirement_id, pos=item.pos, neg=item.neg)
        ctx.emit(PREFERENCES, list(preferences.values()))

        sessions = await self._situations(ctx, background, requirements, entries)
        descriptions = {r["requirement_id"]: r["description"] for r in requirements}
        await asyncio.gather(*(
            self._session(ctx, background, s, sessions[i - 1] if i else None, descriptions,
                          preferences, rng=ctx.derived_rng(f"session/{s.row.situation_id}"))
            for i, s in enumerate(sessions)))

    async def _situations(self, ctx: PersonaContext, background: dict[str, Any],
                          requirements: list[dict[str, Any]], months: Sequence[Any]) -> list[_Session]:
        """Month by month, each month seeing the one before; the last month's tail is the query split."""
        pid = ctx.persona.persona_id
        low, high = self.options.situations_per_month
        sessions: list[_Session] = []
        previous: list[dict[str, Any]] = []
        for entry in months:
            previous_end = parse_span(previous[-1]["time_span"])[1].isoformat() if previous else None
            result = await ctx.run(SITUATIONS_STAGE, {
                "profile": background, "requirement_types": requirements, "previous": previous,
                "previous_end": previous_end, "month": entry.month, "month_summary": entry.summary,
                "min_situations": low, "max_situations": high, "last_days": last_days(entry.month),
            }, f"{pid}/situations/{entry.month}")
            if not result.usable:
                previous = []
                continue
            previous = [s.model_dump() for s in result.output.situations]
            for i, s in enumerate(result.output.situations):
                start, end = parse_span(s.time_span)
                sessions.append(_Session(SituationRow(
                    situation_id=f"{pid}-{entry.month}-s{i}", persona_id=pid, month=entry.month,
                    start_time=dt.datetime.combine(start, dt.time(0, 0)),
                    end_time=dt.datetime.combine(end, dt.time(self.options.session_hour, 0)),
                    requirement_ids=s.requirement_ids, text=s.situation, split="history"), s.time_span))
        if sessions:
            last_month = [s for s in sessions if s.row.month == sessions[-1].row.month]
            for s in last_month[len(last_month) - round(self.options.query_share * len(last_month)):]:
                s.row.split = "query"
        ctx.emit(SITUATIONS, [s.row for s in sessions])
        return sessions

    async def _session(self, ctx: PersonaContext, background: dict[str, Any], session: _Session,
                       previous: _Session | None, descriptions: dict[str, str],
                       preferences: dict[str, PreferenceRow], rng: random.Random) -> None:
        row = session.row
        session_time = row.end_time.strftime(MINUTE)
        experience = await ctx.run(EXPERIENCE, {
            "profile": background, "time_span": session.span, "situation": row.text,
            "session_time": session_time,
            "previous": {"time_span": previous.span, "text": previous.experience or previous.row.text}
            if previous else None,
        }, f"{row.situation_id}/experience")
        if not experience.usable:
            return
        text = experience.output.experience
        session.experience = text
        ctx.emit(EXPERIENCES, [ExperienceRow(situation_id=row.situation_id, text=text)])

        logs_job = ctx.run(LOGS_STAGE, {
            "profile": background, "time_span": session.span, "experience": text,
            "span_start": row.start_time.strftime(MINUTE), "span_end": session_time,
            "target_logs": self.options.target_logs, "min_logs": self.options.min_logs,
            "log_types": LOG_TYPES,
        }, f"{row.situation_id}/logs")
        topic_jobs = [self._topic(ctx, background, row, text, k, rid, descriptions, preferences, rng)
                      for k, rid in enumerate(row.requirement_ids, start=1)]
        logs, *topics = await asyncio.gather(logs_job, *topic_jobs)
        if logs.usable:
            ctx.emit(LOGS, [LogRow(log_id=f"{row.situation_id}-l{i:03d}", situation_id=row.situation_id,
                                   persona_id=row.persona_id,
                                   timestamp=dt.datetime.strptime(log.timestamp, MINUTE),
                                   log_type=log.type, event=log.event, content=log.content)
                            for i, log in enumerate(logs.output.logs)])
        plans = [t for t in topics if t is not None]
        if plans:
            await self._dialogue(ctx, background, row, plans, rng)

    async def _topic(self, ctx: PersonaContext, background: dict[str, Any], row: SituationRow,
                     experience: str, index: int, requirement_id: str, descriptions: dict[str, str],
                     preferences: dict[str, PreferenceRow], rng: random.Random) -> TopicPlan | None:
        """requirements → candidates (no profile) → solution preferences, for one topic."""
        topic_id = f"{row.situation_id}-T{index}"
        requirement = await ctx.run(REQUIREMENTS, {
            "profile": background, "situation": row.text, "experience": experience,
            "requirement_id": requirement_id,
            "requirement_description": descriptions.get(requirement_id, requirement_id),
        }, f"{topic_id}/requirements")
        if not requirement.usable:
            return None
        req: TopicRequirement = requirement.output
        candidates = await ctx.run(CANDIDATES, {
            "user_query": req.user_query, "requirement": req.requirement,
            "implicit_needs": [n.model_dump() for n in req.implicit_needs],
        }, f"{topic_id}/candidates")
        if not candidates.usable:
            return None
        solutions = candidates.output.solutions
        pref = preferences.get(requirement_id)
        rated = await ctx.run(SOLUTION_PREFERENCES, {
            "profile": background, "situation": row.text, "requirement": req.requirement,
            "pos": pref.pos if pref else "(not known)", "neg": pref.neg if pref else "(not known)",
            "candidates": solutions,
        }, f"{topic_id}/solution_preferences")
        if not rated.usable:
            return None
        prefs: SolutionPreferences = rated.output
        feedback = {r.solution: ("pos", r.reason) for r in prefs.liked}
        feedback.update({r.solution: ("neg", r.reason) for r in prefs.disliked})
        ctx.emit(TOPICS, [TopicRow(
            topic_id=topic_id, situation_id=row.situation_id, requirement_id=requirement_id,
            user_query=req.user_query, requirement=req.requirement,
            implicit_needs=[NeedRow(need=n.need, evidences=n.evidences) for n in req.implicit_needs])])
        ctx.emit(CANDIDATE_SOLUTIONS, [CandidateSolutionRow(
            topic_id=topic_id, candidate_index=i, solution=s, feedback=feedback.get(s, ("neu", None))[0],
            reason=feedback.get(s, ("neu", None))[1]) for i, s in enumerate(solutions)])
        return TopicPlan(index, requirement_id, req, choose_proposals(prefs, row.split, rng))

    async def _dialogue(self, ctx: PersonaContext, background: dict[str, Any], row: SituationRow,
                        topics: list[TopicPlan], rng: random.Random) -> None:
        # A topic that lost its framework is left out; the others keep their labels (T1, T3, …)
        # so each reference still names its row in `topics`.
        skeleton = build_skeleton(topics, rng, self.options.discussion_rate)
        result = await ctx.run(DIALOGUE, {
            "profile": background, "situation": row.text, "references": reference_texts(topics),
            "skeleton": skeleton,
        }, f"{row.situation_id}/dialogue")
        if not result.usable:
            return
        rows = []
        for i, turn in enumerate(result.output.turns, start=1):
            for speaker in ("user", "assistant"):
                u = getattr(turn, speaker)
                rows.append(DialogueTurnRow(situation_id=row.situation_id, turn_index=i,
                                            speaker=speaker, action=u.action, reference=u.reference,
                                            content=u.content))
        ctx.emit(DIALOGUE_TURNS, rows)
