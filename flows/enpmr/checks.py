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
from memsynth.stage import check, say
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
def distinct_preferences(out: Profile, v: Mapping[str, Any]) -> Iterator[str]:
    unique = {p.strip().lower() for p in out.preferences}
    if len(unique) < MIN_PREFERENCES:
        yield say(v, f"preferences must hold at least {MIN_PREFERENCES} distinct items, found {len(unique)}",
                  f"preferences 至少要有 {MIN_PREFERENCES} 条互不相同的内容，实际只有 {len(unique)} 条")


def _outside(v: Mapping[str, Any], label: str, dates: Sequence[dt.date], start: dt.date, end: dt.date
             ) -> Iterator[str]:
    """One problem per date not within start … end."""
    for i, date in enumerate(dates):
        if not start <= date <= end:
            yield say(v, f"{label}[{i}] date {date} is outside {start} … {end}",
                      f"{label}[{i}] 的日期 {date} 不在 {start} 到 {end} 之间")


def _repeats(v: Mapping[str, Any], label: str, names: Sequence[str]) -> Iterator[str]:
    """One problem per name that repeats an earlier one (case and spacing ignored)."""
    seen: set[str] = set()
    for i, name in enumerate(names):
        key = name.strip().lower()
        if key in seen:
            yield say(v, f"{label}[{i}] {name!r} repeats an earlier one", f"{label}[{i}]“{name}”与前面的重复")
        seen.add(key)


def _window(v: Mapping[str, Any]) -> tuple[dt.date, dt.date]:
    return dt.date.fromisoformat(v["window_start"]), dt.date.fromisoformat(v["reference_date"])


