"""enpmr — emotional support with need-aware memory recall (ENPMR-Bench).

Stage chain per persona:
  profile → life_themes → relationship / power / goal / highlight (per theme) + preferences
  → memory_session (per memory) → support_dialogue (per planned dialogue)
  → scenario_consistency, faithfulness, blri (judges) → benchmark.
When the persona pool is too small, `persona` writes new personas first (see build flow).

Templates: prompts/enpmr/<stage>.j2 · models: schemas/enpmr.py.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from memsynth.config import PROJECT_ROOT
from memsynth.recipe import PersonaContext
from memsynth.stage import Check, ItemResult, Stage, check
from memsynth.tables import Table
from memsynth.textmatch import mentions, mentions_exactly
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
    BlriScores,
    DialogueTurn,
    Faithfulness,
    Goals,
    Highlights,
    JudgeScore,
    LifeThemeRow,
    LifeThemes,
    MemoryRow,
    MemorySession,
    MemorySessionRow,
    NegativeRow,
    PersonaDescription,
    Powers,
    Preferences,
    Profile,
    ProfileRow,
    QualityCheckRow,
    Relationships,
    SupportDialogue,
    SupportDialogueRow,
)
from schemas.records import PERSONAS

YEARS_OF_HISTORY = 5
SESSION_TURNS = (10, 20)
DIALOGUE_TURNS = (2, 6)

# Minimum counts per life theme, from the seed's generation protocol.
MIN_RELATIONSHIPS = 4
MIN_POWERS, MIN_PROFICIENT, MIN_NOT_PROFICIENT = 6, 4, 2
MIN_GOALS, MIN_ACHIEVED, MIN_NOT_ACHIEVED = 3, 2, 1
MIN_HIGHLIGHTS = 2
MIN_PREFERENCES = 10

# Maslow need → memory categories that can meet it (the seed's Table 1).
NEED_CATEGORIES: dict[str, tuple[str, ...]] = {
    "PN": ("preference",),
    "LB": ("relationship",),
    "EN": ("highlight", "relationship"),
    "SA": ("goal", "power", "highlight"),
}
NEEDS = {
    "PN": ("physiological need", "the user is tired, hungry, sleeping badly or physically unwell"),
    "LB": ("love and belonging", "the user feels lonely, left out or not accepted"),
    "EN": ("esteem", "the user doubts themself, feels inferior or is stung by others' judgement"),
    "SA": ("self-actualization", "the user feels aimless, questions their worth or has lost their drive"),
}
BLRI_ITEMS = json.loads((PROJECT_ROOT / "data" / "enpmr" / "blri_items.json").read_text())["items"]
PERSONA_ATTRIBUTES = PROJECT_ROOT / "data" / "persona_attributes.json"


class EnpmrOptions(BaseModel):
    """`recipe_options` of an enpmr config."""

    model_config = ConfigDict(extra="forbid")
    min_life_themes: int = Field(10, ge=1, le=40)
    dialogues_per_persona: int = Field(4, ge=0, le=10_000)
    # The seed's split: 1,099 SA : 401 EN : 192 PN : 180 LB.
    need_proportions: dict[str, float] = Field(
        default_factory=lambda: {"SA": 1099, "EN": 401, "PN": 192, "LB": 180})
    negatives: tuple[int, int] = (2, 3)
    scenario_min_score: int = Field(3, ge=1, le=5)
    faithfulness_min_score: int = Field(3, ge=1, le=5)
    blri_scale: tuple[int, int] = (1, 5)
    blri_threshold: float = 2.0  # dialogues whose mean BLRI score is below this are dropped
    persona_dedup_threshold: float = Field(0.7, gt=0, le=1)  # MinHash Jaccard for near duplicates

    @model_validator(mode="after")
    def _consistent(self) -> EnpmrOptions:
        unknown = set(self.need_proportions) - set(NEED_CATEGORIES)
        if unknown:
            raise ValueError(f"need_proportions: unknown needs {sorted(unknown)} (use PN, LB, EN, SA)")
        if not any(v > 0 for v in self.need_proportions.values()):
            raise ValueError("need_proportions: at least one need must have a positive weight")
        low, high = self.negatives
        if not 0 <= low <= high:
            raise ValueError("negatives: give [min, max] with 0 <= min <= max")
        if self.blri_scale[0] >= self.blri_scale[1]:
            raise ValueError("blri_scale: give [lowest, highest] with lowest < highest")
        return self


def history_window(reference: dt.date) -> tuple[dt.date, dt.date]:
    """The five years before the reference date, inclusive."""
    try:
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY)
    except ValueError:  # 29 February
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY, day=28)
    return start, reference


# --- checks: rules a JSON schema cannot express --------------------------------------


@check("distinct_preferences")
def distinct_preferences(out: Profile, _: Mapping[str, Any]) -> Iterator[str]:
    unique = {p.strip().lower() for p in out.preferences}
    if len(unique) < MIN_PREFERENCES:
        yield f"preferences must hold at least {MIN_PREFERENCES} distinct items, found {len(unique)}"


def _outside(label: str, dates: Sequence[dt.date], start: dt.date, end: dt.date,
             span: str = "") -> Iterator[str]:
    """One problem per date not within start … end."""
    for i, date in enumerate(dates):
        if not start <= date <= end:
            yield f"{label}[{i}] date {date} is outside {span}{start} … {end}"


def _repeats(label: str, names: Sequence[str]) -> Iterator[str]:
    """One problem per name that repeats an earlier one (case and spacing ignored)."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        key = name.strip().lower()
        if key in seen:
            yield f"{label}[{i}] {name!r} repeats an earlier one"
        seen.add(key)


