"""enpmr's checks: the seed's rules a JSON schema cannot express."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from flows.enpmr.options import (
    MIN_ACHIEVED,
    MIN_NOT_ACHIEVED,
    MIN_NOT_PROFICIENT,
    MIN_PREFERENCES,
    MIN_PROFICIENT,
)
from memsynth.stage import check
from memsynth.textmatch import length_in_words, mentions_exactly, refers_to
from schemas.enpmr import (
    BlriScores,
    Goals,
    LifeThemes,
    MemorySession,
    Powers,
    Preferences,
    Profile,
    Relationships,
    SupportDialogue,
)


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


@check("enough_items")
def enough_items(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.items) < v["min_items"]:
        yield f"give at least {v['min_items']} items, got {len(out.items)}"


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
    """The user's words draw on the memory's details — not necessarily its name."""
    said = " ".join(t.content for t in out.turns if t.role == "user")
    if not refers_to(said, v["memory"]["details"]):
        yield "no user turn brings up this memory; let the user talk about its concrete details"


@check("dialogue_alternates")
def dialogue_alternates(out: SupportDialogue, _: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(out.turns)


def _memory_turn(out: SupportDialogue) -> Any | None:
    if 1 <= out.memory_turn <= len(out.turns):
        return out.turns[out.memory_turn - 1]
    return None


@check("memory_turn_recalls_target")
def memory_turn_recalls_target(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    if turn is None:
        yield f"memory_turn {out.memory_turn} is not a turn of this {len(out.turns)}-turn dialogue"
    elif turn.role != "ai":
        yield f"memory_turn {out.memory_turn} is a {turn.role} turn; it must be the AI's"
    elif not refers_to(turn.content, v["target"]["details"]):
        yield f"the AI turn at memory_turn {out.memory_turn} does not draw on the target memory's details"


@check("recall_length")
def recall_length(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    limit = v["recall_limit"]
    if turn is not None and length_in_words(turn.content) > limit:
        unit = "characters" if v["language"] == "zh" else "words"
        yield f"the recall at memory_turn {out.memory_turn} is longer than {limit} {unit}"


@check("user_never_states_memory")
def user_never_states_memory(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    name = v["target"]["name"]
    for i, turn in enumerate(out.turns):
        if turn.role == "user" and mentions_exactly(turn.content, name):
            yield f"turns[{i}]: the user names the memory {name!r}; only the AI may bring it up"


@check("blri_in_scale")
def blri_in_scale(out: BlriScores, v: Mapping[str, Any]) -> Iterator[str]:
    points = v["points"]
    for i, score in enumerate(out.scores):
        if score not in points:
            yield f"scores[{i}] = {score} is not a point of the scale ({', '.join(map(str, points))})"
