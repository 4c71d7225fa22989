"""Ages a text states of a person, as ranges of years: "37", "a 37-year-old", "in her late
thirties", "early 30s", "36岁", "三十六岁", "三十多岁", "三十出头", "年近四十".

A range is what the words allow ("late thirties" is 36-39): a check compares ranges with a
band, so "roughly the age" holds when any stated range meets it."""

from __future__ import annotations

import re

_EN_TENS = {"twenties": 20, "thirties": 30, "forties": 40, "fifties": 50, "sixties": 60, "seventies": 70,
            "eighties": 80}
_PART = {"early": (0, 3), "mid": (3, 7), "middle": (3, 7), "late": (6, 9), "": (0, 9)}
# "30s" is an age only after "her" / "in" / "early" ("80s music" is not); "thirties" always is.
_EN_DECADE = re.compile(r"\b(?:(early|mid|middle|late)[- ]?)?(twenties|thirties|forties|fifties|sixties|seventies|"
                        r"eighties)\b|\b(?:her|his|their|in)\s+(?:(early|mid|middle|late)[- ]?)?([2-8]0)'?s\b"
                        r"|\b(early|mid|middle|late)[- ]([2-8]0)'?s\b", re.I)
# "Claire Whitworth, 37, is …": a name's appositive age; "At 37, Megan is …".
_EN_EXACT = re.compile(r"\b(\d{1,2})(?:[- ]years?[- ]old\b|-year\b|\s*(?:yo|y/o)\b)|\b(?:aged?|age of)\s+(\d{1,2})\b"
                       r"|(?<=[a-z]),\s+(\d{2}),\s|\bat\s+([2-9]\d),\s"
                       r"|\b(?:is|are|was|turned|turning|just turned)\s+(\d{1,2})\b(?!\s*(?:%|percent|minutes|hours|days|"
                       r"weeks|months|years|km|miles|kg|am|pm|:))", re.I)
# "aged 30-34", "aged between 30 and 34": a band, not an exact age (the simulator's personas say so).
_EN_RANGE = re.compile(r"\b(?:aged?|ages|age of)\s+(?:between\s+)?(\d{1,2})\s*(?:-|–|to|and)\s*(\d{1,2})\b", re.I)
_ZH_NUM = "零一二两三四五六七八九十"
_ZH_EXACT = re.compile(rf"(\d{{1,2}}|[{_ZH_NUM}]{{1,3}})(?:周)?岁")
_ZH_RANGE = re.compile(r"(\d{1,2})\s*[-–~至到]\s*(\d{1,2})\s*岁")
_ZH_ABOUT = re.compile(rf"([{_ZH_NUM}]{{1,2}}|\d0)(多岁|来岁|出头|上下)")
_ZH_NEAR = re.compile(rf"(?:年近|快|将近|奔)([{_ZH_NUM}]{{1,2}}|\d0)(?!多)")


def _zh_int(text: str) -> int | None:
    if text.isdigit():
        return int(text)
    digits = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"两": 2}
    if "十" in text:
        tens, _, ones = text.partition("十")
        value = (digits.get(tens, 1) if tens else 1) * 10 + (digits.get(ones, 0) if ones else 0)
        return value if (not tens or tens in digits) and (not ones or ones in digits) else None
    return digits.get(text) if len(text) == 1 else None


