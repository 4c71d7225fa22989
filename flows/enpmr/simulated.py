"""How memsynth's simulator answers enpmr's stages, from each stage's variables."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any

from flows.enpmr.checks import target_giveaway
from flows.enpmr.leaks import GIVEAWAY_DETAILS
from flows.enpmr.options import REPLY_LIMIT
from memsynth.core.textmatch import mentions_exactly
from memsynth.quality.textrules.ages import stated_ages
from memsynth.quality.textrules.bigfive import NAMES
from memsynth.simulator.answers import AnswerBook
from memsynth.simulator.text import TextMaker

ANSWERS = AnswerBook("enpmr")
Answer = dict[str, Any]
Variables = Mapping[str, Any]


def _date(v: Variables, key: str, default: dt.date) -> dt.date:
    return dt.date.fromisoformat(str(v[key])) if v.get(key) else default


@ANSWERS.stage("persona")
def persona(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    name = text.person_name()
    interests = ("、" if text.language == "zh" else ", ").join(v["interests"])
    if text.language == "zh":
        # Two sentences in the third person (the prompt's form); the second varies, so personas
        # from the same attributes are not near-duplicates.
        draft["description"] = (f"{name}是一位来自{v['region']}的{v['occupation']}，年龄在{v['age_band']}岁之间，"
                                f"目前{v['life_stage']}。平时喜欢{interests}，最近正忙着{text.phrase()}，"
                                f"{text.rng.choice(('心里有些忐忑', '觉得很有盼头', '常常忙到深夜'))}。")
    else:
        draft["description"] = (f"{name} is a {v['occupation']} aged {v['age_band']} living in {v['region']}, "
                                f"currently {v['life_stage']}. Outside work they love {interests}, and lately they "
                                f"have been busy with {text.phrase()}.")
    return draft


@ANSWERS.stage("profile")
def profile(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["name"] = text.person_name()
    # The age the persona gives (profile.keeps_persona_age), somewhere in its range.
    if ages := stated_ages(str(v.get("persona", ""))):
        draft["age"] = text.rng.randint(*ages[0])
    draft["preferences"] = text.distinct_sentences(text.rng.randint(10, 13))
    # One trait per Big Five dimension, named as the prompt names them (big_five_covered).
    colon = "：" if text.language == "zh" else ": "
    draft["personality"] = [f"{name}{colon}{text.phrase()}"
                            for name in NAMES["zh" if text.language == "zh" else "en"]]
    _unrepeated(draft, text)
    return draft


def _unrepeated(draft: Answer, text: TextMaker) -> None:
    """Draws again each item that says another field's fact (facts_not_repeated): the filler's
    sentences share their endings."""
    from flows.enpmr.form_checks import ACROSS_FIELDS, PROFILE_LISTS
    from memsynth.quality.textrules.meaning import meaning_units, similarity

    colon = "：" if text.language == "zh" else ": "

    def redraw(field: str, item: str) -> str:
        return f"{item.split(colon)[0]}{colon}{text.phrase()}" if field == "personality" else text.sentence()

    kept: list[tuple[str, frozenset[str]]] = []
    for field in PROFILE_LISTS:
        items = draft.get(field) or []
        for i in range(len(items)):
            for _ in range(50):
                units = meaning_units(items[i])
                if not any(f != field and similarity(units, u) >= ACROSS_FIELDS for f, u in kept):
                    break
                items[i] = redraw(field, items[i])
            kept.append((field, meaning_units(items[i])))


@ANSWERS.stage("life_themes")
def life_themes(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    reference = _date(v, "reference_date", dt.date(2024, 12, 2))
    earliest = _date(v, "window_start", reference - dt.timedelta(days=5 * 365))
    draft["themes"] = [
        {"theme": title, "description": text.paragraph(2),
         "start_date": text.date_between(earliest, reference).isoformat()}
        for title in text.theme_titles(v["min_themes"] + text.rng.randint(0, 2))]
    return draft


def _short_names(text: TextMaker, count: int) -> list[str]:
    """`count` clauses no two of which say the same thing (short_names, distinct_names)."""
    from memsynth.quality.textrules.meaning import same_meaning_pairs

    out: list[str] = []
    while len(out) < count:
        clause = text.clause()
        if not same_meaning_pairs([*out, clause]):
            out.append(clause)
    return out


def _dated_items(draft: Answer, v: Variables, text: TextMaker, count: int, start: dt.date,
                 short: bool = False) -> list[Answer]:
    """`count` items shaped like the draft's first one, with sorted dates from `start` on; `short`:
    names that are titles, not sentences."""
    reference = _date(v, "reference_date", dt.date(2024, 12, 2))
    dates = sorted(text.date_between(start, reference) for _ in range(count))
    template = draft["items"][0]
    items = []
    names = _short_names(text, count) if short else text.distinct_sentences(count)
    for name, date in zip(names, dates):
        item = {k: (text.paragraph(1) if isinstance(val, str) else val) for k, val in template.items()}
        item.update(name=name.rstrip(".。"), date=date.isoformat())
        items.append(item)
    return items


def _theme_items(draft: Answer, v: Variables, text: TextMaker, extra: int = 1, short: bool = False) -> list[Answer]:
    start = dt.date.fromisoformat(v["theme"]["start_date"])
    return _dated_items(draft, v, text, v["min_items"] + text.rng.randint(0, extra), start, short)


@ANSWERS.stage("relationship")
def relationship(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    items = _theme_items(draft, v, text)
    seen: set[str] = set()
    for i, item in enumerate(items):
        name = text.person_name()
        while name.lower() in seen:
            name = f"{name} {i}"
        seen.add(name.lower())
        item.update(name=name, relationship_quality="good" if i % 2 == 0 else "bad")
    draft["items"] = items
    return draft


@ANSWERS.stage("power")
def power(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    items = _theme_items(draft, v, text)
    for i, item in enumerate(items):  # every third skill is a weak one: >= 4 of 6 proficient
        item["performance"] = "not proficient" if i % 3 == 1 else "proficient"
    draft["items"] = items
    return draft


@ANSWERS.stage("goal")
def goal(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    items = _theme_items(draft, v, text)
    for i, item in enumerate(items):
        item["status"] = "not achieved" if i == len(items) - 1 else "achieved"
    draft["items"] = items
    return draft


@ANSWERS.stage("highlight")
def highlight(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    items = _theme_items(draft, v, text, short=True)
    for item in items:
        item["recognized_by"] = text.person_name()
    draft["items"] = items
    return draft


@ANSWERS.stage("preferences")
def preferences(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    start = _date(v, "window_start", dt.date(2019, 12, 2))
    draft["items"] = _dated_items(draft, v, text, v["min_items"] + text.rng.randint(0, 2), start, short=True)
    _one_each(draft["items"], v, text)
    return draft


def _one_each(items: list[Answer], v: Variables, text: TextMaker) -> None:
    """Draws again each description that holds two of the profile's preferences
    (one_preference_each): the filler's sentences share their words."""
    from memsynth.quality.textrules.meaning import merged_sources

    profile = v.get("profile") or {}
    sources = [str(p) for p in profile.get("preferences") or []] if isinstance(profile, dict) else []
    for _ in range(50):
        merged = merged_sources(sources, [f"{i['name']} {i['description']}" for i in items])
        if not merged:
            return
        for j, _a, _b in merged:
            items[j]["description"] = text.paragraph(1)


