"""How memsynth's simulator answers pal's stages, from each stage's variables."""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Mapping
from typing import Any

from memsynth.core.textmatch import near_duplicates
from memsynth.simulator.answers import AnswerBook
from memsynth.simulator.text import TextMaker

ANSWERS = AnswerBook("pal")
MINUTE = "%Y-%m-%d %H:%M"
_LEVELS = ("low", "medium", "high")
_BIG_FIVE = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
_LOG_KINDS = ("web_search", "content_publishing", "content_browsing", "message_sending",
              "message_receiving", "schedule_management", "transaction_record", "device_operation")

Answer = dict[str, Any]
Variables = Mapping[str, Any]


@ANSWERS.stage("profile")
def profile(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    offset = text.rng.randint(0, 2)
    draft["profiles"] = [{
        "name": text.person_name(),
        "gender": text.rng.choice(["女", "男"] if text.language == "zh" else ["female", "male"]),
        "age": text.rng.randint(25, 60),
        **{field: text.paragraph(text.rng.randint(2, 3))
           for field in ("occupation", "health_status", "family_members", "hobbies")},
        # Cycling the levels makes every batch of three or more varied.
        "personality": {t: _LEVELS[(i + j + offset) % 3] for j, t in enumerate(_BIG_FIVE)},
    } for i in range(v["batch_size"])]
    return draft


@ANSWERS.stage("timeline")
def timeline(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    # A month tells of two parts of life or more (prose_checks.months_span_aspects): a family weekend.
    weekend = "周末用户和家人去公园散步。" if text.language == "zh" else "At the weekend the user went for a walk with the family."
    joiner = "" if text.language == "zh" else " "
    draft["months"] = [{"month": m, "summary": joiner.join((text.paragraph(text.rng.randint(4, 5)), weekend))}
                       for m in v["months"]]
    return draft


@ANSWERS.stage("requirement_types")
def requirement_types(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    phrases = [_short(p.rstrip(".。"), text.language) for p in text.distinct_sentences(4 * 5)]
    for a, aspect in enumerate(("work", "health", "family", "leisure")):
        n = text.rng.randint(4, 5)
        draft[aspect] = phrases[a * 5: a * 5 + n]
    return draft


def _short(sentence: str, language: str) -> str:
    """A sentence cut to a short phrase (short_requirement_types): 8 words, or 16 characters."""
    return sentence[:16] if language == "zh" else " ".join(sentence.split()[:8])


@ANSWERS.stage("preferences")
def preferences(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["items"] = [{"requirement_id": r["requirement_id"], "analysis": text.paragraph(2),
                       "pos": text.paragraph(text.rng.randint(4, 5)),
                       "neg": text.paragraph(text.rng.randint(4, 5))} for r in v["requirements"]]
    return draft


@ANSWERS.stage("situations")
def situations(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    year, m = map(int, v["month"].split("-"))
    days = calendar.monthrange(year, m)[1]
    start = (dt.date.fromisoformat(v["previous_end"]) + dt.timedelta(days=1) if v.get("previous_end")
             else dt.date(year, m, 1))
    last_end = dt.date(year, m, text.rng.randint(days - 2, days))
    count = text.rng.randint(v["min_situations"], v["max_situations"])
    total = (last_end - start).days + 1
    # Spans of at least two days; the first ends inside the month even if it starts before.
    first_min = max(2, (dt.date(year, m, 1) - start).days + 1)
    lengths = [first_min] + [2] * (count - 1)
    for _ in range(total - sum(lengths)):
        lengths[text.rng.randrange(count)] += 1
    ids = [r["requirement_id"] for r in v["requirement_types"]]
    out, day = [], start
    for length in lengths:
        end = day + dt.timedelta(days=length - 1)
        out.append({"time_span": f"{day.isoformat()} ~ {end.isoformat()}",
                    "requirement_ids": text.rng.sample(ids, min(len(ids), text.rng.randint(2, 3))),
                    "situation": text.paragraph(text.rng.randint(5, 6))})
        day = end + dt.timedelta(days=1)
    draft["situations"] = out
    return draft


@ANSWERS.stage("experience")
def experience(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["experience"] = text.paragraph(text.rng.randint(5, 7))
    return draft


@ANSWERS.stage("requirements")
def requirements(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["topics"] = []
    for topic in v["topics"]:
        needs = text.distinct_sentences(2)
        draft["topics"].append({
            "requirement_id": topic["requirement_id"], "user_query": text.sentence(),
            "implicit_needs": [{"need": n, "evidences": [text.sentence() for _ in range(text.rng.randint(1, 3))]}
                               for n in needs],
            "requirement": text.paragraph(2)})
    return draft


@ANSWERS.stage("candidates")
def candidates(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["topics"] = [{"requirement_id": t["requirement_id"], "solutions": _unlike_sentences(text, 8)}
                       for t in v["topics"]]
    return draft


def _unlike_sentences(text: TextMaker, count: int) -> list[str]:
    """`count` sentences no two of which are near duplicates (the check holds candidates to it);
    numbered when the filler runs short of unlike ones."""
    chosen: list[str] = []
    for _ in range(40 * count):
        candidate = text.sentence()
        if len(chosen) == count:
            break
        if not near_duplicates([*chosen, candidate]):
            chosen.append(candidate)
    while len(chosen) < count:
        chosen.append(f"{len(chosen) + 1}: {text.person_name()} {text.phrase()}")
    return chosen


@ANSWERS.stage("solution_preferences")
def solution_preferences(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    listed = list(v["candidates"])
    picks = text.rng.sample(listed, 4) if len(listed) >= 4 else (listed * 4)[:4]
    rated = [{"solution": p, "reason": text.sentence()} for p in picks]
    draft.update(analysis=text.paragraph(2), liked=rated[:2], disliked=rated[2:])
    return draft


# --- the judges: the simulator's answers already keep the rules they review.

@ANSWERS.stage("preferences_review")
def preferences_review(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["items"] = [{"requirement_id": i["requirement_id"], "personal": True, "reason": text.sentence()}
                      for i in v["answer"]["items"]]
    return draft


@ANSWERS.stage("requirements_review")
def requirements_review(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["topics"] = [{"requirement_id": t["requirement_id"], "needs_on_topic": True, "reason": text.sentence()}
                       for t in v["answer"]["topics"]]
    return draft


@ANSWERS.stage("solution_preferences_review")
def solution_preferences_review(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update(liked_fit=True, disliked_clash=True, reason=text.sentence())
    return draft


def log_content(kind: str, text: TextMaker) -> str:
    """A log of `kind` written in its Table 6 format."""
    r, zh = text.rng, text.language == "zh"
    who, thing = text.person_name(), text.phrase()
    if zh:
        return {
            "web_search": f"用户搜索了“{thing}”，并查看了相关内容概述。",
            "content_publishing": f"用户在微信朋友圈发布了帖子，主要内容为：{text.sentence()}",
            "content_browsing": f"用户在知乎浏览了文章，主要内容为：{text.sentence()}",
            "message_sending": f"用户向{who}发送消息：“{text.sentence()}”",
            "message_receiving": f"用户接收到来自{who}的消息：“{text.sentence()}”",
            "schedule_management": f"用户在手机日历创建了“{thing}”日程，时间：{r.randint(8, 11)}:00-{r.randint(12, 18)}:00，地点：星河大厦{r.randint(2, 30)}层。",
            "transaction_record": f"用户通过淘宝完成了商品购买，产品：{thing}（{r.randint(1, 5)}件）。",
            "device_operation": f"用户在智能手环进行了记录操作：步数{r.randint(3000, 15000)}步。",
        }[kind]
    return {
        "web_search": f"The user searched for {thing} and viewed a short guide on it.",
        "content_publishing": f"The user published a post on Instagram, with the main content summarized as: {text.sentence()}",
        "content_browsing": f"The user browsed an article on Medium, with the main content summarized as: {text.sentence()}",
        "message_sending": f"The user sent a message to {who}: '{text.sentence()}'",
        "message_receiving": f"The user received a message from {who}: '{text.sentence()}'",
        "schedule_management": f"The user created a schedule named '{thing}' in Google Calendar, time: {r.randint(8, 11)}:00 - {r.randint(12, 18)}:00, location: Harbour Tower, floor {r.randint(2, 30)}.",
        "transaction_record": f"The user completed a purchase of a product via Amazon, product: {thing} (pack of {r.randint(1, 5)}).",
        "device_operation": f"The user performed a tracking operation on a smart band: {r.randint(3000, 15000)} steps recorded.",
    }[kind]


@ANSWERS.stage("logs")
def logs(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    start = dt.datetime.strptime(v["span_start"], MINUTE)
    end = dt.datetime.strptime(v["span_end"], MINUTE)
    minutes = int((end - start).total_seconds() // 60)
    count = min(v["min_logs"] + text.rng.randint(0, 4), minutes - 1)
    stamps = sorted(text.rng.sample(range(1, minutes), count))
    draft["logs"] = [{"timestamp": (start + dt.timedelta(minutes=m)).strftime(MINUTE),
                      "event": text.sentence(), "type": (kind := text.rng.choice(_LOG_KINDS)),
                      "content": log_content(kind, text)} for m in stamps]
    return draft


@ANSWERS.stage("dialogue")
def dialogue(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["turns"] = [{"user": {"action": s["user_action"], "reference": s["user_reference"],
                                "content": text.sentence()},
                       "assistant": {"action": s["assistant_action"], "reference": s["assistant_reference"],
                                     "content": text.paragraph(2)}} for s in v["skeleton"]]
    return draft


# --- evaluation stages: answers built from the task's own inputs, so the scores move
# (a restatement echoes the most relevant record, a pick lands on a liked candidate half the time).

def _as_one_sentence(text: str, language: str) -> str:
    """The words of `text` as one sentence: the stages ask for one."""
    joiner, end = ("，", "。") if language == "zh" else (", ", ".")
    # A record can be a dialogue of several lines: a line break ends a sentence too.
    body = re.sub(r"\s*(?:[.!?。！？…]+|\n)\s*", joiner, text.strip()).strip(" ，,")
    return body + end


def _record_words(record: str) -> str:
    """A memory record's own words: without its "2024-10-25 20:00:00 dialogue" header and its
    "user:" / "assistant:" labels (a restatement says what was said, not how it was stored)."""
    lines = record.splitlines()
    if lines and re.match(r"\d{4}-\d{2}-\d{2}", lines[0]):
        lines = lines[1:]
    return "\n".join(re.sub(r"^\s*(user|assistant)\s*[:：]\s*", "", line) for line in lines)


@ANSWERS.stage("eval_restate")
def eval_restate(draft: dict[str, Any], v: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    draft["requirement"] = _as_one_sentence(
        (_record_words(v["memory"][0]) if v["memory"] else text.sentence()) + " " + v["user_query"], text.language)
    return draft


@ANSWERS.stage("eval_judge_restatement")
def eval_judge_restatement(draft: dict[str, Any], v: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    draft.update(analysis=text.sentence(), score=text.rng.choice([0, 0.5, 1, 1, 1.5, 2]))
    return draft


@ANSWERS.stage("eval_propose")
def eval_propose(draft: dict[str, Any], v: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    draft["solution"] = (_as_one_sentence(v["requirement"], text.language) if text.rng.random() < 0.5
                         else text.sentence())
    return draft


@ANSWERS.stage("eval_select")
def eval_select(draft: dict[str, Any], v: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    draft.update(analysis=text.sentence(), selected_solutions=text.rng.sample([c["id"] for c in v["candidates"]], 2))
    return draft
