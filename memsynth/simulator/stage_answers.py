"""Stage-aware answers: rules a JSON Schema cannot carry, read from the prompt like a model would.

Each function takes the schema-valid draft, the prompt text and the text maker, and
returns an answer that also passes the stage's checks. Keyed by the request's schema
name (`<recipe>_<stage>`); stages without an entry get the schema-driven draft as is.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from memsynth.simulator.text import TextMaker

StageAnswer = Callable[[dict[str, Any], str, TextMaker], dict[str, Any]]
STAGE_ANSWERS: dict[str, StageAnswer] = {}


def answers(schema_name: str) -> Callable[[StageAnswer], StageAnswer]:
    def register(fn: StageAnswer) -> StageAnswer:
        STAGE_ANSWERS[schema_name] = fn
        return fn
    return register


def prompt_date(prompt: str, label: str, default: dt.date) -> dt.date:
    """The YYYY-MM-DD after `label:` in the prompt, else `default`."""
    match = re.search(re.escape(label) + r"\s*:\s*(\d{4}-\d{2}-\d{2})", prompt)
    return dt.date.fromisoformat(match.group(1)) if match else default


def prompt_int(prompt: str, pattern: str, default: int) -> int:
    match = re.search(pattern, prompt)
    return int(match.group(1)) if match else default


@answers("enpmr_profile")
def _profile(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft["name"] = text.person_name()
    draft["preferences"] = text.distinct_sentences(text.rng.randint(10, 13))
    return draft


@answers("enpmr_life_themes")
def _life_themes(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    reference = prompt_date(prompt, "Reference date", dt.date(2024, 12, 2))
    earliest = prompt_date(prompt, "Earliest allowed date", reference - dt.timedelta(days=5 * 365))
    wanted = prompt_int(prompt, r"at least (\d+) life themes", 10)
    count = wanted + text.rng.randint(0, 2)
    draft["themes"] = [
        {"theme": title, "description": text.paragraph(2),
         "start_date": text.date_between(earliest, reference).isoformat()}
        for title in text.theme_titles(count)
    ]
    return draft


def prompt_text(prompt: str, label: str, default: str = "") -> str:
    """The rest of the line after `label:` in the prompt."""
    match = re.search(r"^\s*-?\s*" + re.escape(label) + r"\s*:\s*(.+)$", prompt, re.MULTILINE)
    return match.group(1).strip() if match else default


def _dated_items(draft: dict[str, Any], prompt: str, text: TextMaker, count: int,
                 start_label: str = "Theme start date") -> list[dict[str, Any]]:
    """`count` items shaped like the draft's first one, with sorted dates in the allowed span."""
    reference = prompt_date(prompt, "Reference date", dt.date(2024, 12, 2))
    start = prompt_date(prompt, start_label, reference - dt.timedelta(days=365))
    dates = sorted(text.date_between(start, reference) for _ in range(count))
    template = draft["items"][0]
    names = text.distinct_sentences(count)
    items = []
    for name, date in zip(names, dates):
        item = {k: (text.paragraph(1) if isinstance(v, str) else v) for k, v in template.items()}
        item.update(name=name.rstrip(".。"), date=date.isoformat())
        items.append(item)
    return items


