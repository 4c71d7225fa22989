"""stratmem's mutants: each rule of rules.py with a check or a judge, broken on purpose in good answers
(memsynth.quality.mutants; `python -m memsynth.quality.mutants` prints the table)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.stratmem.checks import FACT_CHARS_ZH, FACT_WORDS, PERSONA_ITEMS, QUERY_CHARS_ZH, QUERY_WORDS
from flows.stratmem.evaluation import STAGES as EVAL_STAGES
from flows.stratmem.form_checks import TRAIT_LIMIT
from flows.stratmem.pool_checks import _aimed, same_fact_pairs
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
from schemas.stratmem import UserQuery

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
# Questions no memory of a pool needs, in words no pool memory uses (a query that shares a word
# with a non-target reads to query.aims_at_its_targets as aimed at it).
_OFF_POOL = {"en": ("What's a good recipe for dinner tonight?", "Which phone plan gives the most data for the price?"),
             "zh": ("今晚做什么菜比较好？", "哪家的手机套餐流量最划算？")}


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


def _split_same_fact(answer: Any, v: Mapping[str, Any]) -> list[Any] | None:
    """The first item that joins two candidates of one fact split in two: the second candidate as
    written, in an item of its own."""
    pairs = same_fact_pairs(list(v.get("candidates", [])), [str(s) for s in v.get("speakers", [])])
    facts = {int(c["number"]): str(c["fact"]) for c in v.get("candidates", [])}
    items = [dict(m) for m in answer.get("memories") or [] if isinstance(m, dict)]
    for i, m in enumerate(items):
        for a, b in pairs:
            if a in m.get("sources", []) and b in m.get("sources", []):
                rest = [n for n in m["sources"] if n != b]
                return [*items[:i], {**m, "sources": rest}, {"fact": facts[b], "sources": [b]}, *items[i + 1:]]
    return None


def _joined(first: str, second: str, zh: bool) -> str:
    return f"{first.rstrip('。.')}，{second}" if zh else f"{first.rstrip('.')}, and {second}"


def _two_facts_in_one(answer: Any, v: Mapping[str, Any]) -> list[Any] | None:
    """judge work (fact-one-fact, merge-faithful): the two shortest items about one person (of
    different candidates) written as one sentence that still fits the word limit."""
    zh = _zh(v)
    low, high = FACT_CHARS_ZH if zh else FACT_WORDS
    from flows.stratmem.checks import size

    items = [dict(m) for m in answer.get("memories") or [] if isinstance(m, dict)]
    order = sorted(range(len(items)), key=lambda k: size(str(items[k].get("fact", ""))))
    for x in order:
        for y in order:
            a, b = items[x], items[y]
            if x == y or a.get("about") != b.get("about"):
                continue
            fact = _joined(str(a["fact"]), str(b["fact"]), zh)
            if size(fact) <= high:
                joined = {**a, "fact": fact}
                if "sources" in a:
                    joined["sources"] = [*a["sources"], *b["sources"]]
                return [joined if k == x else m for k, m in enumerate(items) if k != y]
    return None


_INVENTED = {"en": ", for the first time", "zh": "，这是第一次"}


def _invented_detail(answer: Any, v: Mapping[str, Any]) -> list[Any] | None:
    """judge work (merge-faithful): the shortest item given a circumstance no candidate states."""
    from flows.stratmem.checks import size

    zh = _zh(v)
    items = [dict(m) for m in answer.get("memories") or [] if isinstance(m, dict)]
    if not items:
        return None
    k = min(range(len(items)), key=lambda i: size(str(items[i].get("fact", ""))))
    fact = str(items[k]["fact"])
    tail = _INVENTED["zh" if zh else "en"]
    items[k] = {**items[k], "fact": f"{fact.rstrip('。.')}{tail}{'。' if zh else '.'}"}
    return items


def _off_target(answer: Any, v: Mapping[str, Any]) -> list[int] | None:
    """The query's targets moved one number along (a neighbour it says nothing of), where it holds
    its targets' own words: targets no longer name what it is about."""
    numbers = [int(m["number"]) for m in v.get("memories", [])]
    on_target = _aimed(UserQuery(**answer), v)[0] if answer.get("query") else 0
    if not on_target:
        return None
    for step in (1, -1, 2, -2):
        moved = [t + step for t in answer.get("targets", [])]
        if all(t in numbers for t in moved) and _aimed(UserQuery(query=answer["query"], targets=moved), v)[0] == 0:
            return moved
    return None


_QUESTION_AT_END = re.compile(r"[^。！？.!?]*[?？][^。！？.!?]*$")


def _ignores_last_turn(answer: Any, v: Mapping[str, Any]) -> str | None:
    """judge work (query-natural): the answer to what the character just asked cut, its own
    question left alone."""
    query = str(answer.get("query", ""))
    m = _QUESTION_AT_END.search(query)
    return m.group(0).strip() if m and m.start() > 0 and m.group(0).strip() else None


def _missed_use(answer: Any, v: Mapping[str, Any]) -> list[Any] | None:
    """judge work (eval-detect-complete): a memory the reply uses marked unused, its evidence dropped."""
    verdicts = [dict(x) for x in answer.get("verdicts") or [] if isinstance(x, dict)]
    for x in verdicts:
        if x.get("used"):
            x.update(used=False, evidence="")
            return verdicts
    return None


def _their_experience(answer: Any, v: Mapping[str, Any]) -> str | None:
    """judge work (persona-true): a note of the other speaker's life told as the character's, in
    place of the summary's last sentence."""
    human, character = str(v.get("human", "")), str(v.get("virtual_person", ""))
    notes = [str(n) for s in v.get("sessions", ()) for n in s.get("notes", ()) if human and human in str(n)
             and character not in str(n)]
    summary = str(answer.get("summary", ""))
    if not notes or not summary:
        return None
    zh = _zh(v)
    told = notes[0].replace(human, character).rstrip("。.")
    parts = re.split(r"(?<=[。！？.!?])\s*", summary.strip())
    parts = [p for p in parts if p]
    return ("".join(parts[:-1]) + told + "。") if zh else (" ".join(parts[:-1]) + f" {told}.")


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
    Aim("merge-keeps-all", ("merge",), Set("memories", None, "same_fact_apart", from_answer=_split_same_fact)),
    Aim("merge-keeps-all", ("merge",), Replace("memories[*].fact", {"en": r"\b\d{4}-\d{2}-\d{2}\b",
                                                                    "zh": r"\d{4}-\d{2}-\d{2}"},
                                               {"en": ("2021-02-17",), "zh": ("2021-02-17",)}, "invented_day",
                                               places=2)),
    Aim("merge-faithful", ("merge",), Set("memories", None, "different_facts_joined", from_answer=_two_facts_in_one)),
    Aim("merge-faithful", ("merge",), Set("memories", None, "invented_detail", from_answer=_invented_detail)),
    Aim("fact-one-fact", ("extract",), Set("memories", None, "two_facts_in_one", from_answer=_two_facts_in_one)),
    Aim("query-form", ("query",), Set("targets", None, "off_target", from_answer=_off_target)),
    Aim("query-natural", ("query",), Set("query", None, "ignores_last_turn", from_answer=_ignores_last_turn)),
    Aim("eval-detect-complete", ("eval_detect",), Set("verdicts", None, "missed_use", from_answer=_missed_use)),
    Aim("persona-true", ("persona",), Set("summary", None, "their_experience", from_answer=_their_experience)),
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
