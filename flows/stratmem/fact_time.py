"""When a memory says a thing happened: a date a reader a year later can place.

Two ways a fact fails it, in English and in Chinese: it dates relative to when it was said
("yesterday", "recently", "in two weeks", 最近, 上周, 三天前) and states no date beside it; or it
names a day in another form than YYYY-MM-DD ("March 13, 2024", "13/3/2024", 2024年3月13日,
3月13号). A month or a year alone may be written in words ("June 2023", 2024年3月): the prompt
asks for the day as YYYY-MM-DD and lets the month or year stand alone, and StratMem-Bench's
release writes 42 of its 5,778 facts so ("in mid-June 2023").
"""

from __future__ import annotations

import re
import unicodedata

from memsynth.core.textmatch import normal_text, zh_words

_CJK = re.compile(r"[\u4e00-\u9fff]")
_COUNT_EN = r"(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|a few|a couple of|couple of|several|some|\d+)"
_UNIT_EN = r"(?:days?|weeks?|months?|years?|weekends?)"
_PART_EN = (r"(?:week|month|weekend|year|night|morning|afternoon|evening|spring|summer|fall|autumn|winter|"
            r"monday|tuesday|wednesday|thursday|friday|saturday|sunday)")
# The prompt's "yesterday", "recently", "last week" and their kind: words that place a time
# only from the day they were said. "currently" and "these days" state a present condition,
# as 57 of the release's facts do ("Melanie is currently overwhelmed"): they are not dates.
_RELATIVE_EN = re.compile(
    rf"\b(yesterday|today|tonight|tomorrow|the day before|recently|lately|the other day|not long ago|"
    rf"a (little )?while (ago|back)|just now|earlier today|later today|"
    rf"(last|next|this|this past|this coming|the coming|earlier this|later this|past) {_PART_EN}|"
    rf"{_COUNT_EN} {_UNIT_EN} (ago|earlier|before that|from now)|"
    rf"in {_COUNT_EN} {_UNIT_EN}(?! (of|in a row|straight))|"
    rf"(the )?(past|last|next) {_COUNT_EN} {_UNIT_EN})\b", re.IGNORECASE)
# Chinese has no spaces: a word counts from the start of one of jieba's words, so 以前天天
# (以前/天天) holds no 前天. 最近 also means "nearest" (离家最近的): not before 的, not after 离.
_RELATIVE_ZH = frozenset(
    "昨天 昨日 今天 今日 明天 明日 前天 后天 大前天 大后天 今晚 昨晚 明晚 今早 昨早 明早 今天早上 上周 下周 本周 这周 上上周 "
    "上个月 下个月 这个月 本月 上月 下月 去年 今年 明年 前年 后年 上星期 下星期 这星期 上礼拜 下礼拜 这礼拜 上个星期 下个星期 "
    "前几天 几天前 前两天 前些天 前些日子 前阵子 前段时间 最近 近来 近期 近日 日前 不久前 刚才 刚刚 这阵子 这几天 这些天 "
    "这段时间 上周末 下周末 这个周末 本周末 今年初 今年底 上半年 下半年".split())
_LONG_ZH = sorted((r for r in _RELATIVE_ZH if len(r) >= 3), key=len, reverse=True)
_NEAREST = re.compile(r"最近(?=的)|离[^。，,；;]{0,12}最近")
_ZH_COUNT = r"[\d一二两三四五六七八九十几半数]+"
# 三天前, 两周后, 几个月以前: a span counted from the day it was said.
_SPAN_ZH = re.compile(rf"{_ZH_COUNT}\s*(个)?\s*(天|日|周|星期|礼拜|月|年|多月|来月)(以|之)?(前|后)")
_ABSOLUTE = re.compile(r"(?<!\d)\d{4}(-\d{2}){0,2}(?!\d)|\d{4}\s*年")

_MONTH = ("January|February|March|April|May|June|July|August|September|October|November|December|"
          "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec")