def _alternating(text: TextMaker, count: int) -> list[Answer]:
    return [{"role": "user" if i % 2 == 0 else "ai", "content": text.paragraph(1)} for i in range(count)]


@ANSWERS.stage("memory_session")
def memory_session(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    turns = _alternating(text, text.rng.randint(v["min_turns"], v["max_turns"]))
    title = v["memory"]["name"]
    for turn in turns:  # the filler may draw the very sentence that is the title
        if title in turn["content"]:
            turn["content"] = turn["content"].replace(title, "嗯。" if text.language == "zh" else "I see.")
    reveal = 2 * text.rng.randint(0, (len(turns) - 1) // 2)  # a user turn
    details = v["memory"]["details"].split(": ", 1)[-1]  # its details, not its title
    if mentions_exactly(details, title):  # the details may say the title word for word: break it up
        details = details.replace(title, _broken(title, text.language))
    turns[reveal]["content"] = f"{details} {turns[reveal]['content']}"
    draft["turns"] = turns
    return draft


def _broken(title: str, language: str) -> str:
    """The title told with a pause in the middle: the same words, not quoted whole."""
    if language == "zh":
        middle = len(title) // 2
        return f"{title[:middle]}，嗯，{title[middle:]}"
    words = title.split()
    return " ".join(words[: len(words) // 2]) + ", um, " + " ".join(words[len(words) // 2:])


@ANSWERS.stage("scene")
def scene(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft["scene"] = text.paragraph(2)
    return draft


@ANSWERS.stage("scenario_consistency")
def scenario_consistency(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update(fits_target=True, expresses_need=True, fits_a_negative=False,
                 score=text.rng.choice([4, 5]), reason=text.sentence())
    return draft


@ANSWERS.stage("support_dialogue")
def support_dialogue(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    name = v["target"]["name"]
    count = text.rng.choice([n for n in range(v["min_turns"], v["max_turns"] + 1) if n % 2 == 0])
    turns = _alternating(text, count)
    giveaway = target_giveaway(v)
    for turn in turns:  # no turn but the recall gives the memory away (the filler shares words)
        for _ in range(20):
            if not giveaway.in_text(turn["content"]):
                break
            turn["content"] = text.paragraph(1)
        else:
            turn["content"] = "嗯。" if text.language == "zh" else "I see."
        turn["content"] = turn["content"].replace(name, "")
    memory_turn = 2 * text.rng.randint(1, count // 2)  # an AI turn (1-based, even)
    details = v["target"]["details"]
    recall = (f"还记得{details[:40]}吗？" if text.language == "zh"
              else f"Remember {' '.join(details.split()[:25])}?")
    # Recalled in the AI's words, the title not quoted whole; a relationship's title is the
    # person's name, which anyone says as it is.
    if v.get("category") != "relationship" and mentions_exactly(recall, name):
        recall = recall.replace(name, _broken(name, text.language))
    if giveaway.recognisable() and not giveaway.in_text(recall):  # its opening words may all be the scene's
        own = [p for p in sorted(giveaway.people) if p != name][:1] + sorted(giveaway.details)[:GIVEAWAY_DETAILS]
        recall = (f"还记得{'、'.join(p.removeprefix('kin:') for p in own)}那件事吗？" if text.language == "zh"
                  else f"Remember {', '.join(p.removeprefix('kin:') for p in own)}?")
    turns[memory_turn - 1]["content"] = recall
    draft.update(turns=turns, memory_turn=memory_turn)
    return draft


@ANSWERS.stage("faithfulness")
def faithfulness(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update(grounded_in_target=True, uses_negatives=False, user_reveals_target=False,
                 recalled_early=False, score=text.rng.choice([4, 5]), reason=text.sentence())
    return draft


@ANSWERS.stage("blri")
def blri(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    points = sorted(v["points"])
    low, high = points[:2], points[-2:]  # an empathic AI: agree with the positive items only
    draft["scores"] = [text.rng.choice(low if item["negative"] else high) for item in v["items"]]
    return draft


# --- evaluation stages: a reply that recalls one listed memory, and a grade drawn from 3-5
# (the simulator cannot judge wording; these only carry the pipeline end to end).

@ANSWERS.stage("eval_respond")
def eval_respond(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    number = text.rng.randint(1, len(v["memories"]))
    memory = v["memories"][number - 1]["text"]
    limit = REPLY_LIMIT[text.language]  # within the reply's limit, as the check holds it
    response = (f"还记得吗？{memory[: limit - 5]}" if text.language == "zh"
                else "Remember this? " + " ".join(memory.split()[: limit - 2]))
    draft.update(reasoning=text.sentence() if v["mode"] == "cot" else "", memory=number, response=response)
    return draft


@ANSWERS.stage("eval_judge")
def eval_judge(draft: Answer, v: Variables, text: TextMaker) -> Answer:
    draft.update({dim: text.rng.randint(3, 5) for dim in ("fluency", "humanoid", "information", "empathy")})
    return draft
