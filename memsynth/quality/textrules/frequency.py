"""How many times a week a text says something happens: "twice a week", "two mornings a week",
"on Tuesdays and Fridays", 每周两次, 每周挤出两个早上, 每周一、三、五, 周二和周五.

A profile inferred from a persona keeps the persona's routines; a count that changes between
the two ("每周挤出两个早上去游泳馆" become "每周一、三、五…去游泳馆": held-out r26, r27) is the
profile changing what the persona says. `weekly_counts` finds each count and the words around
it that say what it counts, so two texts' routines can be paired by what they are about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_ZH_NUMBER = {"一": 1, "两": 2, "二": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7}
_EN_NUMBER = {"once": 1, "one": 1, "twice": 2, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
_WEEK_ZH = r"(?:每周|每个?星期|每个?礼拜|一周|一个?星期)"
_DAY_ZH = r"[一二三四五六日天]"
_ZH_PATTERNS = (
    # 每周两次, 一周三回, 每周挤出两个早上, 每周去三趟, 每周练四天
    re.compile(_WEEK_ZH + r"[^，。；、\d一二两三四五六七]{0,4}?(?P<n>[一二两三四五六七]|\d)\s*"
                          r"(?:次|回|趟|天|个(?:早上|早晨|上午|下午|晚上|傍晚|清晨))"),
    # 每周一、三、五; 每周二和周五; 周一、周三、周五
    re.compile(r"(?:每周|每个?星期|(?<![老小阿])周|星期)(?P<days>" + _DAY_ZH + r"(?:\s*[、，和及与到至]\s*(?:周|星期)?"
               + _DAY_ZH + r")+)"),
)
_WEEKDAYS_EN = r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?"
_EN_PATTERNS = (
    re.compile(r"\b(?P<n>once|twice|(?:one|two|three|four|five|six|seven|\d) (?:times|mornings|evenings|afternoons|"
               r"nights|days|sessions))\s+(?:a|per|each|every)\s+week\b", re.IGNORECASE),
    re.compile(r"\b(?:on\s+|every\s+)?(?P<days>" + _WEEKDAYS_EN + r"(?:\s*(?:,|and|&)\s*(?:and\s+)?" + _WEEKDAYS_EN
               + r")+)\b", re.IGNORECASE),
)


@dataclass(frozen=True)
class WeeklyCount:
    times: int
    said: str
    rest: str  # the text with the count's words taken out: what the count is of


def _count(m: re.Match[str], zh: bool) -> int | None:
    if days := m.groupdict().get("days"):
        if zh and re.search(r"[到至]", days):
            return None  # 周一到周五 is a span of days, every weekday
        found = re.findall(_DAY_ZH if zh else _WEEKDAYS_EN, days, re.IGNORECASE)
        return len({d.lower().rstrip("s") for d in found})
    n = m.group("n")
    if zh:
        return int(n) if n.isdigit() else _ZH_NUMBER.get(n)
    head = n.split()[0].lower()
    return int(head) if head.isdigit() else _EN_NUMBER.get(head)


def weekly_counts(text: str) -> Iterator[WeeklyCount]:
    """Each count a week the text states, with what is left of it without the count's words."""
    zh = bool(re.search(r"[\u4e00-\u9fff]", text))
    for pattern in _ZH_PATTERNS if zh else _EN_PATTERNS:
        for m in pattern.finditer(text):
            times = _count(m, zh)
            if times and 1 <= times <= 7:
                yield WeeklyCount(times, m.group(0), text[:m.start()] + " " + text[m.end():])