def stated_ages(text: str) -> list[tuple[int, int]]:
    """Every age range the text states, in order of appearance (en and zh)."""
    found: list[tuple[int, tuple[int, int]]] = []
    for m in _EN_DECADE.finditer(text):
        part = m.group(1) or m.group(3) or m.group(5) or ""
        tens = _EN_TENS[m.group(2).lower()] if m.group(2) else int(m.group(4) or m.group(6))
        low, high = _PART[part.lower()]
        found.append((m.start(), (tens + low, tens + high)))
    taken: list[tuple[int, int]] = []
    for m in _EN_RANGE.finditer(text):
        found.append((m.start(), (int(m.group(1)), int(m.group(2)))))
        taken.append(m.span())
    for m in _EN_EXACT.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        age = int(next(g for g in m.groups() if g))
        found.append((m.start(), (age, age)))
    for m in _ZH_RANGE.finditer(text):
        found.append((m.start(), (int(m.group(1)), int(m.group(2)))))
        taken.append(m.span())
    for m in _ZH_ABOUT.finditer(text):
        base = _zh_int(m.group(1))
        if base is not None:
            spread = {"多岁": (1, 9), "来岁": (-2, 2), "出头": (0, 3), "上下": (-3, 3)}[m.group(2)]
            found.append((m.start(), (base + spread[0], base + spread[1])))
            taken.append(m.span())
    for m in _ZH_NEAR.finditer(text):
        base = _zh_int(m.group(1))
        if base is not None and base >= 10:
            found.append((m.start(), (base - 3, base - 1)))
    for m in _ZH_EXACT.finditer(text):
        if any(a <= m.start() < b for a, b in taken):
            continue
        age = _zh_int(m.group(1))
        if age is not None:
            found.append((m.start(), (age, age)))
    return [r for _, r in sorted(found)]


def band(text: str) -> tuple[int, int] | None:
    """An age band as written in the attributes ("30-34", "65-72")."""
    m = re.fullmatch(r"\s*(\d{1,3})\s*[-–~]\s*(\d{1,3})\s*", text)
    return (int(m.group(1)), int(m.group(2))) if m else None


_EN_DECADE_WORD = {v: k for k, v in _EN_TENS.items()}


def _zh_numeral(n: int) -> str:
    digits = "零一二三四五六七八九"
    tens, ones = divmod(n, 10)
    return (digits[tens] if tens > 1 else "") + ("十" if tens else "") + (digits[ones] if ones else "")


def restate_ages(text: str, age: int) -> str:
    """`text` with every age it states made `age` (a decade made age's decade, in the text's own
    form): what a writer who got the age wrong would have written."""
    decade = age // 10 * 10

    def en_decade(m: re.Match[str]) -> str:
        if m.group(2):
            return m.group(0).replace(m.group(2), _EN_DECADE_WORD.get(decade, m.group(2)))
        digits = m.group(4) or m.group(6)
        return m.group(0).replace(digits, str(decade))

    def exact(m: re.Match[str]) -> str:
        group = next(i for i, g in enumerate(m.groups(), 1) if g)
        a, b = m.span(group)
        return m.group(0)[: a - m.start()] + str(age) + m.group(0)[b - m.start():]

    def zh_number(m: re.Match[str], value: int) -> str:
        old = m.group(1)
        return m.group(0).replace(old, str(value) if old.isdigit() else _zh_numeral(value), 1)

    text = _EN_DECADE.sub(en_decade, text)
    text = _EN_EXACT.sub(exact, text)
    text = _ZH_RANGE.sub(lambda m: f"{age}岁", text)
    text = _ZH_ABOUT.sub(lambda m: zh_number(m, decade), text)
    text = _ZH_NEAR.sub(lambda m: zh_number(m, decade + 10), text)
    return _ZH_EXACT.sub(lambda m: zh_number(m, age), text)


def without_ages(text: str) -> str:
    """`text` with every age it states taken out: what a writer who forgot "roughly the age" leaves."""
    for pattern in (_EN_DECADE, _EN_EXACT, _ZH_RANGE, _ZH_ABOUT, _ZH_NEAR, _ZH_EXACT):
        text = pattern.sub(" ", text)
    text = re.sub(r"\b(?:(?:in|at)(?:\s+(?:her|his|their))?|aged?)\s+(?=[,.;])", "", text)  # words whose age went
    text = re.sub(r"\s*,\s*(?=[,.;])|\s+(?=[,.;])", "", text)
    text = re.sub(r"[，,]\s*(?=[，。；])", "", text)
    return re.sub(r"\s{2,}", " ", text).strip()
