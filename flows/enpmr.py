"""enpmr — emotional support with need-aware memory recall (ENPMR-Bench).

Stage chain per persona: profile → life_themes.
Templates: prompts/enpmr/<stage>.j2 · models: schemas/enpmr.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from memsynth.recipe import PersonaContext
from memsynth.stage import Stage, check
from memsynth.tables import Table
from schemas.enpmr import LIFE_THEMES, PROFILES, LifeThemeRow, LifeThemes, Profile, ProfileRow
from schemas.records import PERSONAS

YEARS_OF_HISTORY = 5


class EnpmrOptions(BaseModel):
    """`recipe_options` of an enpmr config."""

    model_config = ConfigDict(extra="forbid")
    min_life_themes: int = Field(10, ge=1, le=40)


def history_window(reference: dt.date) -> tuple[dt.date, dt.date]:
    """The five years before the reference date, inclusive."""
    try:
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY)
    except ValueError:  # 29 February
        start = reference.replace(year=reference.year - YEARS_OF_HISTORY, day=28)
    return start, reference


# --- checks ------------------------------------------------------------------------


@check("distinct_preferences")
def distinct_preferences(out: Profile, _: Mapping[str, Any]) -> Iterator[str]:
    unique = {p.strip().lower() for p in out.preferences}
    if len(unique) < 10:
        yield f"preferences must hold at least 10 distinct items, found {len(unique)}"


@check("theme_dates_in_window")
def theme_dates_in_window(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    start, end = dt.date.fromisoformat(v["window_start"]), dt.date.fromisoformat(v["reference_date"])
    for i, theme in enumerate(out.themes):
        if not start <= theme.start_date <= end:
            yield (f"themes[{i}].start_date {theme.start_date} is outside "
                   f"{start} … {end}")


@check("distinct_themes")
def distinct_themes(out: LifeThemes, _: Mapping[str, Any]) -> Iterator[str]:
    seen: set[str] = set()
    for i, theme in enumerate(out.themes):
        key = theme.theme.strip().lower()
        if key in seen:
            yield f"themes[{i}].theme {theme.theme!r} repeats an earlier theme"
        seen.add(key)


@check("enough_themes")
def enough_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.themes) < v["min_themes"]:
        yield f"give at least {v['min_themes']} themes, got {len(out.themes)}"


# --- stages ------------------------------------------------------------------------

PROFILE = Stage("enpmr", "profile", Profile, checks=(distinct_preferences,))
LIFE_THEMES_STAGE = Stage("enpmr", "life_themes", LifeThemes,
                          checks=(theme_dates_in_window, distinct_themes, enough_themes))


class EnpmrRecipe:
    name = "enpmr"
    stages = (PROFILE, LIFE_THEMES_STAGE)
    tables: tuple[Table, ...] = (PERSONAS, PROFILES, LIFE_THEMES)

    def __init__(self, options: Mapping[str, Any]):
        self.options = EnpmrOptions.model_validate(dict(options))

    async def generate(self, ctx: PersonaContext) -> None:
        pid = ctx.persona.persona_id
        ctx.emit(PERSONAS, [ctx.persona])
        profile = await ctx.run(PROFILE, {"persona": ctx.persona.description}, f"{pid}/profile")
        if not profile.usable:
            return
        p: Profile = profile.output
        ctx.emit(PROFILES, [ProfileRow(persona_id=pid, **p.model_dump())])

        start, _ = history_window(ctx.config.reference_date)
        themes = await ctx.run(LIFE_THEMES_STAGE, {
            "profile": p.model_dump(),
            "window_start": start.isoformat(),
            "min_themes": self.options.min_life_themes,
        }, f"{pid}/life_themes")
        if not themes.usable:
            return
        ordered = sorted(themes.output.themes, key=lambda t: t.start_date)
        ctx.emit(LIFE_THEMES, [
            LifeThemeRow(theme_id=f"{pid}-t{i:02d}", persona_id=pid, theme=t.theme,
                         description=t.description, start_date=t.start_date)
            for i, t in enumerate(ordered)])