# A day written otherwise than YYYY-MM-DD. Month names are matched capitalised: "may" is a verb.
_DAY_FORMS = re.compile(
    rf"\b(?:{_MONTH})\.? \d{{1,2}}(?:st|nd|rd|th)?\b(?!:)"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)? (?:of )?(?:{_MONTH})\b"
    rf"|\bthe \d{{1,2}}(?:st|nd|rd|th) of\b"
    r"|(?<![\d.])\d{1,2}/\d{1,2}/\d{2,4}(?![\d/])|(?<![\d.])\d{4}[/.]\d{1,2}[/.]\d{1,2}(?![\d.])"
    r"|(?<!\d)\d{4}-(\d-\d{1,2}|\d{2}-\d)(?!\d)"
    r"|[\d〇零一二三四五六七八九十]{1,3}\s*月\s*[\d〇零一二三四五六七八九十]{1,3}\s*[日号號]")


def says_relative_time(text: str) -> str | None:
    """The words by which a text dates something relative to when it was said ("yesterday",
    "in two weeks", 上周, 三天前), or None."""
    normal = normal_text(text)
    if m := _RELATIVE_EN.search(normal):
        return m.group(0)
    if not _CJK.search(normal):
        return None
    if m := _SPAN_ZH.search(normal):
        return m.group(0)
    masked = _NEAREST.sub(lambda m: "　" * len(m.group(0)), normal)
    # Three characters or more are no part of another word (前阵子 in 许磊前阵子, split 许/磊前/阵子).
    if found := next((r for r in _LONG_ZH if r in masked), None):
        return found
    # A relative word starts at a word's start and may run into the next one: jieba splits
    # 上周初 as 上/周初.
    words = zh_words(masked)
    for i, w in enumerate(words):
        ahead = w + "".join(words[i + 1:i + 3])
        if found := max((r for r in _RELATIVE_ZH if ahead.startswith(r)), key=len, default=None):
            return found
    return None


def undated_relative_time(text: str) -> str | None:
    """A relative time word in a text that states no date beside it ("last week before
    2023-07-21" is dated), or None."""
    found = says_relative_time(text)
    return found if found and not _ABSOLUTE.search(normal_text(text)) else None


def day_not_iso(text: str) -> str | None:
    """A day a text writes in another form than YYYY-MM-DD, as written, or None."""
    m = _DAY_FORMS.search(unicodedata.normalize("NFKC", text))  # not case-folded: "May" is a month
    return m.group(0) if m else None


# "Yesterday" dated as the session's own day: a fact that puts an event on the session date
# ("on 2023-05-08", 于2024-03-02) while the line of the session it comes from says it happened
# yesterday. Said only where code can tell: the event form of the date (not "as of", 截至, a
# state on that day), a line saying yesterday that shares at least this many content words
# (CJK character pairs) with the fact, names aside, and no line saying today that shares as many.
_YESTERDAY = re.compile(r"\byesterday\b|昨天|昨日|昨晚|昨儿")
_TODAY = re.compile(r"\b(today|tonight|this (morning|afternoon|evening))\b|今天|今日|今晚|今早|刚才|刚刚")
_STATE = re.compile(r"\bas of\b|截至|截止")
SHARED_WITH_LINE = {"en": 3, "zh": 4}


def _event_on(fact: str, date: str) -> bool:
    d = re.escape(date)
    return bool(re.search(rf"\bon {d}|[于在是]\s*{d}|^{d}", fact)) and not _STATE.search(normal_text(fact))


def yesterday_as_session_day(fact: str, date: str, lines: list[str], names: list[str]) -> str | None:
    """The session line that says yesterday of what the fact dates on the session day, or None."""
    from memsynth.core.textmatch import content_tokens

    if not date or date not in fact or not _event_on(fact, date):
        return None
    drop = {t for n in names for t in content_tokens(n)} | content_tokens(date)
    wanted = content_tokens(fact.replace(date, " ")) - drop
    least = SHARED_WITH_LINE["zh" if _CJK.search(fact) else "en"]

    def shared(line: str) -> int:
        return len(wanted & content_tokens(line))

    said = [(shared(line), line) for line in lines if _YESTERDAY.search(normal_text(line))]
    today = max((shared(line) for line in lines if _TODAY.search(normal_text(line))), default=0)
    best = max(said, default=(0, ""), key=lambda x: x[0])
    return best[1] if best[0] >= least and best[0] > today else None