@answers("enpmr_persona")
def _persona(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    job = prompt_text(prompt, "occupation", "office worker")
    age = prompt_text(prompt, "age band", "30-39")
    region = prompt_text(prompt, "region", "a mid-sized city")
    stage = prompt_text(prompt, "life stage", "settling into a routine")
    interests = prompt_text(prompt, "interests", "reading")
    name = text.person_name()
    if text.language == "zh":
        draft["description"] = (f"{name}是一位来自{region}的{job}，年龄在{age}岁之间，目前{stage}。"
                                f"平时喜欢{interests}。{text.paragraph(2)}")
    else:
        draft["description"] = (f"{name} is a {job} aged {age} living in {region}, currently {stage}. "
                                f"Outside work they love {interests}. {text.paragraph(2)}")
    return draft


@answers("enpmr_relationship")
def _relationship(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"at least (\d+) people", 4) + text.rng.randint(0, 1)
    items = _dated_items(draft, prompt, text, count)
    for i, item in enumerate(items):
        item["name"] = text.person_name() + ("" if i < 20 else f" {i}")
        item["relationship_quality"] = "good" if i % 2 == 0 else "bad"
    _unique_names(items)
    draft["items"] = items
    return draft


@answers("enpmr_power")
def _power(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"at least (\d+) concrete sub-skills", 6) + text.rng.randint(0, 1)
    items = _dated_items(draft, prompt, text, count)
    # Interleave: every third skill is the weak one, which gives >= 4 proficient of 6.
    for i, item in enumerate(items):
        item["performance"] = "not proficient" if i % 3 == 1 else "proficient"
    draft["items"] = items
    return draft


@answers("enpmr_goal")
def _goal(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"at least (\d+) goals", 3) + text.rng.randint(0, 1)
    items = _dated_items(draft, prompt, text, count)
    for i, item in enumerate(items):
        item["status"] = "not achieved" if i == len(items) - 1 else "achieved"
    draft["items"] = items
    return draft


@answers("enpmr_highlight")
def _highlight(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"at least (\d+) highlights", 2) + text.rng.randint(0, 1)
    items = _dated_items(draft, prompt, text, count)
    for item in items:
        item["recognized_by"] = text.person_name()
    draft["items"] = items
    return draft


@answers("enpmr_preferences")
def _preferences(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"at least (\d+) preference memories", 10) + text.rng.randint(0, 2)
    draft["items"] = _dated_items(draft, prompt, text, count, start_label="Earliest allowed date")
    return draft


def _unique_names(items: list[dict[str, Any]]) -> None:
    seen: set[str] = set()
    for i, item in enumerate(items):
        while item["name"].lower() in seen:
            item["name"] = f"{item['name']} {i}"
        seen.add(item["name"].lower())


def _alternating(text: TextMaker, count: int) -> list[dict[str, str]]:
    return [{"role": "user" if i % 2 == 0 else "ai", "content": text.paragraph(1)}
            for i in range(count)]


@answers("enpmr_memory_session")
def _memory_session(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    name = prompt_text(prompt, "Memory name", "that day")
    low = prompt_int(prompt, r"between (\d+) and \d+ turns", 10)
    high = prompt_int(prompt, r"between \d+ and (\d+) turns", 20)
    turns = _alternating(text, text.rng.randint(low, high))
    reveal = 2 * text.rng.randint(0, (len(turns) - 1) // 2)  # a user turn
    opener = "你知道吗，关于" if text.language == "zh" else "You know, about"
    turns[reveal]["content"] = f"{opener} {name} — {turns[reveal]['content']}"
    draft["turns"] = turns
    return draft


@answers("enpmr_support_dialogue")
def _support_dialogue(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    name = prompt_text(prompt, "Target memory name", "that memory")
    low = prompt_int(prompt, r"(\d+) to \d+ turns", 2)
    high = prompt_int(prompt, r"\d+ to (\d+) turns", 6)
    count = text.rng.choice([n for n in range(low, high + 1) if n % 2 == 0] or [low])
    turns = _alternating(text, count)
    for turn in turns:  # the user must never say the memory's name
        turn["content"] = turn["content"].replace(name, "")
    memory_turn = 2 * text.rng.randint(1, count // 2)  # an AI turn (1-based, even)
    recall = "还记得" if text.language == "zh" else "Remember"
    turns[memory_turn - 1]["content"] = f"{recall} {name}? {turns[memory_turn - 1]['content']}"
    draft.update(scene=text.paragraph(2), turns=turns, memory_turn=memory_turn)
    return draft


@answers("enpmr_scenario_consistency")
def _scenario(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft.update(score=text.rng.choice([4, 5]), reason=text.sentence())
    return draft


@answers("enpmr_faithfulness")
def _faithfulness(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft.update(grounded_in_target=True, uses_negatives=False, score=text.rng.choice([4, 5]),
                 reason=text.sentence())
    return draft


_NEGATIVE_CUES = (" not ", "n't", "misses", "get in the way", "automatic")


@answers("enpmr_blri")
def _blri(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    low = prompt_int(prompt, r"Scale: (\d+) to \d+", 1)
    high = prompt_int(prompt, r"Scale: \d+ to (\d+)", 5)
    statements = re.findall(r"^\d+\. (.+)$", prompt.split("Statements:", 1)[-1], re.MULTILINE)
    count = prompt_int(prompt, r"exactly (\d+) integers", 12)
    scores = []
    for i in range(count):
        statement = f" {statements[i].lower()} " if i < len(statements) else ""
        negative = any(cue in statement for cue in _NEGATIVE_CUES)
        scores.append(text.rng.randint(low, low + 1) if negative else text.rng.randint(high - 1, high))
    draft["scores"] = scores
    return draft


# --- pal -------------------------------------------------------------------------

_LEVELS = ("low", "medium", "high")
_BIG_FIVE = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")


@answers("pal_profile")
def _pal_profile(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    count = prompt_int(prompt, r"for each of the (\d+) persona sketches", 1)
    offset = text.rng.randint(0, 2)
    profiles = []
    for i in range(count):
        profiles.append({
            "name": text.person_name(),
            "gender": text.rng.choice(["女", "男"] if text.language == "zh" else ["female", "male"]),
            "age": text.rng.randint(25, 60),
            **{field: text.paragraph(text.rng.randint(2, 3))
               for field in ("occupation", "health_status", "family_members", "hobbies")},
            # Cycling the levels makes every batch of three or more varied.
            "personality": {t: _LEVELS[(i + j + offset) % 3] for j, t in enumerate(_BIG_FIVE)},
        })
    draft["profiles"] = profiles
    return draft


@answers("pal_timeline")
def _pal_timeline(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    months = [m.strip() for m in prompt_text(prompt, "Months").split(",") if m.strip()]
    draft["months"] = [{"month": m, "summary": text.paragraph(text.rng.randint(5, 6))} for m in months]
    return draft


@answers("pal_requirement_types")
def _pal_requirement_types(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    phrases = text.distinct_sentences(4 * 5)
    for a, aspect in enumerate(("work", "health", "family", "leisure")):
        n = text.rng.randint(4, 5)
        draft[aspect] = [p.rstrip(".。") for p in phrases[a * 5: a * 5 + n]]
    return draft


@answers("pal_preferences")
def _pal_preferences(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    ids = re.findall(r"^- ((?:work|health|family|leisure)-\d+):", prompt, re.MULTILINE)
    draft["items"] = [{"requirement_id": rid, "pos": text.paragraph(text.rng.randint(4, 5)),
                       "neg": text.paragraph(text.rng.randint(4, 5))} for rid in dict.fromkeys(ids)]
    return draft


@answers("pal_situations")
def _pal_situations(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    import calendar

    month = prompt_text(prompt, "Month", "2024-01")
    year, m = map(int, month.split("-"))
    days = calendar.monthrange(year, m)[1]
    previous = re.search(r"Previous situation ended: (\d{4}-\d{2}-\d{2})", prompt)
    start = (dt.date.fromisoformat(previous.group(1)) + dt.timedelta(days=1) if previous
             else dt.date(year, m, 1))
    last_end = dt.date(year, m, text.rng.randint(days - 2, days))
    low = prompt_int(prompt, r"into (\d+) to \d+ situations", 4)
    high = prompt_int(prompt, r"into \d+ to (\d+) situations", 6)
    count = text.rng.randint(low, high)
    span_days = (last_end - start).days + 1
    # Every span ends inside the month, even when the first starts in the month before.
    first_cut = max(1, (dt.date(year, m, 1) - start).days + 1)
    cuts = sorted(text.rng.sample(range(first_cut, span_days), count - 1))
    bounds = [0, *cuts, span_days]
    ids = [i.strip() for i in prompt_text(prompt, "Valid requirement ids").split(",") if i.strip()]
    situations = []
    for a, b in zip(bounds, bounds[1:]):
        s_start, s_end = start + dt.timedelta(days=a), start + dt.timedelta(days=b - 1)
        situations.append({"time_span": f"{s_start.isoformat()} ~ {s_end.isoformat()}",
                           "requirement_ids": text.rng.sample(ids, min(len(ids), text.rng.randint(2, 3))),
                           "situation": text.paragraph(text.rng.randint(5, 6))})
    draft["situations"] = situations
    return draft


@answers("pal_experience")
def _pal_experience(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft["experience"] = text.paragraph(text.rng.randint(5, 7))
    return draft


@answers("pal_requirements")
def _pal_requirements(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    needs = text.distinct_sentences(2)
    draft.update(user_query=text.sentence(), requirement=text.paragraph(2), implicit_needs=[
        {"need": n, "evidences": [text.sentence() for _ in range(text.rng.randint(1, 3))]}
        for n in needs])
    return draft


@answers("pal_candidates")
def _pal_candidates(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft["solutions"] = text.distinct_sentences(8)
    return draft


@answers("pal_solution_preferences")
def _pal_solution_preferences(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    listed = re.findall(r"^\d+\. (.+)$", prompt.split("Candidates:", 1)[-1], re.MULTILINE)
    picks = text.rng.sample(listed, 4) if len(listed) >= 4 else (listed * 4)[:4]
    rated = [{"solution": p, "reason": text.sentence()} for p in picks]
    draft.update(liked=rated[:2], disliked=rated[2:])
    return draft


def _log_content(kind: str, text: TextMaker) -> str:
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


_LOG_KINDS = ("web_search", "content_publishing", "content_browsing", "message_sending",
              "message_receiving", "schedule_management", "transaction_record", "device_operation")


@answers("pal_logs")
def _pal_logs(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    span = re.search(r"Span: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) ~ (\d{4}-\d{2}-\d{2} \d{2}:\d{2})", prompt)
    fmt = "%Y-%m-%d %H:%M"
    start = dt.datetime.strptime(span.group(1), fmt) if span else dt.datetime(2024, 1, 1)
    end = dt.datetime.strptime(span.group(2), fmt) if span else start + dt.timedelta(days=3)
    count = prompt_int(prompt, r"at least (\d+) entries", 20) + text.rng.randint(0, 6)
    minutes = int((end - start).total_seconds() // 60)
    stamps = sorted(text.rng.sample(range(1, minutes), min(count, minutes - 1)))
    draft["logs"] = [{"timestamp": (start + dt.timedelta(minutes=m)).strftime(fmt),
                      "event": text.sentence(), "type": (kind := text.rng.choice(_LOG_KINDS)),
                      "content": _log_content(kind, text)} for m in stamps]
    return draft


@answers("pal_dialogue")
def _pal_dialogue(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    slots = re.findall(r"^turn \d+: user (\w+) \[(\w+)\] -> assistant (\w+) \[(\w+)\]$", prompt,
                       re.MULTILINE)
    draft["turns"] = [{"user": {"action": ua, "reference": ur, "content": text.sentence()},
                       "assistant": {"action": aa, "reference": ar, "content": text.paragraph(2)}}
                      for ua, ur, aa, ar in slots]
    return draft
