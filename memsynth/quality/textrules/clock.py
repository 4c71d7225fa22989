"""Dates and clock times written in prose, placed on the days of a span.

An experience that runs past its span's end is seldom written "2024-11-12": it says
"11月12日", "the next morning", "17:15", "5:30 pm" or "下午五点半" after naming the last
day. `moments` reads a text in order, keeping the day it is on (an ISO date, 11月12日, 12日,
12号, "November 12", "the 12th", a weekday inside the span, 第二天 / "the next day"), and
yields each day or clock time it reaches; a time on a day it cannot place is not yielded.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterator
from dataclasses import dataclass

_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8,
              "九": 9, "十": 10}
_ZH_NUM = r"[零〇一二两三四五六七八九十]{1,3}|\d{1,2}"
_MONTHS = {m.lower(): i for i, m in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
     "november", "december"], start=1)}
_MONTHS.update({k[:3]: v for k, v in list(_MONTHS.items())})
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS_EN = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_WEEKDAYS_ZH = "一二三四五六日"
_AFTERNOON_ZH = ("下午", "傍晚", "晚上", "夜里", "深夜", "晚间", "入夜")

_PATTERNS = [
    ("iso", r"(?<!\d)(?P<iy>\d{4})-(?P<im>\d{2})-(?P<id>\d{2})(?!\d)"),
    ("zh_md", rf"(?P<zm>{_ZH_NUM})月(?P<zd>{_ZH_NUM})[日号]"),
    ("zh_d", r"(?<![月\d零〇一二两三四五六七八九十])(?P<zd2>\d{1,2}|[一二三四五六七八九十]{1,3})[日号](?![子常本])"),
    ("zh_wd", r"(?:(?<![老小阿])周|星期|礼拜)(?P<zw>[一二三四五六日天])"),  # 老周一起 is Old Zhou
    ("zh_next", r"第二天|次日|隔天|翌日|第二日"),
    ("en_md", rf"\b(?P<em>{_MONTH_RE})\.?\s+(?P<ed>\d{{1,2}})(?:st|nd|rd|th)?\b"),
    ("en_dm", rf"\b(?P<ed2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<em2>{_MONTH_RE})\b"),
    ("en_th", r"\bthe\s+(?P<ed3>\d{1,2})(?:st|nd|rd|th)\b"),
    ("en_wd", r"\b(?P<ew>" + "|".join(_WEEKDAYS_EN) + r")\b"),
    ("en_next", r"\b(?:the\s+)?(?:next|following)\s+(?:day|morning|afternoon|evening|night)\b"),
    ("hm", r"(?<![\d:])(?P<hh>[01]?\d|2[0-3])[:：](?P<mm>[0-5]\d)(?![\d:])"
           r"(?:\s*(?P<hap>a\.?m\.?|p\.?m\.?)(?![a-z]))?"),
    ("en_h", r"\b(?P<eh>1[0-2]|0?[1-9])(?:\.(?P<emin>[0-5]\d))?\s*(?P<eap>a\.?m\.?|p\.?m\.?|o'clock)(?![a-z])"),
    ("zh_h", rf"(?P<zp>上午|早上|早晨|清晨|凌晨|中午|午后|下午|傍晚|晚上|夜里|深夜|晚间)?"
             rf"(?P<zh>{_ZH_NUM})[点时](?P<zq>半|一刻|三刻|(?P<zmin>{_ZH_NUM})分?)?"),
]
_SCAN = re.compile("|".join(f"(?P<{name}>{body})" for name, body in _PATTERNS), re.IGNORECASE)


def _zh_int(text: str) -> int:
    if text.isdigit():
        return int(text)
    if text.startswith("十"):
        return 10 + (_ZH_DIGITS[text[1]] if len(text) > 1 else 0)
    if "十" in text:
        tens, _, units = text.partition("十")
        return _ZH_DIGITS[tens] * 10 + (_ZH_DIGITS[units] if units else 0)
    return _ZH_DIGITS.get(text, -1)


@dataclass(frozen=True)
class Moment:
    """A point the text reaches: a day, and the clock time on it when the text gives one."""

    day: dt.date
    time: dt.time | None
    said: str  # the words that said it

    @property
    def at(self) -> dt.datetime:
        return dt.datetime.combine(self.day, self.time or dt.time(0, 0))


def _day_in_span(start: dt.date, end: dt.date, month: int | None, day: int) -> dt.date | None:
    """The date of `day` (in `month`, else in a month the span touches or the next) nearest the span."""
    months = [month] if month else [start.month, end.month, end.month % 12 + 1]
    candidates = []
    for year in (start.year, end.year, end.year + 1):
        for m in months:
            try:
                candidates.append(dt.date(year, m, day))
            except ValueError:
                continue
    if not candidates:
        return None
    return min(candidates, key=lambda d: (0 if start <= d <= end else 1, abs((d - end).days)))


def _weekday(start: dt.date, end: dt.date, index: int, current: dt.date | None) -> dt.date | None:
    """The span's day with that weekday (the first after the current day when there are two)."""
    days = [start + dt.timedelta(days=k) for k in range((end - start).days + 1)]
    matches = [d for d in days if d.weekday() == index]
    if not matches:
        return None
    later = [d for d in matches if current is None or d >= current]
    return (later or matches)[0]