def _window(v: Mapping[str, Any]) -> tuple[dt.date, dt.date]:
    return dt.date.fromisoformat(v["window_start"]), dt.date.fromisoformat(v["reference_date"])


@check("theme_dates_in_window")
def theme_dates_in_window(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _outside("themes", [t.start_date for t in out.themes], *_window(v))


@check("distinct_themes")
def distinct_themes(out: LifeThemes, _: Mapping[str, Any]) -> Iterator[str]:
    yield from _repeats("themes", [t.theme for t in out.themes])


@check("enough_themes")
def enough_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.themes) < v["min_themes"]:
        yield f"give at least {v['min_themes']} themes, got {len(out.themes)}"


@check("dates_in_theme")
def dates_in_theme(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    """Every memory falls between its theme's start and the reference date."""
    start = dt.date.fromisoformat(str(v["theme"]["start_date"]))
    yield from _outside("items", [i.date for i in out.items], start,
                        dt.date.fromisoformat(v["reference_date"]), span="the theme's span ")


@check("dates_in_window")
def dates_in_window(out: Preferences, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _outside("items", [i.date for i in out.items], *_window(v))


@check("chronological")
def chronological(out: Any, _: Mapping[str, Any]) -> Iterator[str]:
    dates = [item.date for item in out.items]
    for i in range(1, len(dates)):
        if dates[i] < dates[i - 1]:
            yield f"items must be in date order: items[{i}] ({dates[i]}) is before items[{i - 1}] ({dates[i - 1]})"
            return


@check("quality_mix")
def quality_mix(out: Relationships, _: Mapping[str, Any]) -> Iterator[str]:
    kinds = {r.relationship_quality for r in out.items}
    for missing in sorted({"good", "bad"} - kinds):
        yield f"include at least one relationship of quality {missing!r}"


@check("proficiency_mix")
def proficiency_mix(out: Powers, _: Mapping[str, Any]) -> Iterator[str]:
    good = sum(p.performance == "proficient" for p in out.items)
    if good < MIN_PROFICIENT:
        yield f"at least {MIN_PROFICIENT} sub-skills must be 'proficient', found {good}"
    if len(out.items) - good < MIN_NOT_PROFICIENT:
        yield f"at least {MIN_NOT_PROFICIENT} sub-skills must be 'not proficient', found {len(out.items) - good}"


@check("goal_status")
def goal_status(out: Goals, _: Mapping[str, Any]) -> Iterator[str]:
    done = sum(g.status == "achieved" for g in out.items)
    if done < MIN_ACHIEVED:
        yield f"at least {MIN_ACHIEVED} goals must be 'achieved', found {done}"
    if len(out.items) - done < MIN_NOT_ACHIEVED:
        yield f"at least {MIN_NOT_ACHIEVED} goal must be 'not achieved'"
    if out.items and out.items[-1].status != "not achieved":
        yield "the last goal must be the one not achieved yet"


@check("distinct_names")
def distinct_names(out: Any, _: Mapping[str, Any]) -> Iterator[str]:
    yield from _repeats("items", [i.name for i in out.items])


def _alternation(turns: Sequence[Any]) -> Iterator[str]:
    for i, turn in enumerate(turns):
        expected = "user" if i % 2 == 0 else "ai"
        if turn.role != expected:
            yield f"turns[{i}].role is {turn.role!r}; turns alternate user/ai starting with the user"
            return


@check("session_alternates")
def session_alternates(out: MemorySession, _: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(out.turns)


@check("user_reveals_memory")
def user_reveals_memory(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    name = v["memory"]["name"]
    if not any(t.role == "user" and mentions(t.content, name) for t in out.turns):
        yield f"no user turn reveals the memory {name!r}"


@check("dialogue_alternates")
def dialogue_alternates(out: SupportDialogue, _: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(out.turns)


@check("memory_turn_recalls_target")
def memory_turn_recalls_target(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    name = v["target"]["name"]
    if not 1 <= out.memory_turn <= len(out.turns):
        yield f"memory_turn {out.memory_turn} is not a turn of this {len(out.turns)}-turn dialogue"
        return
    turn = out.turns[out.memory_turn - 1]
    if turn.role != "ai":
        yield f"memory_turn {out.memory_turn} is a {turn.role} turn; it must be the AI's"
    elif not mentions(turn.content, name):
        yield f"the AI turn at memory_turn {out.memory_turn} does not recall {name!r}"


@check("user_never_states_memory")
def user_never_states_memory(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    name = v["target"]["name"]
    for i, turn in enumerate(out.turns):
        if turn.role == "user" and mentions_exactly(turn.content, name):
            yield f"turns[{i}]: the user states the memory {name!r}; only the AI may bring it up"


@check("blri_in_scale")
def blri_in_scale(out: BlriScores, v: Mapping[str, Any]) -> Iterator[str]:
    low, high = v["scale_min"], v["scale_max"]
    for i, score in enumerate(out.scores):
        if not low <= score <= high:
            yield f"scores[{i}] = {score} is outside the scale {low}–{high}"


# --- stages ------------------------------------------------------------------------


def _stage(name: str, output: type[BaseModel], *checks: Check, temperature: float | None = None) -> Stage:
    return Stage("enpmr", name, output, checks=checks, temperature=temperature)


PERSONA = _stage("persona", PersonaDescription, temperature=1.0)
PROFILE = _stage("profile", Profile, distinct_preferences)
LIFE_THEMES_STAGE = _stage("life_themes", LifeThemes, theme_dates_in_window, distinct_themes, enough_themes)
RELATIONSHIP = _stage("relationship", Relationships, dates_in_theme, quality_mix, distinct_names)
POWER = _stage("power", Powers, dates_in_theme, chronological, proficiency_mix, distinct_names)
GOAL = _stage("goal", Goals, dates_in_theme, chronological, goal_status, distinct_names)
HIGHLIGHT = _stage("highlight", Highlights, dates_in_theme, distinct_names)
PREFERENCES = _stage("preferences", Preferences, dates_in_window, distinct_names)
MEMORY_SESSION = _stage("memory_session", MemorySession, session_alternates, user_reveals_memory)
SUPPORT_DIALOGUE = _stage("support_dialogue", SupportDialogue, dialogue_alternates,
                          memory_turn_recalls_target, user_never_states_memory)
SCENARIO_CONSISTENCY = _stage("scenario_consistency", JudgeScore, temperature=0.0)
FAITHFULNESS = _stage("faithfulness", Faithfulness, temperature=0.0)
BLRI = _stage("blri", BlriScores, blri_in_scale, temperature=0.0)

# Per-theme memory stages and the minimum each asks for.
THEME_MEMORY_STAGES: dict[str, tuple[Stage, dict[str, int]]] = {
    "relationship": (RELATIONSHIP, {"min_items": MIN_RELATIONSHIPS}),
    "power": (POWER, {"min_items": MIN_POWERS, "min_proficient": MIN_PROFICIENT,
                      "min_not_proficient": MIN_NOT_PROFICIENT}),
    "goal": (GOAL, {"min_items": MIN_GOALS, "min_achieved": MIN_ACHIEVED,
                    "min_not_achieved": MIN_NOT_ACHIEVED}),
    "highlight": (HIGHLIGHT, {"min_items": MIN_HIGHLIGHTS}),
}


# --- rendering memories as retrieval text ------------------------------------------


def memory_text(category: str, item: Mapping[str, Any], theme: str | None, language: str) -> str:
    """One self-contained sentence for a memory, used for retrieval and in prompts."""
    i = item
    if language == "zh":
        templates = {
            "relationship": "在“{theme}”期间，{name}（用户的{relationship_type}，{occupation}）与用户关系"
                            + ("良好" if i.get("relationship_quality") == "good" else "紧张") + "：{characteristic}",
            "power": "在“{theme}”期间，用户" + ("擅长" if i.get("performance") == "proficient" else "尚不擅长")
                     + "“{name}”：{description}（习得方式：{acquisition_method}）",
            "goal": "在“{theme}”期间，用户设定了目标“{name}”，目前" + ("已完成" if i.get("status") == "achieved" else "尚未完成")
                    + "：{description}",
            "highlight": "在“{theme}”期间的高光时刻“{name}”，得到{recognized_by}的认可：{description}",
            "preference": "用户的偏好“{name}”：{description}",
        }
    else:
        templates = {
            "relationship": "During '{theme}', {name} (the user's {relationship_type}, {occupation}) had a "
                            "{relationship_quality} relationship with the user: {characteristic}",
            "power": "During '{theme}', the user was {performance} at '{name}': {description} "
                     "(acquired by {acquisition_method})",
            "goal": "During '{theme}', the user set the goal '{name}', now {status}: {description}",
            "highlight": "During '{theme}', the user had the highlight '{name}', recognised by "
                         "{recognized_by}: {description}",
            "preference": "The user's preference '{name}': {description}",
        }
    return templates[category].format(theme=theme or "", **{k: v for k, v in i.items() if k != "theme"})


def profile_summary(profile: Mapping[str, Any]) -> str:
    keys = ("name", "age", "gender", "occupation", "personality", "social", "emotional_pattern",
            "communication_style")
    return json.dumps({k: profile[k] for k in keys}, ensure_ascii=False, indent=1)


# --- planning support dialogues ----------------------------------------------------


@dataclass(frozen=True)
class DialoguePlan:
    """What one support dialogue is about, decided in code from the build seed."""

    dialogue_id: str
    need: str
    target: MemoryRow
    negatives: tuple[MemoryRow, ...]
    negatives_short: bool


def plan_dialogues(persona_id: str, memories: Sequence[MemoryRow], options: EnpmrOptions,
                   rng: random.Random) -> list[DialoguePlan]:
    """Pick need → target memory (of a category the need maps to) → negatives, per dialogue.

    Negatives share the target's theme and category; when the theme holds fewer than
    the minimum, the dialogue takes what exists and is marked `negatives_short`.
    """
    by_category: dict[str, list[MemoryRow]] = {}
    for m in memories:
        by_category.setdefault(m.category, []).append(m)
    needs = [n for n, w in sorted(options.need_proportions.items()) if w > 0
             and any(by_category.get(c) for c in NEED_CATEGORIES[n])]
    if not needs:
        return []
    weights = [options.need_proportions[n] for n in needs]
    used: set[str] = set()
    plans = []
    for d in range(options.dialogues_per_persona):
        need = rng.choices(needs, weights=weights)[0]
        category = rng.choice([c for c in NEED_CATEGORIES[need] if by_category.get(c)])
        pool = by_category[category]
        fresh = [m for m in pool if m.memory_id not in used] or pool
        target = rng.choice(fresh)
        used.add(target.memory_id)
        same = [m for m in pool if m.theme_id == target.theme_id and m.memory_id != target.memory_id]
        low, high = options.negatives
        wanted = rng.randint(low, high)
        negatives = tuple(rng.sample(same, min(wanted, len(same))))
        plans.append(DialoguePlan(f"{persona_id}-d{d:03d}", need, target, negatives,
                                  negatives_short=len(negatives) < low))
    return plans


# --- the recipe --------------------------------------------------------------------


class EnpmrRecipe:
    name = "enpmr"
    persona_stage = PERSONA
    stages = (PERSONA, PROFILE, LIFE_THEMES_STAGE, RELATIONSHIP, POWER, GOAL, HIGHLIGHT, PREFERENCES,
              MEMORY_SESSION, SUPPORT_DIALOGUE, SCENARIO_CONSISTENCY, FAITHFULNESS, BLRI)
    tables: tuple[Table, ...] = (PERSONAS, PROFILES, LIFE_THEMES, MEMORIES, MEMORY_SESSIONS,
                                 SUPPORT_DIALOGUES, NEGATIVES, QUALITY_CHECKS, BENCHMARK)

    def __init__(self, options: Mapping[str, Any]):
        self.options = EnpmrOptions.model_validate(dict(options))

    @property
    def dedup_threshold(self) -> float:
        return self.options.persona_dedup_threshold

    def persona_variables(self, rng: random.Random) -> dict[str, Any]:
        """Attributes for one synthesized persona, sampled from `data/persona_attributes.json`."""
        lists = json.loads(PERSONA_ATTRIBUTES.read_text(encoding="utf-8"))
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
        profile = await ctx.run(PROFILE, {"persona": ctx.persona.description}, f"{pid}/profile")
        if not profile.usable:
            return
        p: Profile = profile.output
        ctx.emit(PROFILES, [ProfileRow(persona_id=pid, **p.model_dump())])

        window_start, _ = history_window(ctx.config.reference_date)
        themes = await ctx.run(LIFE_THEMES_STAGE, {
            "profile": p.model_dump(mode="json"),
            "window_start": window_start.isoformat(),
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
        await asyncio.gather(
            self._sessions(ctx, memories, summary),
            self._dialogues(ctx, memories, theme_rows, summary))

    async def _memories(self, ctx: PersonaContext, profile: Profile, themes: list[LifeThemeRow],
                        window_start: dt.date) -> list[MemoryRow]:
        pid = ctx.persona.persona_id
        profile_json = profile.model_dump(mode="json")
        jobs = []
        for theme in themes:
            for category, (stage, minimums) in THEME_MEMORY_STAGES.items():
                variables = {"profile": profile_json, "theme": theme.model_dump(mode="json"), **minimums}
                jobs.append((category, theme, ctx.run(stage, variables, f"{theme.theme_id}/{category}")))
        preferences = ctx.run(PREFERENCES, {"profile": profile_json, "min_items": MIN_PREFERENCES,
                                            "window_start": window_start.isoformat()},
                              f"{pid}/preferences")
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
                name=item.name, text=memory_text(category, fields, theme.theme if theme else None,
                                                 ctx.language),
                attributes={k: v for k, v in fields.items() if k not in ("name", "date")}))
        return rows

    async def _sessions(self, ctx: PersonaContext, memories: list[MemoryRow], summary: str) -> None:
        low, high = SESSION_TURNS
        ordered = sorted(memories, key=lambda m: (m.date, m.memory_id))
        results = await ctx.run_many(MEMORY_SESSION, [
            (f"{m.memory_id}/session", {
                "profile_summary": summary, "category": m.category, "memory_text": m.text,
                "memory": {"name": m.name, "date": m.date.isoformat()},
                "min_turns": low, "max_turns": high})
            for m in ordered])
        rows = []
        for memory, result in zip(ordered, results):
            if result.usable:
                # Built from a validated answer: skip re-validating thousands of turn rows.
                rows += [MemorySessionRow.model_construct(
                    memory_id=memory.memory_id, persona_id=memory.persona_id, turn_index=i,
                    role=t.role, content=t.content)
                         for i, t in enumerate(result.output.turns)]
        ctx.emit(MEMORY_SESSIONS, rows)

    async def _dialogues(self, ctx: PersonaContext, memories: list[MemoryRow],
                         themes: list[LifeThemeRow], summary: str) -> None:
        rng = ctx.derived_rng("dialogues")
        plans = plan_dialogues(ctx.persona.persona_id, memories, self.options, rng)
        theme_names = {t.theme_id: t.theme for t in themes}
        await asyncio.gather(*(self._dialogue(ctx, plan, theme_names, summary) for plan in plans))

    async def _dialogue(self, ctx: PersonaContext, plan: DialoguePlan, theme_names: dict[str, str],
                        summary: str) -> None:
        o = self.options
        low, high = DIALOGUE_TURNS
        need_name, need_description = NEEDS[plan.need]
        theme_name = theme_names.get(plan.target.theme_id or "", "everyday life")
        negatives_text = [m.text for m in plan.negatives]
        result = await ctx.run(SUPPORT_DIALOGUE, {
            "profile_summary": summary, "theme_name": theme_name, "need_name": need_name,
            "need_description": need_description, "category": plan.target.category,
            "target": {"name": plan.target.name}, "target_text": plan.target.text,
            "negatives": negatives_text, "min_turns": low, "max_turns": high,
        }, f"{plan.dialogue_id}/dialogue")
        if not result.usable:
            return
        dialogue: SupportDialogue = result.output
        turns = [DialogueTurn(role=t.role, content=t.content) for t in dialogue.turns]
        turn_dicts = [t.model_dump() for t in turns]
        ctx.emit(SUPPORT_DIALOGUES, [SupportDialogueRow(
            dialogue_id=plan.dialogue_id, persona_id=plan.target.persona_id, need=plan.need,
            target_memory_id=plan.target.memory_id, theme_id=plan.target.theme_id,
            scene=dialogue.scene, turns=turns, memory_turn=dialogue.memory_turn,
            negatives_short=plan.negatives_short)])
        ctx.emit(NEGATIVES, [NegativeRow(dialogue_id=plan.dialogue_id, memory_id=m.memory_id, rank=r)
                             for r, m in enumerate(plan.negatives, start=1)])

        key = plan.dialogue_id
        consistency, faithful, blri = await asyncio.gather(
            ctx.run(SCENARIO_CONSISTENCY, {"profile_summary": summary, "theme_name": theme_name,
                                           "need_name": need_name, "scene": dialogue.scene,
                                           "turns": turn_dicts}, f"{key}/scenario_consistency"),
            ctx.run(FAITHFULNESS, {"target_text": plan.target.text, "negatives": negatives_text,
                                   "turns": turn_dicts}, f"{key}/faithfulness"),
            ctx.run(BLRI, {"turns": turn_dicts, "items": [i["text"] for i in BLRI_ITEMS],
                           "scale_min": o.blri_scale[0], "scale_max": o.blri_scale[1]}, f"{key}/blri"))
        checks = [
            judge_scenario(key, consistency, o.scenario_min_score),
            judge_faithfulness(key, faithful, o.faithfulness_min_score),
            judge_blri(key, blri, o.blri_scale, o.blri_threshold),
        ]
        ctx.emit(QUALITY_CHECKS, checks)
        for row in checks:
            ctx.output.tally_check(row.check_name, row.passed)
        if all(c.passed for c in checks):
            ctx.emit(BENCHMARK, [BenchmarkRow(
                dialogue_id=key, persona_id=plan.target.persona_id, need=plan.need,
                target_memory_id=plan.target.memory_id, target_category=plan.target.category,
                theme_id=plan.target.theme_id, scene=dialogue.scene, turns=turns,
                memory_turn=dialogue.memory_turn,
                negative_memory_ids=[m.memory_id for m in plan.negatives],
                blri_mean=checks[2].score)])


# --- turning judge answers into quality_checks rows --------------------------------


def _unjudged(dialogue_id: str, name: str, result: ItemResult) -> QualityCheckRow:
    return QualityCheckRow(dialogue_id=dialogue_id, check_name=name, score=0.0, passed=False,
                           details={"error": "the judge gave no usable answer",
                                    "problems": result.problems})


def judge_scenario(dialogue_id: str, result: ItemResult, min_score: int) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "scenario_consistency", result)
    out: JudgeScore = result.output
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="scenario_consistency",
                           score=float(out.score), passed=out.score >= min_score,
                           details={"reason": out.reason, "min_score": min_score})


def judge_faithfulness(dialogue_id: str, result: ItemResult, min_score: int) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "faithfulness", result)
    out: Faithfulness = result.output
    passed = out.grounded_in_target and not out.uses_negatives and out.score >= min_score
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="faithfulness",
                           score=float(out.score), passed=passed,
                           details={"grounded_in_target": out.grounded_in_target,
                                    "uses_negatives": out.uses_negatives, "reason": out.reason,
                                    "min_score": min_score})


def blri_mean(scores: Sequence[int], scale: tuple[int, int]) -> tuple[float, list[int]]:
    """Mean of the 12 items with negatively worded ones reversed on the scale."""
    low, high = scale
    adjusted = [low + high - s if item["negative"] else s for s, item in zip(scores, BLRI_ITEMS)]
    return sum(adjusted) / len(adjusted), adjusted


def judge_blri(dialogue_id: str, result: ItemResult, scale: tuple[int, int],
               threshold: float) -> QualityCheckRow:
    if not result.usable:
        return _unjudged(dialogue_id, "blri", result)
    mean, adjusted = blri_mean(result.output.scores, scale)
    return QualityCheckRow(dialogue_id=dialogue_id, check_name="blri", score=round(mean, 4),
                           passed=mean >= threshold,
                           details={"items": result.output.scores, "adjusted": adjusted,
                                    "negative_items": [i + 1 for i, it in enumerate(BLRI_ITEMS) if it["negative"]],
                                    "scale": list(scale), "threshold": threshold})

