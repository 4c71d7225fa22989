"""enpmr's per-persona chain (ENPMR-Bench, seed 000).

  profile → life_themes → relationship / power / goal / highlight (per theme) + preferences
  → memory_session (per memory) and, per planned dialogue: scene → scenario_consistency
  (the self-check, before any dialogue) → support_dialogue → faithfulness, blri → benchmark.
When the persona pool is too small, `persona` writes new personas first (see the build flow).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

from flows.enpmr import emotions as enpmr_emotions
from flows.enpmr import report, review
from flows.enpmr import rules as recipe_rules
from flows.enpmr import stages as S
from flows.enpmr.options import (
    BLRI_ITEMS,
    MIN_PREFERENCES,
    NEEDS,
    PERSONA_ATTRIBUTES,
    RECALL_LIMIT,
    SEED_CATEGORY_SHARES,
    SESSION_TURNS,
    YEARS_OF_HISTORY,
    EnpmrOptions,
)
from flows.enpmr.plan import DialoguePlan, memory_details, memory_text, plan_dialogues
from memsynth.core.records import PERSONAS, STAGE_FAILURES, StageFailureRow
from memsynth.core.tables import Table, trusted_row
from memsynth.generation.recipe import PersonaContext, Recipe
from memsynth.generation.stage import ItemResult
from schemas.enpmr import (
    BENCHMARK,
    LIFE_THEMES,
    MEMORIES,
    MEMORY_SESSIONS,
    NEGATIVES,
    PROFILES,
    QUALITY_CHECKS,
    SUPPORT_DIALOGUES,
    BenchmarkRow,
    DialogueTurn,
    Faithfulness,
    LifeThemeRow,
    MemoryRow,
    MemorySessionRow,
    NegativeRow,
    Profile,
    ProfileRow,
    QualityCheckRow,
    ScenarioCheck,
    SupportDialogue,
    SupportDialogueRow,
)

_SHARE = "SELECT round(100.0 * count(*) FILTER (WHERE category = '{c}') / count(*), 1) FROM memories"
STATISTICS = {
    **{f"{c}_share_pct": _SHARE.format(c=c) for c in SEED_CATEGORY_SHARES},
    "dialogues_per_persona": "SELECT count(*) / (SELECT count(*) FROM profiles) FROM benchmark",
    "turns_per_dialogue": "SELECT avg(len(turns)) FROM benchmark",
    "negatives_per_dialogue": "SELECT avg(len(negative_memory_ids)) FROM benchmark",
    "memory_session_turns": "SELECT avg(n) FROM (SELECT memory_id, count(*) n FROM memory_sessions GROUP BY 1)",
    # What the BLRI filter does: every judged dialogue's mean, and the share the threshold kept.
    "blri_mean_quartiles": f"SELECT printf('%.2f / %.2f / %.2f', quantile_cont(score, 0.25), "
                           f"median(score), quantile_cont(score, 0.75)) FROM {report.BLRI_JUDGED}",
    "blri_kept_pct": f"SELECT round(100.0 * avg(passed::INT), 1) FROM {report.BLRI_JUDGED}",
}
# ENPMR-Bench's published figures (seed 000, §3.2): 11,846 memories, 1,872 dialogues of
# about four turns, 10-20 turn memory sessions.
SEED_FIGURES = {
    **{f"{c}_share_pct": round(100 * s, 1) for c, s in SEED_CATEGORY_SHARES.items()},
    "turns_per_dialogue": 4.0,
}


def history_window(reference: dt.date) -> tuple[dt.date, dt.date]:
    """The five years before the reference date, inclusive."""
    try:
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY)
    except ValueError:  # 29 February
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY, day=28)
    return start, reference


def profile_summary(profile: Mapping[str, Any]) -> str:
    keys = ("name", "age", "gender", "occupation", "personality", "social", "emotional_pattern",
            "communication_style")
    return json.dumps({k: profile[k] for k in keys}, ensure_ascii=False, indent=1)


class EnpmrRecipe(Recipe):
    """Emotional support dialogues that must recall the one memory able to meet the user's
    unmet need (ENPMR-Bench)."""

    name = "enpmr"
    options_model = EnpmrOptions
    options: EnpmrOptions
    persona_stage = S.PERSONA
    stages = S.STAGES
    tables: tuple[Table, ...] = (PERSONAS, PROFILES, LIFE_THEMES, MEMORIES, MEMORY_SESSIONS,
                                 SUPPORT_DIALOGUES, NEGATIVES, QUALITY_CHECKS, BENCHMARK)
    benchmark_tables = (BENCHMARK,)
    statistics = STATISTICS
    seed_figures = SEED_FIGURES
    report_figures = report.FIGURES
    report_texts = report.TEXTS
    report_personas = report.PERSONAS
    review_tasks = review.TASKS
    rules = recipe_rules.RULES
    judge_labels = review.JUDGE_LABELS
    emotion_source = enpmr_emotions.SOURCE

    def benchmark(self) -> tuple[Table, ...]:
        # Asked for no dialogues (dialogues_per_persona: 0), a build is its memory bank.
        return self.benchmark_tables if self.options.dialogues_per_persona else (MEMORIES,)

    @property
    def dedup_threshold(self) -> float:
        return self.options.persona_dedup_threshold

    def persona_variables(self, rng: random.Random, language: str = "en") -> dict[str, Any]:
        """Attributes for one synthesized persona, sampled from `data/persona_attributes.json`."""
        lists = json.loads(PERSONA_ATTRIBUTES.read_text(encoding="utf-8"))
        if language != "en":  # the same draws, worded in the build's language
            lists = {**lists, **lists[language]}
        return {
            "occupation": rng.choice(lists["occupations"]),
            "age_band": rng.choice(lists["age_bands"]),
            "region": rng.choice(lists["regions"]),
            "life_stage": rng.choice(lists["life_stages"]),
            "interests": rng.sample(lists["interests"], 2),
        }

    async def generate(self, ctx: PersonaContext) -> None:
        pid = ctx.persona.persona_id
        ctx.emit(PERSONAS, [ctx.persona])
        profile = await ctx.run(S.PROFILE, {"persona": ctx.persona.description}, f"{pid}/profile")
        if not profile.usable:
            return
        p: Profile = profile.output
        ctx.emit(PROFILES, [ProfileRow(persona_id=pid, **p.model_dump())])

        window_start, _ = history_window(ctx.config.reference_date)
        themes = await ctx.run(S.LIFE_THEMES, {
            "profile": p.model_dump(mode="json"), "window_start": window_start.isoformat(),
            "min_themes": self.options.min_life_themes,
        }, f"{pid}/life_themes")
        if not themes.usable:
            return
        theme_rows = [
            LifeThemeRow(theme_id=f"{pid}-t{i:02d}", persona_id=pid, theme=t.theme,
                         description=t.description, start_date=t.start_date)
            for i, t in enumerate(sorted(themes.output.themes, key=lambda t: t.start_date))]
        ctx.emit(LIFE_THEMES, theme_rows)

        memories = await self._memories(ctx, p, theme_rows, window_start)
        ctx.emit(MEMORIES, memories)
        summary = profile_summary(p.model_dump(mode="json"))
        await asyncio.gather(self._sessions(ctx, memories, summary),
                             self._dialogues(ctx, memories, theme_rows, summary))

    async def _memories(self, ctx: PersonaContext, profile: Profile, themes: list[LifeThemeRow],
                        window_start: dt.date) -> list[MemoryRow]:
        pid = ctx.persona.persona_id
        profile_json = profile.model_dump(mode="json")
        jobs = []
        for theme in themes:
            for category, (stage, minimums) in S.THEME_MEMORY_STAGES.items():
                variables = {"profile": profile_json, "theme": theme.model_dump(mode="json"), **minimums}
                jobs.append((category, theme, ctx.run(stage, variables, f"{theme.theme_id}/{category}")))
        preferences = ctx.run(S.PREFERENCES, {"profile": profile_json, "min_items": MIN_PREFERENCES,
                                              "window_start": window_start.isoformat()}, f"{pid}/preferences")
        results = await asyncio.gather(*(job for _, _, job in jobs), preferences)
        rows: list[MemoryRow] = []
        for (category, theme, _), result in zip(jobs, results[:-1]):
            rows += self._memory_rows(ctx, result, category, theme)
        rows += self._memory_rows(ctx, results[-1], "preference", None)
        return rows

    def _memory_rows(self, ctx: PersonaContext, result: ItemResult, category: str,
                     theme: LifeThemeRow | None) -> list[MemoryRow]:
        if not result.usable:
            return []
        pid = ctx.persona.persona_id
        prefix = theme.theme_id if theme else pid
        rows = []
        for i, item in enumerate(result.output.items):
            fields = item.model_dump(mode="json")
            rows.append(MemoryRow(
                memory_id=f"{prefix}-{category}-{i:02d}", persona_id=pid,
                theme_id=theme.theme_id if theme else None, category=category, date=item.date,
                name=item.name, text=memory_text(category, fields, theme.theme if theme else None, ctx.language),
                attributes={k: v for k, v in fields.items() if k not in ("name", "date")}))
        return rows

    async def _sessions(self, ctx: PersonaContext, memories: list[MemoryRow], summary: str) -> None:
        low, high = SESSION_TURNS
        ordered = sorted(memories, key=lambda m: (m.date, m.memory_id))
        results = await ctx.run_many(S.MEMORY_SESSION, [
            (f"{m.memory_id}/session", {
                "profile_summary": summary, "category": m.category, "memory_text": m.text,
                "memory": {"name": m.name, "date": m.date.isoformat(),
                           "details": memory_details(m.category, m.name, m.attributes)},
                "min_turns": low, "max_turns": high})
            for m in ordered])
        rows = []
        for memory, result in zip(ordered, results):
            if result.usable:
                # Built from a validated answer: skip re-validating thousands of turn rows.
                rows += [trusted_row(MemorySessionRow, {
                    "memory_id": memory.memory_id, "persona_id": memory.persona_id, "turn_index": i,
                    "role": t.role, "content": t.content}) for i, t in enumerate(result.output.turns)]
        ctx.emit(MEMORY_SESSIONS, rows)

    async def _dialogues(self, ctx: PersonaContext, memories: list[MemoryRow],
                         themes: list[LifeThemeRow], summary: str) -> None:
        plans = plan_dialogues(ctx.persona.persona_id, memories, self.options, ctx.derived_rng("dialogues"))
        theme_names = {t.theme_id: t.theme for t in themes}
        await asyncio.gather(*(self._dialogue(ctx, plan, theme_names, summary) for plan in plans))

    async def _scene(self, ctx: PersonaContext, plan: DialoguePlan, context: dict[str, Any]
                     ) -> tuple[str, QualityCheckRow] | None:
        """A scene that passes the self-check, trying up to `scene_attempts` scenes."""
        key = plan.dialogue_id
        verdict: QualityCheckRow | None = None
        for attempt in range(self.options.scene_attempts):
            scene = await ctx.run(S.SCENE, context, f"{key}/scene", sample=attempt)
            if not scene.usable:
                continue
            judged = await ctx.run(S.SCENARIO_CONSISTENCY, {**context, "scene": scene.output.scene},
                                   f"{key}/scenario_consistency/{attempt}")
            verdict = judge_scenario(key, judged, self.options.scenario_min_score)
            if verdict.passed:
                return scene.output.scene, verdict
        ctx.output.tally_check("scenario_consistency", False)
        ctx.emit(STAGE_FAILURES, [StageFailureRow(
            stage=S.SCENARIO_CONSISTENCY.qualified_name, item_key=key, persona_id=ctx.persona.persona_id,
            action="dropped", problems=[f"no scene of {self.options.scene_attempts} passed the self-check"]
            + ([json.dumps(verdict.details, ensure_ascii=False)] if verdict else []))])
        return None

    async def _dialogue(self, ctx: PersonaContext, plan: DialoguePlan, theme_names: dict[str, str],
                        summary: str) -> None:
        o = self.options
        need_name, need_description = NEEDS[ctx.language][plan.need]
        target = plan.target
        context = {
            "profile_summary": summary, "theme_name": theme_names.get(target.theme_id or "", ""),
            "need_name": need_name, "need_description": need_description, "category": target.category,
            "target": {"name": target.name, "text": target.text,
                       "details": memory_details(target.category, target.name, target.attributes)},
            "negatives": [m.text for m in plan.negatives],
        }
        found = await self._scene(ctx, plan, context)
        if found is None:
            return
        scene, scenario = found
        result = await ctx.run(S.SUPPORT_DIALOGUE, {
            **context, "scene": scene, "min_turns": 2, "max_turns": 6,
            "recall_limit": RECALL_LIMIT[ctx.language]}, f"{plan.dialogue_id}/dialogue")
        if not result.usable:
            return
        dialogue: SupportDialogue = result.output
        turns = [DialogueTurn(role=t.role, content=t.content) for t in dialogue.turns]
        turn_dicts = [t.model_dump() for t in turns]
        ctx.emit(SUPPORT_DIALOGUES, [SupportDialogueRow(
            dialogue_id=plan.dialogue_id, persona_id=target.persona_id, need=plan.need,
            target_memory_id=target.memory_id, negative_memory_ids=[m.memory_id for m in plan.negatives],
            theme_id=target.theme_id, scene=scene, turns=turns, memory_turn=dialogue.memory_turn)])
        ctx.emit(NEGATIVES, [NegativeRow(dialogue_id=plan.dialogue_id, memory_id=m.memory_id, rank=r)
                             for r, m in enumerate(plan.negatives, start=1)])

        key = plan.dialogue_id
        faithful, blri = await asyncio.gather(
            ctx.run(S.FAITHFULNESS, {"target": context["target"], "negatives": context["negatives"],
                                     "turns": turn_dicts, "memory_turn": dialogue.memory_turn},
                    f"{key}/faithfulness"),
            ctx.run(S.BLRI, {"turns": turn_dicts, "items": BLRI_ITEMS, "points": o.blri_points()},
                    f"{key}/blri"))
        checks = [scenario, judge_faithfulness(key, faithful, o.faithfulness_min_score),
                  judge_blri(key, blri, o.blri_scale, o.blri_threshold)]
        ctx.emit(QUALITY_CHECKS, checks)
        for row in checks:
            ctx.output.tally_check(row.check_name, row.passed)
        if all(c.passed for c in checks):
            ctx.emit(BENCHMARK, [BenchmarkRow(
                dialogue_id=key, persona_id=target.persona_id, need=plan.need,
                target_memory_id=target.memory_id, target_category=target.category,
                theme_id=target.theme_id, scene=scene, turns=turns, memory_turn=dialogue.memory_turn,
                negative_memory_ids=[m.memory_id for m in plan.negatives], blri_mean=checks[2].score)])


# --- turning judge answers into quality_checks rows --------------------------------


def _unjudged(dialogue_id: str, name: str, result: ItemResult) -> QualityCheckRow:
    return QualityCheckRow(dialogue_id=dialogue_id, check_name=name, score=0.0, passed=False,
                           details={"error": "the judge gave no usable answer", "problems": result.problems})


def judge_scenario(dialogue_id: str, result: ItemResult, min_score: int) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "scenario_consistency", result)
    out: ScenarioCheck = result.output
    passed = out.fits_target and out.expresses_need and not out.fits_a_negative and out.score >= min_score
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="scenario_consistency", score=float(out.score),
                           passed=passed, details={**out.model_dump(), "min_score": min_score})


def judge_faithfulness(dialogue_id: str, result: ItemResult, min_score: int) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "faithfulness", result)
    out: Faithfulness = result.output
    passed = (out.grounded_in_target and not out.uses_negatives and not out.user_reveals_target
              and not out.recalled_early and out.score >= min_score)
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="faithfulness", score=float(out.score),
                           passed=passed, details={**out.model_dump(), "min_score": min_score})


def blri_mean(scores: Sequence[int], scale: tuple[int, int]) -> tuple[float, list[int]]:
    """Mean of the 12 items with negatively worded ones reversed on the scale (−s on −3…+3)."""
    low, high = scale
    adjusted = [low + high - s if item["negative"] else s for s, item in zip(scores, BLRI_ITEMS)]
    return sum(adjusted) / len(adjusted), adjusted


def judge_blri(dialogue_id: str, result: ItemResult, scale: tuple[int, int], threshold: float) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "blri", result)
    mean, adjusted = blri_mean(result.output.scores, scale)
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="blri", score=round(mean, 4),
                           passed=mean >= threshold,
                           details={"items": result.output.scores, "adjusted": adjusted,
                                    "negative_items": [i + 1 for i, it in enumerate(BLRI_ITEMS) if it["negative"]],
                                    "scale": list(scale), "threshold": threshold})