def _period_before(m: re.Match[str]) -> str:
    """下午 / 晚上 … said earlier in the same clause (…晚上加班到十点): the period of a bare hour."""
    before = re.split(r"[。！？；;,，]", m.string[max(0, m.start() - 12):m.start()])[-1]
    found = re.findall(r"上午|早上|早晨|清晨|凌晨|中午|下午|傍晚|晚上|夜里|深夜|晚间", before)
    return found[-1] if found else ""


def _clock(m: re.Match[str]) -> dt.time | None:
    if m.group("hm"):
        hour, minute = int(m.group("hh")), int(m.group("mm"))
        marker = (m.group("hap") or "").lower().replace(".", "")
    elif m.group("en_h"):
        hour, minute = int(m.group("eh")), int(m.group("emin") or 0)
        marker = m.group("eap").lower().replace(".", "")
    elif m.group("zh_h"):
        hour = _zh_int(m.group("zh"))
        quarter = m.group("zq") or ""
        minute = {"半": 30, "一刻": 15, "三刻": 45}.get(quarter, _zh_int(m.group("zmin")) if m.group("zmin") else 0)
        period = m.group("zp") or _period_before(m)
        marker = "pm" if period in _AFTERNOON_ZH or (period in ("中午", "午后") and hour < 6) else ""
        if period in ("晚上", "深夜", "夜里") and hour == 12:
            hour, marker = 23, ""
            minute = 59
    else:
        return None
    if marker == "pm" and hour < 12:
        hour += 12
    elif marker == "am" and hour == 12:
        hour = 0
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        return None
    return dt.time(hour, minute)


# "周三前交", and "周三下班前交" / "周五中午之前": a part of the day may stand before 前, and a
# short aside in brackets after the day, or the day itself in brackets ("11月15日（星期五）前",
# "星期三（11月13日）前"). 前往, 前来 and 前去 are going somewhere, not a deadline.
_DEADLINE_AFTER = re.compile(r"(?:[)）])?(?:\s*[（(][^（()）]{1,12}[)）])?"
                             r"\s*(?:下班|上班|中午|早上|上午|下午|晚上|傍晚)?\s*"
                             r"(前(?![往来去])|之前|以前|截止|到期|为止|交|提交|之内|内)")
_DEADLINE_BEFORE = re.compile(r"\b(by|before|until|till|due( on)?|deadline( of| is)?( on)?|no later than)\s*(the\s+)?$",
                              re.IGNORECASE)


def _deadline(m: re.Match[str]) -> bool:
    after = m.string[m.end():m.end() + 9]
    before = m.string[max(0, m.start() - 20):m.start()]
    return bool(_DEADLINE_AFTER.match(after) or _DEADLINE_BEFORE.search(before)
                or re.search(r"(截止|期限|最晚|不晚于|之前要?)[^，。；]{0,4}$", before))


# "安排从第二天起每班加抽二十件", "和班长商定，从下周一起每班抽检", "和班组长商量第二天对批次做
# 全检": the day a plan starts, arranged now, not a day the text reaches (held-out r26, r27, a27).
# Only with the verb of planning in its clause, or the clause before it when the day starts
# something (起, 开始): "从第二天起他就请了假" does reach it.
_PLAN_VERBS_ZH = r"(安排|计划|决定|约定|打算|准备|要求|定下|商定|说好|商量|约好|确定|定好|确认)"
_PLANNED_IN_CLAUSE = re.compile(_PLAN_VERBS_ZH + r"[^，。；！？]{0,8}$")
_PLANNED_CLAUSE_BEFORE = re.compile(_PLAN_VERBS_ZH + r"[^，。；！？]{0,8}，[^，。；！？]{0,4}$")
_PLANNED_BEFORE_EN = re.compile(r"\b(arranged|planned|decided|agreed|asked)\b[^.;!?]{0,50}\b(from|starting)\s*(on\s+)?$",
                                re.IGNORECASE)
_ZH_DAYS = ("zh_next", "zh_wd", "zh_md", "zh_d")


def _planned_start(m: re.Match[str]) -> bool:
    before = m.string[max(0, m.start() - 70):m.start()]
    if any(m.group(g) for g in _ZH_DAYS):
        starts = re.match(r"(起|开始)(的)?", m.string[m.end():m.end() + 3])
        # "从第二天开始的全检安排": a plan's first day said of the plan (a29)
        return bool(_PLANNED_IN_CLAUSE.search(before) or (starts and (starts.group(2) or _PLANNED_CLAUSE_BEFORE.search(before))))
    return bool(_PLANNED_BEFORE_EN.search(before))


