"""stratmem's mutants: each rule of rules.py with a check or a judge, broken on purpose in good answers
(memsynth.quality.mutants; `python -m memsynth.quality.mutants` prints the table)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.stratmem.checks import FACT_CHARS_ZH, FACT_WORDS, PERSONA_ITEMS, QUERY_CHARS_ZH, QUERY_WORDS
from flows.stratmem.evaluation import STAGES as EVAL_STAGES
from flows.stratmem.form_checks import TRAIT_LIMIT
from flows.stratmem.stages import STAGES
from memsynth.quality.mutants import (
    SCHEMA_RULE,
    Aim,
    Append,
    Count,
    DayInWords,
    DropOne,
    Duplicate,
    Fields,
    InsertText,
    Longer,
    Replace,
    Reword,
    Rewrite,
    Sentences,
    Set,
    Voice,
    least_related,
)
from memsynth.quality.mutants.text import replace_words
from memsynth.quality.textrules.meaning import meaning_units

FACTS = ("extract", "merge")


def _zh(v: Mapping[str, Any]) -> bool:
    return v.get("language") == "zh"


def _pronouns(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """Each speaker's name made 'she' / 'I' (她 / 我): the fact no longer names its person."""
    out = []
    for name in v.get("speakers", []):
        if language == "zh":
            out += [("third", {name: "她"}), ("first", {name: "我"})]
        else:
            out += [("third", {f"{name}'s": "her", f"{name}’s": "her", name: "she"}),
                    ("first", {f"{name}'s": "my", f"{name}’s": "my", name: "I"})]
    return out


