"""A candidate solution answers the need as it stands: what code can see of that is a deadline the
need fixes and a candidate that moves it ("申请把提交期限延后一周", "ask the manager for an
extension"), which answers another need. Whether a candidate answers the need at all is a reading
the audit judge makes (rule `candidates-fit`)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.core.textmatch import normal_text
from memsynth.generation.stage import check, say
from schemas.pal import Candidates

_WEEKDAY_ZH = r"(?:周|星期|礼拜)[一二三四五六日天]"
# A need that fixes when it is due: "周三前补齐", "11月15日前", "按期完成", "by Friday", "deadline".
_DEADLINE = {
    "zh": re.compile(rf"(?:\d{{1,2}}月\d{{1,2}}[日号]|\d{{1,2}}[日号]|{_WEEKDAY_ZH}|月底|月初|年底|年前|节前|明天|后天|"
                     r"本周|这周|下周|月中)(?:之)?前|按期|按时|如期|截止|期限|最后期限"),
    "en": re.compile(r"\b(?:by|before)\s+(?:(?:next|this)\s+)?(?:monday|tuesday|wednesday|thursday|friday|saturday|"
                     r"sunday|tomorrow|the\s+\d|\d|january|february|march|april|may|june|july|august|september|"
                     r"october|november|december|(?:the\s+)?end\s+of)|\bdeadlines?\b|\bon\s+time\b|\bdue\b"),
}
# A candidate that moves it.
_MOVES = {
    "zh": re.compile(r"延后|推迟|延期|宽限|往后延|往后推|推后|改期|缓交|晚交|晚几天交|延长[^，。；]{0,4}(?:期限|时间|截止)"),
    "en": re.compile(r"\b(?:postpon\w*|push(?:ing|es)?\s+(?:\w+\s+){0,3}back|extend(?:ing|s)?\s+(?:\w+\s+){0,2}deadline|"
                     r"(?:an?\s+)?extension|delay(?:ing|s)?\s+(?:the\s+)?(?:deadline|submission|hand-?in)|"
                     r"(?:move|moving|moves)\s+(?:\w+\s+){0,2}deadline|more\s+time\s+to\s+(?:submit|hand))"),
}
# Said to be avoided, not proposed: "避免延期", "without asking for an extension".
_AVOIDED = {
    "zh": re.compile(r"(?:避免|防止|以免|免得|不要|不必|不用|别|不再|无需|不会|不至于|没有)[^，。；]{0,3}$"),
    "en": re.compile(r"\b(?:avoid(?:ing|s)?|without|not|no\s+need\s+to|rather\s+than|instead\s+of|never)\s+(?:\w+\s+){0,3}$"),
}


def moved_deadline(candidate: str, language: str) -> str | None:
    """The words of `candidate` that move a deadline, unless said as what to avoid."""
    lang = "zh" if language == "zh" else "en"
    text = normal_text(candidate)
    for m in _MOVES[lang].finditer(text):
        if not _AVOIDED[lang].search(text[max(0, m.start() - 24):m.start()]):
            return m.group(0)
    return None


def fixes_a_deadline(requirement: str, language: str) -> bool:
    return bool(_DEADLINE["zh" if language == "zh" else "en"].search(normal_text(requirement)))


@check("keeps_the_deadline")
def keeps_the_deadline(out: Candidates, v: Mapping[str, Any]) -> Iterator[str]:
    """No candidate moves a deadline its need fixes."""
    language = str(v.get("language", "en"))
    needs = {str(t.get("requirement_id")): str(t.get("requirement", "")) for t in v.get("topics", [])}
    for topic in out.topics:
        if not fixes_a_deadline(needs.get(topic.requirement_id, ""), language):
            continue
        for k, solution in enumerate(topic.solutions, start=1):
            if said := moved_deadline(solution, language):
                yield say(v, f"{topic.requirement_id} candidate {k} moves the deadline the need fixes ({said!r}); "
                             "every candidate answers the need within it",
                          f"{topic.requirement_id} 的第 {k} 条方案把需求定下的期限往后挪了（“{said}”）；"
                          "每条方案都要在需求给定的期限内回应它")