# "晚上八点前回到家", "home before 8 pm": a clock time the text stays before, not one it reaches.
# Narrower than a day's deadline: "加班到八点为止" and "until 8 pm" do reach eight.
_TIME_BEFORE_AFTER = re.compile(r"\s*(前|之前|以前)")
_TIME_BEFORE_BEFORE = re.compile(r"\b(by|before|no later than)\s*$", re.IGNORECASE)


def _time_deadline(m: re.Match[str]) -> bool:
    return bool(_TIME_BEFORE_AFTER.match(m.string[m.end():m.end() + 3])
                or _TIME_BEFORE_BEFORE.search(m.string[max(0, m.start() - 20):m.start()]))


def _bare_zh_hour(m: re.Match[str]) -> bool:
    """八点二十 with no 上午/下午/晚上 of its own or earlier in its clause: a 12-hour clock."""
    return bool(m.group("zh_h")) and not (m.group("zp") or _period_before(m))


def moments(text: str, start: dt.date, end: dt.date) -> Iterator[Moment]:
    """Each day and clock time the text reaches, in order, placed on the span's days. A bare
    Chinese hour that would go back before the day's last time read as the afternoon ("晚上七点
    十分到家；八点二十…" is 20:20): a narrative of one day goes forward."""
    current: dt.date | None = start if start == end else None
    last: dt.time | None = None
    for m in _SCAN.finditer(text):
        day: dt.date | None = None
        try:
            if m.group("iso"):
                day = dt.date(int(m.group("iy")), int(m.group("im")), int(m.group("id")))
            elif m.group("zh_md"):
                day = _day_in_span(start, end, _zh_int(m.group("zm")), _zh_int(m.group("zd")))
            elif m.group("zh_d"):
                day = _day_in_span(start, end, None, _zh_int(m.group("zd2")))
            elif m.group("en_md") or m.group("en_dm"):
                month = _MONTHS[(m.group("em") or m.group("em2")).lower()]
                day = _day_in_span(start, end, month, int(m.group("ed") or m.group("ed2")))
            elif m.group("en_th"):
                day = _day_in_span(start, end, None, int(m.group("ed3")))
            elif m.group("zh_wd"):
                day = _weekday(start, end, _WEEKDAYS_ZH.index(m.group("zw").replace("天", "日")), current)
            elif m.group("en_wd"):
                day = _weekday(start, end, _WEEKDAYS_EN.index(m.group("ew").lower()), current)
            elif m.group("zh_next") or m.group("en_next"):
                day = current + dt.timedelta(days=1) if current else None
        except (ValueError, KeyError):
            day = None
        if day is not None and (_deadline(m) or _planned_start(m)):
            continue  # "11月15日前交报告": a day named as a deadline, not one the text reaches
        if day is not None:
            current, last = day, None
            yield Moment(day, None, m.group(0))
            continue
        if current is not None and (time := _clock(m)) is not None and not _time_deadline(m):
            if last is not None and time < last and time.hour < 12 and _bare_zh_hour(m) \
                    and dt.time(time.hour + 12, time.minute) >= last:
                time = dt.time(time.hour + 12, time.minute)
            last = time
            yield Moment(current, time, m.group(0))


def past(text: str, start: dt.datetime, end: dt.datetime, end_included: bool = False) -> list[Moment]:
    """The moments of `text` after `end`: a later day, or a later clock time on the last day.
    With `end_included`, a clock time at `end` itself counts too: a span that ends when something
    else begins (pal's experience ends at 20:00 because the dialogue starts then, so "晚上八点，
    用户打开了助手" already describes the dialogue)."""
    found = []
    for moment in moments(text, start.date(), end.date()):
        late = moment.time is not None and (moment.at >= end if end_included else moment.at > end)
        if moment.day > end.date() or (moment.day == end.date() and late):
            found.append(moment)
    return found