def _third_person(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """The query speaks of the character by name instead of to "you"."""
    name = str(v.get("virtual_person", "")).strip()
    if not name:
        return []
    if language == "zh":
        return [("third_character", {"你们": f"{name}他们", "你": name})]
    return [("third_character", {"you": name, "You": name, "your": f"{name}'s", "Your": f"{name}'s"})]


# Dates as facts write them, and the relative words the rule forbids instead.
_DATE = {"en": r"\b(on |in )?(\d{1,2} )?(January|February|March|April|May|June|July|August|September|October|"
               r"November|December)( \d{1,2})?,? \d{4}\b|\b\d{4}-\d{2}-\d{2}\b",
         "zh": r"\d{4}年(\d{1,2}月)?(\d{1,2}日)?|\d{4}-\d{2}-\d{2}"}
_RELATIVE = {"en": ("yesterday", "last week", "recently", "a few days ago", "in two weeks"),
             "zh": ("昨天", "上周", "最近", "前几天", "两周后")}
_OTHER = {"en": ("Ana",), "zh": ("王芳",)}


def _about_first_speaker(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """The `about` of the first memory that names the first speaker alone (and is about them):
    set to the other speaker, the fact is given to the wrong person."""
    first, second = (list(v.get("speakers") or []) + ["", ""])[:2]
    for i, m in enumerate(answer.get("memories") or []):
        if isinstance(m, dict) and m.get("about") == first and first in str(m.get("fact", "")) \
                and second not in str(m.get("fact", "")):
            return [("memories", i, "about")]
    return []


def _self_introduced(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """The persona speaks as the character ("I am …", 我是…) instead of describing them."""
    name = str(v.get("virtual_person", "")).strip()
    if not name:
        return []
    if language == "zh":
        return [("first_persona", {name: "我", "她": "我", "他": "我"})]
    return [("first_persona", {f"{name}'s": "my", f"{name}’s": "my", name: "I", "She": "I", "He": "I",
                               "she": "I", "he": "I", "her": "my", "his": "my"})]


_YOU = {"en": {"her": "your", "his": "your", "she": "you", "he": "you", "is": "were", "are": "were", "has": "had"},
        "zh": {"她": "你", "他": "你"}}


def _memory_to_you(v: Mapping[str, Any], language: str) -> list[str]:
    """A memory restated to the character nearly word for word, its person made "you"."""
    memories = [str(m["fact"]) for m in v.get("memories", [])]
    if not memories:
        return []
    table = {**_YOU[language], **{str(n): ("你" if language == "zh" else "you") for n in (
        v.get("virtual_person"), v.get("human")) if n}}
    said = replace_words(memories[-1].rstrip("。.！!"), table)
    return [f"记得{said}吗？"] if language == "zh" else [f"Remember that {said}?"]


def _yesterday_as_today(answer: Any, v: Mapping[str, Any], language: str) -> list[tuple[str, dict[str, str]]]:
    """The day before the session (the session's "yesterday") moved onto the session's own day."""
    import datetime as dt

    try:
        day = dt.date.fromisoformat(str(v.get("date", "")))
    except ValueError:
        return []
    before, same = (day - dt.timedelta(days=1)).isoformat(), day.isoformat()
    if language == "zh":  # a key with CJK makes replace_words replace substrings: 于2024-03-01 has no word break
        return [("yesterday_as_session_day", {f"{w}{before}": f"{w}{same}" for w in ("于", "在", "是")})]
    return [("yesterday_as_session_day", {before: same})]


def _speaker_named(v: Mapping[str, Any], language: str) -> list[str]:
    """The query said the wrong way round: it calls its own speaker by name."""
    human = str(v.get("human", "")).strip()
    if not human:
        return []
    return [f"对吧，{human}？"] if language == "zh" else [f"Right, {human}?"]


def _quoted_memory(v: Mapping[str, Any], language: str) -> list[str]:
    memories = [m["fact"] for m in v.get("memories", [])]
    return [f"({memories[0]})" if language == "en" else f"（{memories[0]}）"] if memories else []


def _unsaid(v: Mapping[str, Any], language: str) -> list[str]:
    """A place and a number the sessions never mention, and a number in words."""
    return (["他在青岛长大，已经跑过14次马拉松。", "家里养着三只鹦鹉。"] if language == "zh"
            else ["They grew up in Valparaiso and have run 14 marathons.", "They keep three parrots."])


# Judge work (rules no check can see): what the judges and the audits are measured on.
_OFF_POOL = {"en": ("What's a good recipe for dinner tonight?", "Do you think it will rain this weekend?"),
             "zh": ("今晚做什么菜比较好？", "你觉得这个周末会下雨吗？")}


def _irrelevant(answer: Any, v: Mapping[str, Any], language: str) -> list[str]:
    """The pool memory least related to the query and to the reply as written, brought up anyway."""
    fact = least_related([str(m["fact"]) for m in v.get("memories", [])],
                         f"{v.get('query', '')} {answer.get('response', '')}")
    if not fact:
        return []
    return [f"说起来，{fact}"] if language == "zh" else [f"That reminds me: {fact}"]


def _more_questions(answer: Any, v: Mapping[str, Any], language: str) -> list[str]:
    """Two more short questions tacked on: a list of questions, not one."""
    return ["还好吗？最近忙不忙？"] if language == "zh" else ["All good? Busy lately?"]


def _their_domain(answer: Any, v: Mapping[str, Any]) -> list[str]:
    """The domains with the other speaker's topic added: of the notes said only of them, the one the
    character's own lines touch least (none, when they touch every one), their name left out."""
    human, character = str(v.get("human", "")), str(v.get("virtual_person", ""))
    sessions = list(v.get("sessions", ()))
    own = meaning_units(" ".join(str(line) for s in sessions for line in s.get("lines", ())))
    topics = [re.split(r"[，。,.;；]", str(n).replace(human, "").strip(" 的's"))[0].strip()
              for s in sessions for n in s.get("notes", ()) if human and human in n and character not in n]
    topics = [t for t in topics if meaning_units(t)]
    if not topics:
        return list(answer.get("domains", []))
    topic = min(topics, key=lambda t: len(meaning_units(t) & own) / len(meaning_units(t)))
    if 3 * len(meaning_units(topic) & own) >= len(meaning_units(topic)):  # the character talks about it too
        return list(answer.get("domains", []))
    return [*answer.get("domains", []), topic]


AIMS = (
    Aim("fact-form", FACTS, Longer("memories[*].fact", lambda v: FACT_CHARS_ZH[1] if _zh(v) else FACT_WORDS[1],
                                   places=2)),
    Aim("fact-form", FACTS, Sentences("memories[*].fact", high=1, places=2)),
    Aim("fact-form", FACTS, Replace("memories[*].fact", _DATE, _RELATIVE, "relative_date", places=2)),
    Aim("fact-form", FACTS, DayInWords("memories[*].fact", places=2)),
    Aim("fact-form", ("extract",), Voice("memories[*].fact", _yesterday_as_today)),
    Aim("fact-names-person", FACTS, Voice("memories[*].fact", _pronouns, places=2)),
    Aim("fact-speakers", ("extract",), Replace("memories[*].about", {"en": r"^.+$", "zh": r"^.+$"}, _OTHER,
                                               "unknown_speaker")),
    Aim("fact-speakers", ("extract",), Set(_about_first_speaker, lambda v: v["speakers"][1], "about_the_other")),
    Aim("merge-keeps-all", ("merge",), DropOne("memories")),
    Aim("merge-keeps-all", ("merge",), Duplicate("memories", keys=("fact",))),
    Aim("query-form", ("query",), Longer("query", lambda v: QUERY_CHARS_ZH[1] if _zh(v) else QUERY_WORDS[1])),
    Aim("query-form", ("query",), Append("query", _more_questions, "more_questions")),
    Aim("persona-form", ("persona",), Longer("traits[*]", lambda v: TRAIT_LIMIT["zh" if _zh(v) else "en"])),
    Aim("persona-from-sessions", ("persona",), Set("domains", None, "their_domain", from_answer=_their_domain)),
    Aim("query-no-quote", ("query",), InsertText("query", _quoted_memory, "quote_memory")),
    Aim("query-no-quote", ("query",), InsertText("query", _memory_to_you, "memory_to_you")),
    *(Aim("persona-form", ("persona",), Count(field, low=low, high=high)) for field, (low, high) in PERSONA_ITEMS.items()),
    Aim("persona-form", ("persona",), Sentences("summary", low=3, high=5)),
    Aim("persona-form", ("persona",), Voice("summary", _self_introduced)),
    Aim("label-rationale", ("label",), Sentences("labels[*].rationale", high=1, places=2)),
    Aim("miq-analysis", ("eval_miq",), Sentences("analysis", high=2)),
    Aim("persona-from-sessions", ("persona",), InsertText("summary", _unsaid, "unsaid_place_number")),
    Aim("roles", ("label",), DropOne("labels")),
    Aim("eval-detect", ("eval_detect",), DropOne("verdicts")),
    Aim("eval-detect", ("eval_detect",), Reword(lambda a, v: [("verdicts", i, "evidence") for i, x in
                                                              enumerate(a.get("verdicts", [])) if x.get("used")])),
    Aim("eval-miq", ("eval_miq",), Set("score", 6, "off_scale")),
    Aim("query-given-type", ("query",), Rewrite("query", lambda v, lang: _OFF_POOL[lang], "off_pool_query")),
    Aim("irrelevant-suppressed", ("eval_respond",), Append("response", _irrelevant, "irrelevant_memory")),
    Aim("query-to-character", ("query",), Voice("query", _third_person)),
    Aim("query-to-character", ("query",), InsertText("query", _speaker_named, "speaker_named")),
    Aim("miq-consistent", ("eval_miq",), Set("failures", ["topic_drift"], "flag_against_score",
                                             lambda a, v: not a.get("failures") and a.get("score", 0) > 2)),
    Aim("miq-consistent", ("eval_miq",), Set("score", 5, "score_against_flags", lambda a, v: bool(a.get("failures")))),
    Aim("miq-consistent", ("eval_miq",), Set("failures", [], "score_against_flags",
                                             lambda a, v: bool(a.get("failures")) and a.get("score", 5) <= 2)),
    Aim(SCHEMA_RULE, tuple(s.name for s in (*STAGES, *EVAL_STAGES)), Fields()),
)