@check("theme_dates_in_window")
def theme_dates_in_window(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _outside(v, "themes", [t.start_date for t in out.themes], *_window(v))


@check("distinct_themes")
def distinct_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _repeats(v, "themes", [t.theme for t in out.themes])


@check("enough_themes")
def enough_themes(out: LifeThemes, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.themes) < v["min_themes"]:
        yield say(v, f"give at least {v['min_themes']} themes, got {len(out.themes)}",
                  f"请至少给出 {v['min_themes']} 个主题，实际给了 {len(out.themes)} 个")


@check("dates_in_theme")
def dates_in_theme(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    """Every memory falls between its theme's start and the reference date."""
    start = dt.date.fromisoformat(str(v["theme"]["start_date"]))
    yield from _outside(v, "items", [i.date for i in out.items], start, dt.date.fromisoformat(v["reference_date"]))


@check("enough_items")
def enough_items(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.items) < v["min_items"]:
        yield say(v, f"give at least {v['min_items']} items, got {len(out.items)}",
                  f"请至少给出 {v['min_items']} 项，实际给了 {len(out.items)} 项")


@check("dates_in_window")
def dates_in_window(out: Preferences, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _outside(v, "items", [i.date for i in out.items], *_window(v))


@check("chronological")
def chronological(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    dates = [item.date for item in out.items]
    for i in range(1, len(dates)):
        if dates[i] < dates[i - 1]:
            yield say(v, f"items must be in date order: items[{i}] ({dates[i]}) is before items[{i - 1}] ({dates[i - 1]})",
                      f"items 必须按日期排序：items[{i}]（{dates[i]}）早于 items[{i - 1}]（{dates[i - 1]}）")
            return


@check("quality_mix")
def quality_mix(out: Relationships, v: Mapping[str, Any]) -> Iterator[str]:
    kinds = {r.relationship_quality for r in out.items}
    for missing in sorted({"good", "bad"} - kinds):
        yield say(v, f"include at least one relationship of quality {missing!r}",
                  f"至少要有一个 relationship_quality 为 \"{missing}\" 的人")


@check("proficiency_mix")
def proficiency_mix(out: Powers, v: Mapping[str, Any]) -> Iterator[str]:
    good = sum(p.performance == "proficient" for p in out.items)
    if good < MIN_PROFICIENT:
        yield say(v, f"at least {MIN_PROFICIENT} sub-skills must be 'proficient', found {good}",
                  f"至少 {MIN_PROFICIENT} 项技能必须是 \"proficient\"，实际 {good} 项")
    if len(out.items) - good < MIN_NOT_PROFICIENT:
        yield say(v, f"at least {MIN_NOT_PROFICIENT} sub-skills must be 'not proficient', found {len(out.items) - good}",
                  f"至少 {MIN_NOT_PROFICIENT} 项技能必须是 \"not proficient\"，实际 {len(out.items) - good} 项")


@check("goal_status")
def goal_status(out: Goals, v: Mapping[str, Any]) -> Iterator[str]:
    done = sum(g.status == "achieved" for g in out.items)
    if done < MIN_ACHIEVED:
        yield say(v, f"at least {MIN_ACHIEVED} goals must be 'achieved', found {done}",
                  f"至少 {MIN_ACHIEVED} 个目标必须是 \"achieved\"，实际 {done} 个")
    if len(out.items) - done < MIN_NOT_ACHIEVED:
        yield say(v, f"at least {MIN_NOT_ACHIEVED} goal must be 'not achieved'",
                  f"至少 {MIN_NOT_ACHIEVED} 个目标必须是 \"not achieved\"")
    if out.items and out.items[-1].status != "not achieved":
        yield say(v, "the last goal must be the one not achieved yet", "最后一个目标必须是尚未实现的那个")


@check("distinct_names")
def distinct_names(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _repeats(v, "items", [i.name for i in out.items])


def _alternation(v: Mapping[str, Any], turns: Sequence[Any]) -> Iterator[str]:
    for i, turn in enumerate(turns):
        expected = "user" if i % 2 == 0 else "ai"
        if turn.role != expected:
            yield say(v, f"turns[{i}].role is {turn.role!r}; turns alternate user/ai starting with the user",
                      f"turns[{i}].role 是 \"{turn.role}\"；各轮必须由 user 开始、user 与 ai 交替")
            return


@check("session_alternates")
def session_alternates(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(v, out.turns)


@check("user_reveals_memory")
def user_reveals_memory(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    """The user's words draw on the memory's details — not necessarily its name."""
    said = " ".join(t.content for t in out.turns if t.role == "user")
    if not refers_to(said, v["memory"]["details"]):
        yield say(v, "no user turn brings up this memory; let the user talk about its concrete details",
                  "没有哪一轮用户发言谈到这段记忆；请让用户说出它的具体细节")


@check("dialogue_alternates")
def dialogue_alternates(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    yield from _alternation(v, out.turns)


def _memory_turn(out: SupportDialogue) -> Any | None:
    if 1 <= out.memory_turn <= len(out.turns):
        return out.turns[out.memory_turn - 1]
    return None


@check("memory_turn_recalls_target")
def memory_turn_recalls_target(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    if turn is None:
        yield say(v, f"memory_turn {out.memory_turn} is not a turn of this {len(out.turns)}-turn dialogue",
                  f"memory_turn {out.memory_turn} 不是这段 {len(out.turns)} 轮对话中的一轮")
    elif turn.role != "ai":
        yield say(v, f"memory_turn {out.memory_turn} is a {turn.role} turn; it must be the AI's",
                  f"memory_turn {out.memory_turn} 是 {turn.role} 的发言；它必须是 ai 的发言")
    elif not refers_to(turn.content, v["target"]["details"]):
        yield say(v, f"the AI turn at memory_turn {out.memory_turn} does not draw on the target memory's details",
                  f"memory_turn {out.memory_turn} 这一轮 AI 发言没有用到目标记忆的具体细节")


@check("recall_length")
def recall_length(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    turn = _memory_turn(out)
    limit = v["recall_limit"]
    if turn is not None and length_in_words(turn.content) > limit:
        yield say(v, f"the recall at memory_turn {out.memory_turn} is longer than {limit} words",
                  f"memory_turn {out.memory_turn} 这一轮的回忆超过了 {limit} 个字")


@check("user_never_states_memory")
def user_never_states_memory(out: SupportDialogue, v: Mapping[str, Any]) -> Iterator[str]:
    name = v["target"]["name"]
    for i, turn in enumerate(out.turns):
        if turn.role == "user" and mentions_exactly(turn.content, name):
            yield say(v, f"turns[{i}]: the user names the memory {name!r}; only the AI may bring it up",
                      f"turns[{i}]：用户说出了记忆“{name}”；只有 AI 可以提起它")


@check("blri_in_scale")
def blri_in_scale(out: BlriScores, v: Mapping[str, Any]) -> Iterator[str]:
    points = v["points"]
    for i, score in enumerate(out.scores):
        if score not in points:
            yield say(v, f"scores[{i}] = {score} is not a point of the scale ({', '.join(map(str, points))})",
                      f"scores[{i}] = {score} 不是量表上的取值（{'、'.join(map(str, points))}）")
