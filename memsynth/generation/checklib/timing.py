"""Dates and clock times inside a window, and things in time order.

A value is a date, a datetime, an ISO string, or prose: prose is searched for the dates it
states (2024-03-05, 2024年3月5日, March 5, 2024 / 5 March 2024) and the clock times it states
(19:30, 7 pm, 7:30 a.m., 下午3点, 晚上七点半).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.checklib.paths import LibraryCheck, Var, make, resolve, select
from memsynth.generation.stage import say

_MONTHS = {m: i for i, m in enumerate(
    "january february march april may june july august september october november december".split(), 1)}
_MONTHS.update({m[:3]: i for m, i in list(_MONTHS.items())})
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_DATES = re.compile(
    r"(?<!\d)(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)"
    r"|(?<!\d)(?P<zy>\d{4})\s*年\s*(?P<zm>\d{1,2})\s*月\s*(?P<zd>\d{1,2})\s*[日号號]"
    rf"|\b(?P<em>{_MONTH})\.?\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?,?\s+(?P<ey>\d{{4}})\b"
    rf"|\b(?P<fd>\d{{1,2}})(?:st|nd|rd|th)?\s+(?P<fm>{_MONTH})\.?,?\s+(?P<fy>\d{{4}})\b", re.IGNORECASE)


def _as_date(value: Any) -> dt.date | None:
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        text = value.strip()
        for parse in (dt.date.fromisoformat, lambda s: dt.datetime.fromisoformat(s).date()):
            try:
                return parse(text)
            except ValueError:
                continue
    return None


def dates_in(value: Any) -> Iterator[tuple[str, dt.date | None]]:
    """(as written, the date or None when it is no date) for each date the value states."""
    whole = _as_date(value)
    if whole is not None:
        yield str(value), whole
        return
    if not isinstance(value, str):
        return
    for m in _DATES.finditer(value):
        g = m.groupdict()
        y, mo, d = ((g["y"], g["m"], g["d"]) if g["y"] else (g["zy"], g["zm"], g["zd"]) if g["zy"]
                    else (g["ey"], _MONTHS[g["em"].lower()], g["ed"]) if g["ey"]
                    else (g["fy"], _MONTHS[g["fm"].lower()], g["fd"]))
        try:
            yield m.group(0), dt.date(int(y), int(mo), int(d))
        except ValueError:
            yield m.group(0), None


def _bound_date(bound: Any, v: Mapping[str, Any]) -> dt.date | None:
    value = resolve(bound, v)
    if value is None:
        return None
    date = _as_date(value)
    if date is None:
        raise ValueError(f"the window bound {bound} is not a date: {value!r}")
    return date


def dates_within(path: str, start: Any = None, end: Any = None, *, name: str | None = None) -> LibraryCheck:
    """Every date at `path` (a date field, or those a text states) lies in start … end (both
    included; either may be a date, an ISO string or `var(...)`)."""
    if start is None and end is None:
        raise ValueError(f"dates_within({path!r}): give start, end or both")

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        lo, hi = _bound_date(start, v), _bound_date(end, v)
        window_en = f"{lo} … {hi}" if lo and hi else (f"on or after {lo}" if lo else f"on or before {hi}")
        window_zh = f"{lo} 到 {hi} 之间" if lo and hi else (f"{lo} 当天或之后" if lo else f"{hi} 当天或之前")
        for label, value in select(out, path):
            for written, date in dates_in(value):
                if date is None:
                    yield say(v, f"{label}: {written!r} is not a valid date", f"{label}：“{written}”不是有效的日期")
                elif (lo and date < lo) or (hi and date > hi):
                    yield say(v, f"{label}: the date {date} is outside the window; keep every date {window_en}",
                              f"{label}：日期 {date} 不在范围内；所有日期都要在 {window_zh}")

    return make("dates_within", name, path, fn, start=start, end=end)


_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_NUM = "[零〇一二两三四五六七八九十]{1,3}"
_PM_ZH = ("下午", "傍晚", "晚上", "夜里", "夜间", "今晚", "晚")
_TIMES = re.compile(
    r"(?<![\d:])(?P<h>[01]?\d|2[0-3])(?:[:.](?P<min>[0-5]\d))?\s*(?P<ap>a\.?\s?m\.?|p\.?\s?m\.?)(?![a-z])"
    rf"|(?:(?P<zp>凌晨|清晨|早上|早晨|上午|中午|下午|傍晚|晚上|夜里|夜间|今晚|晚)\s*)?"
    rf"(?<![\d:])(?P<zh>\d{{1,2}}|{_ZH_NUM})\s*(?:[点點時时]\s*(?P<zmin>半|一刻|三刻|\d{{1,2}}\s*分|{_ZH_NUM}\s*分)?"
    rf"|[:：]\s*(?P<zmc>[0-5]\d)(?![\d:]))", re.IGNORECASE)


def _zh_number(text: str) -> int:
    text = text.strip()
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    return _ZH_DIGITS.get(text, -1)


def times_in(text: str) -> Iterator[tuple[str, int]]:
    """(as written, minutes after midnight) for each clock time a text states. A Chinese hour
    counts only with digits or with its part of the day (三点 alone is as often "three points")."""
    for m in _TIMES.finditer(text):
        g = m.groupdict()
        if g["h"] is None:
            period, hour = g["zp"], _zh_number(g["zh"])
            if not g["zh"].isdigit() and not period:
                continue
            minute_text = (g["zmin"] or g["zmc"] or "").replace("分", "").strip()
            minute = {"半": 30, "一刻": 15, "三刻": 45, "": 0}.get(minute_text)
            minute = _zh_number(minute_text) if minute is None else minute
            if period in _PM_ZH and hour < 12 or period == "中午" and hour < 6:
                hour += 12
        else:
            hour, minute = int(g["h"]) % 12, int(g["min"] or 0)
            if g["ap"].lower().startswith("p"):
                hour += 12
        if 0 <= hour <= 24 and 0 <= minute < 60:
            yield m.group(0).strip(), hour % 24 * 60 + minute


def _minutes(bound: Any, v: Mapping[str, Any]) -> int:
    value = str(resolve(bound, v))
    hour, _, minute = value.partition(":")
    return int(hour) * 60 + int(minute or 0)


def times_within(path: str, start: str | Var = "07:00", end: str | Var = "22:00", *,
                 name: str | None = None) -> LibraryCheck:
    """Every clock time a text at `path` states lies in start … end (HH:MM; a window past
    midnight, 22:00 … 06:00, wraps)."""
    for b in (start, end):
        if not isinstance(b, Var) and not re.fullmatch(r"([01]?\d|2[0-3])(:[0-5]\d)?", str(b)):
            raise ValueError(f"times_within({path!r}): {b!r} is not a clock time HH:MM")

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        lo, hi = _minutes(start, v), _minutes(end, v)
        shown = f"{lo // 60:02d}:{lo % 60:02d}", f"{hi // 60:02d}:{hi % 60:02d}"
        for label, value in select(out, path):
            if not isinstance(value, str):
                continue
            for written, t in times_in(value):
                if not (lo <= t <= hi if lo <= hi else t >= lo or t <= hi):
                    yield say(v, f"{label}: the time {written!r} is outside {shown[0]} … {shown[1]}; "
                                 "keep every time of day in that window",
                              f"{label}：时间“{written}”不在 {shown[0]} 到 {shown[1]} 之间；所有时刻都要在这个范围内")

    return make("times_within", name, path, fn, start=start, end=end)


def _key(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    if isinstance(value, str):
        for parse in (dt.datetime.fromisoformat, lambda s: dt.datetime.combine(dt.date.fromisoformat(s), dt.time())):
            try:
                return parse(value.strip()).replace(tzinfo=None)
            except ValueError:
                continue
    return value


def chronological(path: str, *, strict: bool = False, name: str | None = None) -> LibraryCheck:
    """The values at `path` (dates, datetimes, ISO strings, numbers) are in time order
    (`strict`: each later than the one before)."""

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        found = select(out, path)
        keys = [_key(value) for _, value in found]
        for i in range(1, len(keys)):
            try:
                wrong = keys[i] < keys[i - 1] or (strict and keys[i] == keys[i - 1])
            except TypeError:  # a value that is no time: not this check's to judge
                return
            if wrong:
                (a, x), (b, y) = found[i - 1], found[i]
                how_en, how_zh = ("is not later than", "没有晚于") if keys[i] == keys[i - 1] else ("is before", "早于")
                yield say(v, f"{path} must be in time order{' (each later than the one before)' if strict else ''}: "
                             f"{b} ({y}) {how_en} {a} ({x})",
                          f"{path} 必须按时间先后排列{'（每一项都要晚于前一项）' if strict else ''}：{b}（{y}）{how_zh} {a}（{x}）")
                return

    return make("chronological", name, path, fn, strict=strict)