# --- a text that must carry no date -------------------------------------------------------
#
# What dates a fact: a calendar day in any form (2024-11-11, 11月7日, Nov 7, 7 November), a
# year and month (2024年11月, 2024-11, November 2024), one named weekday (周三, 上周五, last
# Wednesday) and a day counted from another (昨天, 第二天, 次日, yesterday, the next day). Not a
# date: a day named as a deadline ("11月15日前提交", "due by Friday": the fact is the deadline), a
# habit's weekday (每周三, 周一到周五, 一周三次, every Wednesday, on Wednesdays), a part of a day or a
# clock time on its own (下午, 晚上十点, "at 10 pm": "加班到晚上十点" is a fact of any day), and a
# bare day of the month ("12号楼", "the 5th floor" read as days far too often), and the day of a named event
# ("抽检当天傍晚": a27's acceptable evidence) where 她当天, 用户当天 and a clause's 当天 are a day.
_DATING_KINDS = ("iso", "zh_md", "zh_wd", "zh_next", "en_md", "en_dm", "en_wd", "en_next")
_RELATIVE = re.compile(
    r"(?P<rel>昨天|前天|今天|明天|后天|(?<![\u4e00-\u9fff])当天|(?<=[她他我你它])当天|(?<=用户)当天|前一天|头一天|上周|上星期|上个?礼拜|(?<!\d)\d{4}年\d{1,2}月|(?<![\d-])\d{4}-\d{2}(?![\d-])"
    rf"|\b(?:yesterday|today|tomorrow|last week|the (?:previous|day) (?:day|before)|(?:{_MONTH_RE}) \d{{4}})\b)",
    re.IGNORECASE)


def _habit(m: re.Match[str], kind: str) -> bool:
    """A weekday that recurs (每周三, 周一到周五, 一周三次, every Wednesday), not one day."""
    before, after = m.string[max(0, m.start() - 6):m.start()], m.string[m.end():m.end() + 10]
    if kind == "zh_wd":
        return bool(re.search(r"(每|每个|逢|到|至|[-~～])\s*$", before) or re.match(r"[次回天个趟遍]|\s*(到|至|[-~～])", after)
                    or re.search(r"[一二两三四五六七八九十\d]$", before))
    return bool(re.search(r"\b(every|each|to|through)\s+$|[-–]\s*$", before, re.IGNORECASE)
                or re.match(r"\s*(to|through|-|–)\s", after, re.IGNORECASE))


def dates(text: str, deadlines: bool = False) -> list[str]:
    """The words of `text` that date it (see above for what counts), in order; with `deadlines`,
    a day named as a deadline too (a text that must carry no detail of when at all)."""
    found: list[tuple[int, str]] = []
    for m in _SCAN.finditer(text):
        kind = m.lastgroup
        if kind in _DATING_KINDS and (deadlines or not _deadline(m)) and not (kind in ("zh_wd", "en_wd")
                                                                                and _habit(m, kind)):
            found.append((m.start(), m.group(0)))
    for m in _RELATIVE.finditer(text):
        if deadlines or not _deadline(m):
            found.append((m.start(), m.group(0)))
    return [words for _, words in sorted(found)]


# A day and its weekday said together: "11月10日周六", "11月10日（星期六）", "2024-11-10 周六",
# "Saturday 9 November", "Saturday, November 9", "9 November (Saturday)".
_WD_ZH = r"[（(\s]*(?:周|星期|礼拜)(?P<w>[一二三四五六日天])"
_WD_EN = r"(?P<w>" + "|".join(_WEEKDAYS_EN) + r")"
_DAY_AND_WEEKDAY = [re.compile(p, re.IGNORECASE) for p in (
    rf"(?P<m>{_ZH_NUM})月(?P<d>{_ZH_NUM})[日号]{_WD_ZH}",
    rf"(?<!\d)(?P<y>\d{{4}})-(?P<m>\d{{2}})-(?P<d>\d{{2}})(?!\d){_WD_ZH}",
    rf"\b{_WD_EN},?\s+(?:the\s+)?(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH_RE})\b",
    rf"\b{_WD_EN},?\s+(?P<m>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\b",
    rf"\b(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTH_RE})\s*\(\s*{_WD_EN}\b",
    rf"\b(?P<m>{_MONTH_RE})\.?\s+(?P<d>\d{{1,2}})(?:st|nd|rd|th)?\s*\(\s*{_WD_EN}\b",
)]


def wrong_weekdays(text: str, start: dt.date, end: dt.date) -> list[tuple[str, dt.date]]:
    """(the words, the day they name) for each day said with a weekday it does not fall on, the
    year taken from the span ("11月10日周六" in November 2024: the 10th was a Sunday)."""
    out = []
    for pattern in _DAY_AND_WEEKDAY:
        for m in pattern.finditer(text):
            w = m.group("w").lower()
            index = _WEEKDAYS_ZH.index(w.replace("天", "日")) if w in _WEEKDAYS_ZH + "天" else _WEEKDAYS_EN.index(w)
            month = m.group("m")
            try:
                number = int(month) if month.isdigit() else _MONTHS.get(month.lower()) or _zh_int(month)
                if m.groupdict().get("y"):
                    day: dt.date | None = dt.date(int(m.group("y")), number, int(m.group("d")))
                else:
                    day = _day_in_span(start, end, number, _zh_int(m.group("d")))
            except (ValueError, KeyError, IndexError):
                continue
            if day is not None and day.weekday() != index:
                out.append((m.group(0), day))
    return out
