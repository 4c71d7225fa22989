"""enpmr (ENPMR-Bench): stage output models and table rows.

Stage outputs are what the LLM must answer; rows are what lands in the warehouse.
"""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field

from memsynth.tables import Table

# --- stage outputs -----------------------------------------------------------------


class Profile(BaseModel):
    """`profile`: a persona description turned into lists of concrete facts."""

    name: str = Field(min_length=1, description="full name (a pseudonym is fine)")
    age: int = Field(ge=16, le=100)
    gender: str = Field(min_length=1)
    occupation: str = Field(min_length=1)
    education: str = Field(min_length=1)
    personality: list[str] = Field(min_length=3, description="traits along the Big Five")
    habits: list[str] = Field(min_length=3, description="daily habits and routines")
    social: list[str] = Field(min_length=2, description="relationships and social circle")
    emotional_pattern: list[str] = Field(min_length=2, description="typical emotional expressions")
    goals: list[str] = Field(min_length=2, description="medium- to long-term goals")
    communication_style: list[str] = Field(min_length=2)
    preferences: list[str] = Field(min_length=10, description="diet, exercise and other likes/dislikes")


class LifeTheme(BaseModel):
    theme: str = Field(min_length=1, description="short title of a life theme")
    description: str = Field(min_length=1)
    start_date: dt.date = Field(description="when the theme began, YYYY-MM-DD")


class LifeThemes(BaseModel):
    """`life_themes`: at least ten distinct themes of the five years before the reference date."""

    themes: list[LifeTheme] = Field(min_length=10)


# --- table rows --------------------------------------------------------------------


class ProfileRow(BaseModel):
    persona_id: str
    name: str
    age: int
    gender: str
    occupation: str
    education: str
    personality: list[str]
    habits: list[str]
    social: list[str]
    emotional_pattern: list[str]
    goals: list[str]
    communication_style: list[str]
    preferences: list[str]


class LifeThemeRow(BaseModel):
    theme_id: str
    persona_id: str
    theme: str
    description: str
    start_date: dt.date


PROFILES = Table("profiles", ProfileRow)
LIFE_THEMES = Table("life_themes", LifeThemeRow)
