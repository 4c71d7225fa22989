"""pal's per-persona chain (PAL-Bench / PAL-Set, seed 004 and the Mem-PAL code).

Per shard: `profile` in batches written from scratch, told to differ. Per persona:
  timeline → requirement_types → preferences (per aspect, seeing the timeline) →
  situations (month by month, the previous month as context) → per situation:
  experience (the previous situation as context) and logs; per situation sampled into
  a dialogue session: requirements (all topics at once) → candidates (all topics at
  once) → solution_preferences (per topic) → a skeleton built in code → dialogue.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from flows.pal import emotions as pal_emotions
from flows.pal import report, review
from flows.pal import rules as recipe_rules
from flows.pal import stages as S
from flows.pal.checks import parse_span, profile_problems
from flows.pal.options import LOG_TYPES, PalOptions
from flows.pal.plan import (
    ACTION_LABELS,
    MINUTE,
    TopicPlan,
    build_skeleton,
    labelled,
    last_days,
    months_before,
    plan_topic,
    references,
    sample_dialogues,
    situation_times,
)
from memsynth.core.records import PERSONAS, PersonaRow
from memsynth.core.tables import Table
from memsynth.generation.recipe import PersonaContext, Recipe
from memsynth.generation.stage import ItemResult
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
    CandidateSolutionRow,
    DialogueTurnRow,
    ExperienceRow,
    LogRow,
    NeedRow,
    PalProfile,
    PalProfileRow,
    PreferenceRow,
    RequirementTypeRow,
    SituationRow,
    TimelineRow,
    TopicRequirement,
    TopicRow,
)

# The five zh users released in shared/reference-data/pal (tests/test_pal_reference.py
# recomputes each figure from the files); the paper reports 28.9 sessions a user.
SEED_FIGURES = {
    "sessions_per_user": 27.8,
    "dialogues_per_month": 2.94,
    "logs_per_session": 35.68,
    "topics_per_dialogue": 2.47,
    "solutions_per_history_topic": 2.24,
    "dialogue_turns_per_session": 13.87,
    "first_dialogue_hour": 12,
    "last_dialogue_hour": 21,
}

STATISTICS = {
    "sessions_per_user": "SELECT avg(n) FROM (SELECT persona_id, count(*) FILTER (WHERE has_dialogue) n "
                         "FROM situations GROUP BY 1)",
    "dialogues_per_month": "SELECT avg(n / m) FROM (SELECT persona_id, count(*) FILTER (WHERE has_dialogue) n, "
                           "count(DISTINCT month) m FROM situations GROUP BY 1)",
    "logs_per_session": "SELECT avg(n) FROM (SELECT session_id, count(*) n FROM logs "
                        "WHERE session_id IN (SELECT situation_id FROM dialogue_turns) GROUP BY 1)",
    "topics_per_dialogue": """SELECT avg(n) FROM (SELECT situation_id, count(*) n FROM topics
        WHERE situation_id IN (SELECT situation_id FROM dialogue_turns) GROUP BY 1)""",
    "solutions_per_history_topic": """SELECT avg(n) FROM (SELECT d.situation_id, split_part(d.reference, '_', 1),
            count(*) n FROM dialogue_turns d JOIN situations s USING (situation_id)
        WHERE s.split = 'history' AND d.action = 'solution_proposal' GROUP BY 1, 2)""",
    "dialogue_turns_per_session": "SELECT avg(n) FROM (SELECT situation_id, max(turn_index) n "
                                  "FROM dialogue_turns GROUP BY 1)",
    "first_dialogue_hour": "SELECT min(hour(end_time)) FROM situations WHERE has_dialogue",
    "last_dialogue_hour": "SELECT max(hour(end_time)) FROM situations WHERE has_dialogue",
    "candidate_feedback": "SELECT string_agg(feedback || '=' || n, ' ' ORDER BY feedback) FROM "
                          "(SELECT feedback, count(*) n FROM candidate_solutions GROUP BY 1)",
    "query_sessions": "SELECT count(*) FROM situations WHERE has_dialogue AND split = 'query'",
}


@dataclass
class _Situation:
    row: SituationRow
    span: str  # "YYYY-MM-DD ~ YYYY-MM-DD", as the situations stage wrote it


def without_personality(background: dict[str, Any]) -> dict[str, Any]:
    """The profile without its Big Five: the authors' situation.py deletes it before situations
    and experiences, which are events, not character."""
    return {k: v for k, v in background.items() if k != "personality"}


class PalRecipe(Recipe):
    """A personalized assistant that reads the user's device logs and dialogue history
    to propose solutions they will like (PAL-Bench / PAL-Set)."""

    name = "pal"
    options_model = PalOptions
    options: PalOptions
    stages = S.STAGES
    tables: tuple[Table, ...] = (PERSONAS, PAL_PROFILES, TIMELINES, REQUIREMENT_TYPES, PREFERENCES,
                                 SITUATIONS, EXPERIENCES, TOPICS, CANDIDATE_SOLUTIONS, LOGS,
                                 DIALOGUE_TURNS)
    benchmark_tables = (LOGS, DIALOGUE_TURNS)
    statistics = STATISTICS
    seed_figures = SEED_FIGURES
    report_figures = report.FIGURES
    report_texts = report.TEXTS
    report_personas = report.PERSONAS
    review_tasks = review.TASKS
    rules = recipe_rules.RULES
    emotion_source = pal_emotions.SOURCE
    persona_slots = True

    async def prepare_shard(self, contexts: Sequence[PersonaContext]) -> None:
        """Profiles in batches told to differ; each valid one is left in `ctx.prepared`.

        A batch is fixed by the personas' ordinals (users 0000-0004, 0005-0009, ...) and always
        asks for a full batch, so growing a build never changes an earlier user's request:
        its answer comes from the cache and every row downstream of it stays as it was.
        """
        size = self.options.profile_batch_size
        batches: dict[int, list[tuple[int, PersonaContext]]] = {}
        for position, ctx in enumerate(contexts):
            ordinal = ctx.persona.ordinal if ctx.persona.ordinal is not None else position
            batches.setdefault(ordinal // size, []).append((ordinal, ctx))
        results = await asyncio.gather(*(self._profiles(k, members[0][1]) for k, members in batches.items()))
        for (k, members), result in zip(batches.items(), results):
            for ordinal, ctx in members:
                ctx.prepared = self._valid_profile(result, ordinal - k * size)

    async def generate(self, ctx: PersonaContext) -> None:
        """The persona's chain, if its profile was written."""
        if ctx.prepared is not None:
            await self._persona(ctx, ctx.prepared)

    async def _profiles(self, k: int, asker: PersonaContext) -> ItemResult:
        size = self.options.profile_batch_size
        ids = [f"{o:04d}" for o in range(k * size, (k + 1) * size)]
        return await asker.run(S.PROFILE, {
            "batch_size": size, "user_ids": ids,
            "allow_students_retirees": self.options.allow_students_retirees,
        }, f"profiles/{ids[0]}-{ids[-1]}")

    def _valid_profile(self, result: ItemResult, i: int) -> PalProfile | None:
        """The batch's `i`-th profile, unless it is bad: one bad profile costs only its own persona."""
        if result.output is None or i >= len(result.output.profiles):
            return None
        profile = result.output.profiles[i]
        return None if any(profile_problems(i, profile, self.options.allow_students_retirees)) else profile

    async def _persona(self, ctx: PersonaContext, profile: PalProfile) -> None:
        pid = ctx.persona.persona_id
        background = profile.model_dump(mode="json")
        rng = ctx.derived_rng("pal")
        months = months_before(ctx.config.reference_date, rng.randint(*self.options.months))

        timeline = await ctx.run(S.TIMELINE, {"profile": background, "months": months}, f"{pid}/timeline")
        if not timeline.usable:
            return
        entries = timeline.output.months
        timeline_json = [m.model_dump() for m in entries]
        types = await ctx.run(S.REQUIREMENT_TYPES, {"profile": background, "timeline": timeline_json},
                              f"{pid}/requirement_types")
        if not types.usable:
            return
        requirement_rows = [RequirementTypeRow(persona_id=pid, requirement_id=f"{aspect}-{i}",
                                               aspect=aspect, description=text)
                            for aspect in ASPECTS
                            for i, text in enumerate(getattr(types.output, aspect), start=1)]
        requirements = [r.model_dump() for r in requirement_rows]
        preference_results = await ctx.run_many(S.PREFERENCES, [
            (f"{pid}/preferences/{aspect}", {
                "profile": background, "timeline": timeline_json, "aspect": aspect,
                "requirements": [r for r in requirements if r["aspect"] == aspect]})
            for aspect in ASPECTS])
        # A requirement type without preferences would leave its topics without gold
        # feedback: the persona goes, rather than a "(not known)" reaching the labels.
        if not all(r.usable for r in preference_results):
            return
        preferences = {item.requirement_id: PreferenceRow(
            persona_id=pid, requirement_id=item.requirement_id, analysis=item.analysis,
            pos=item.pos, neg=item.neg) for r in preference_results for item in r.output.items}

        written = (f"{profile.name}, {profile.age}: {profile.occupation}")
        ctx.emit(PERSONAS, [PersonaRow(persona_id=pid, description=written, source="pal:profile",
                                                  ordinal=ctx.persona.ordinal)])
        ctx.emit(PAL_PROFILES, [PalProfileRow(
            persona_id=pid, **profile.model_dump(exclude={"personality"}), **profile.personality.model_dump())])
        ctx.emit(TIMELINES, [TimelineRow(persona_id=pid, month=m.month, summary=m.summary) for m in entries])
        ctx.emit(REQUIREMENT_TYPES, requirement_rows)
        ctx.emit(PREFERENCES, list(preferences.values()))

        situations = await self._situations(ctx, background, requirements, entries, query_month=months[-1])
        descriptions = {r["requirement_id"]: r["description"] for r in requirements}
        logs = await asyncio.gather(*(
            self._situation(ctx, background, s, situations[i - 1] if i else None, descriptions, preferences)
            for i, s in enumerate(situations)))
        # A log belongs to the window of the next dialogue session (its own situation's included).
        session: str | None = None
        for s, rows in reversed(list(zip(situations, logs))):
            if s.row.has_dialogue:
                session = s.row.situation_id
            for row in rows:
                row.session_id = session
        ctx.emit(LOGS, [row for rows in logs for row in rows])

    async def _situations(self, ctx: PersonaContext, background: dict[str, Any],
                          requirements: list[dict[str, Any]], months: Sequence[Any],
                          query_month: str) -> list[_Situation]:
        """Month by month, each month seeing the one before; then which become dialogues."""
        pid = ctx.persona.persona_id
        low, high = self.options.situations_per_month
        out: list[_Situation] = []
        previous: list[dict[str, Any]] = []
        for entry in months:
            previous_end = parse_span(previous[-1]["time_span"])[1].isoformat() if previous else None
            result = await ctx.run(S.SITUATIONS, {
                "profile": without_personality(background), "requirement_types": requirements, "previous": previous,
                "previous_end": previous_end, "month": entry.month, "month_summary": entry.summary,
                "min_situations": low, "max_situations": high, "last_days": last_days(entry.month),
            }, f"{pid}/situations/{entry.month}")
            if not result.usable:
                previous = []
                continue
            previous = [s.model_dump() for s in result.output.situations]
            for i, s in enumerate(result.output.situations):
                situation_id = f"{pid}-{entry.month}-s{i}"
                start, end = situation_times(*parse_span(s.time_span), ctx.derived_rng(f"times/{situation_id}"))
                out.append(_Situation(SituationRow(
                    situation_id=situation_id, persona_id=pid, month=entry.month, start_time=start,
                    end_time=end, requirement_ids=s.requirement_ids, text=s.situation, has_dialogue=False,
                    split="query" if entry.month == query_month else "history"), s.time_span))
        chosen = sample_dialogues([s.row.month for s in out], query_month, ctx.derived_rng("dialogues"),
                                  rate=self.options.dialogue_rate, max_skipped=self.options.max_skipped)
        for s, keep in zip(out, chosen):
            s.row.has_dialogue = keep
        ctx.emit(SITUATIONS, [s.row for s in out])
        return out

    async def _situation(self, ctx: PersonaContext, background: dict[str, Any], situation: _Situation,
                         previous: _Situation | None, descriptions: dict[str, str],
                         preferences: dict[str, PreferenceRow]) -> list[LogRow]:
        """Experience, then its logs and, for a dialogue session, the dialogue; returns the logs."""
        row = situation.row
        span_start, span_end = row.start_time.strftime(MINUTE), row.end_time.strftime(MINUTE)
        # The previous *situation*, as the seed does: it exists before any experience does,
        # so the prompt never depends on which call finished first.
        experience = await ctx.run(S.EXPERIENCE, {
            "profile": without_personality(background), "time_span": f"{span_start} ~ {span_end}", "situation": row.text,
            "span_end": span_end,
            "previous": {"time_span": f"{previous.row.start_time.strftime(MINUTE)} ~ "
                                      f"{previous.row.end_time.strftime(MINUTE)}",
                         "text": previous.row.text} if previous else None,
        }, f"{row.situation_id}/experience")
        if not experience.usable:
            return []
        text = experience.output.experience
        ctx.emit(EXPERIENCES, [ExperienceRow(situation_id=row.situation_id, text=text)])
        logs_job = ctx.run(S.LOGS, {
            "profile": background, "time_span": f"{span_start} ~ {span_end}", "experience": text,
            "span_start": span_start, "span_end": span_end, "min_logs": self.options.min_logs,
            "log_types": LOG_TYPES,
        }, f"{row.situation_id}/logs")
        if row.has_dialogue:
            logs, _ = await asyncio.gather(
                logs_job, self._session(ctx, background, row, text, descriptions, preferences))
        else:
            logs = await logs_job
        if not logs.usable:
            return []
        return [LogRow(log_id=f"{row.situation_id}-l{i:03d}", situation_id=row.situation_id, session_id=None,
                       persona_id=row.persona_id, timestamp=dt.datetime.strptime(log.timestamp, MINUTE),
                       log_type=log.type, event=log.event, content=log.content)
                for i, log in enumerate(logs.output.logs)]

    async def _session(self, ctx: PersonaContext, background: dict[str, Any], row: SituationRow,
                       experience: str, descriptions: dict[str, str],
                       preferences: dict[str, PreferenceRow]) -> None:
        """requirements → candidates for all topics at once → preferences per topic → dialogue."""
        sid = row.situation_id
        framework = await ctx.run(S.REQUIREMENTS, {
            "profile": background, "situation": row.text, "experience": experience,
            "topics": [{"requirement_id": r, "description": descriptions[r]} for r in row.requirement_ids],
        }, f"{sid}/requirements")
        if not framework.usable:
            return
        topics: list[TopicRequirement] = framework.output.topics
        candidates = await ctx.run(S.CANDIDATES, {"topics": [t.model_dump() for t in topics]},
                                   f"{sid}/candidates")
        if not candidates.usable:
            return
        plans = await asyncio.gather(*(
            self._topic(ctx, background, row, k, topic, solutions.solutions, preferences[topic.requirement_id])
            for k, (topic, solutions) in enumerate(zip(topics, candidates.output.topics), start=1)))
        if all(p is not None for p in plans):
            await self._dialogue(ctx, background, row, [p for p in plans if p is not None])

    async def _topic(self, ctx: PersonaContext, background: dict[str, Any], row: SituationRow, index: int,
                     topic: TopicRequirement, solutions: list[str], preference: PreferenceRow) -> TopicPlan | None:
        topic_id = f"{row.situation_id}-T{index}"
        rated = await ctx.run(S.SOLUTION_PREFERENCES, {
            "profile": background, "situation": row.text,
            "requirement": topic.model_dump(exclude={"requirement_id"}),
            "pos": preference.pos, "neg": preference.neg, "candidates": solutions,
        }, f"{topic_id}/solution_preferences")
        if not rated.usable:
            return None
        prefs = rated.output
        feedback = {r.solution: ("pos", r.reason) for r in prefs.liked}
        feedback.update({r.solution: ("neg", r.reason) for r in prefs.disliked})
        ctx.emit(TOPICS, [TopicRow(
            topic_id=topic_id, situation_id=row.situation_id, requirement_id=topic.requirement_id,
            user_query=topic.user_query, requirement=topic.requirement,
            implicit_needs=[NeedRow(need=n.need, evidences=n.evidences) for n in topic.implicit_needs])])
        # Stored in an order drawn from the build seed, whatever the model picked: where the
        # liked solutions stand must carry no signal (the real release often lists them first,
        # so "pick S1 and S2" would score without reading anything).
        order = list(solutions)
        ctx.derived_rng(f"candidates/{topic_id}").shuffle(order)
        ctx.emit(CANDIDATE_SOLUTIONS, [CandidateSolutionRow(
            topic_id=topic_id, candidate_index=i, solution=s, feedback=feedback.get(s, ("neu", None))[0],
            reason=feedback.get(s, ("neu", None))[1]) for i, s in enumerate(order)])
        return plan_topic(index, topic.requirement_id, topic, prefs, row.split,
                          ctx.derived_rng(f"plan/{topic_id}"))

    async def _dialogue(self, ctx: PersonaContext, background: dict[str, Any], row: SituationRow,
                        topics: list[TopicPlan]) -> None:
        skeleton = build_skeleton(topics, ctx.derived_rng(f"skeleton/{row.situation_id}"))
        result = await ctx.run(S.DIALOGUE, {
            "profile": background, "situation": row.text, "split": row.split,
            "framework": references(topics), "skeleton": labelled(skeleton, ctx.language),
        }, f"{row.situation_id}/dialogue")
        if not result.usable:
            return
        codes = {label: code for code, label in ACTION_LABELS[ctx.language].items()}
        ctx.emit(DIALOGUE_TURNS, [
            DialogueTurnRow(situation_id=row.situation_id, turn_index=i, speaker=speaker,
                            action=codes[getattr(turn, speaker).action],
                            reference=getattr(turn, speaker).reference, content=getattr(turn, speaker).content)
            for i, turn in enumerate(result.output.turns, start=1) for speaker in ("user", "assistant")])


