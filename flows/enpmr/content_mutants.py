"""Mutants aimed at enpmr's rules of what a memory says (content_checks.py and the audit
judge's rules of meaning): each breaks one rule in a good answer and nothing else. Those of a
rule only the judge reads must pass every check: they are what the judge is measured on."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.enpmr.content_checks import disliked_things
from memsynth.quality.mutants import Aim, InsertText, Rewrite, Set

# --- rules a check reads --------------------------------------------------------------------
# A proficient skill whose account says the user still cannot do it alone (power-performance-fits).
_STILL_DEPENDENT = {"en": ("She still needs a senior beside her every time.",
                           "She can't yet do it without a senior checking."),
                    "zh": ("但至今仍需带教老师在旁指导。", "不过她现在还离不开老师在旁边把关。")}
# A goal named by a feeling or an open-ended improvement, nothing to measure (goal-measurable).
_VAGUE_GOALS = {"en": ("Get more confident at work", "Become better at the job"),
                "zh": ("把工作做得更专业", "进一步提高自己的业务水平")}
# The memory placed years before the chat (session-at-memory-date).
_YEARS_BACK = {"en": ("That was two years ago now, mind.", "It feels like years ago already."),
               "zh": ("那已经是前年的事了。", "说起来都是两年前的事了。")}


def _proficient(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("items", i, "acquisition_method") for i, item in enumerate(answer.get("items", []))
            if item.get("performance") == "proficient"]


def _first_name(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("items", 0, "name")] if answer.get("items") else []


def _user_turns(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("turns", i, "content") for i, t in enumerate(answer.get("turns", [])) if t.get("role") == "user"]


def _ai_turns(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("turns", i, "content") for i, t in enumerate(answer.get("turns", [])) if t.get("role") == "ai"]


# The AI placing the memory years back (held-out r17's "隔了快两年"), in other words.
_AI_YEARS_BACK = {"en": ("Almost three years on, how do you feel about it?",),
                  "zh": ("隔了差不多三年再想起来，你现在怎么看？",)}


def _liked_dislikes(v: Mapping[str, Any], language: str) -> list[str]:
    """What the profile avoids, named as a liking: "coffee every morning", 每天都要来点咖啡."""
    prefs = [str(p) for p in (v.get("profile") or {}).get("preferences", [])]
    things = [thing for _, thing, _ in disliked_things(prefs)][:2]
    return [f"每天都要来点{t}" for t in things] if language == "zh" else [f"{t} every morning" for t in things]


# --- rules only the audit judge reads ---------------------------------------------------------
def _attributes_restated(v: Mapping[str, Any], language: str) -> list[str]:
    """The sampled attributes said back as sentences, with generic cares (persona-specific)."""
    interests = list(v.get("interests", []))
    if language == "zh":
        return [f"这位{v['occupation']}年龄在{v['age_band']}岁之间，住在{v['region']}，正在{v['life_stage']}。"
                f"平时喜欢{'和'.join(interests)}，在意家人的健康和自己的工作。"]
    return [f"This {v['occupation']}, aged {v['age_band']}, lives in {v['region']} and is {v['life_stage']}. In their "
            f"free time they enjoy {' and '.join(interests)}, and they care about their family and their work."]


_BROAD_SKILLS = {"en": ("Professional skills", "Research ability"), "zh": ("专业技能", "科研能力")}


def _second_name(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [("items", 1, "name")] if len(answer.get("items", [])) > 1 else []


def _last_item_as(kind: str):
    """The highlights with the last one made a setback or an ordinary day (highlight-moment)."""
    texts = {
        ("setback", "en"): ("A bad day on the ward", "She got a patient's plan wrong and a senior had to step in and "
                            "redo it. She went home feeling she was not good enough."),
        ("setback", "zh"): ("工作中的一次失误", "她给病人定的训练方案出了错，最后由上级老师接手重做。那天她回家后一直觉得自己还不够格。"),
        ("ordinary", "en"): ("An ordinary first day", "She arrived for her first day, found her locker and met the "
                             "team over a cup of tea."),
        ("ordinary", "zh"): ("平常的第一天", "她第一天报到，领了储物柜钥匙，和同事们喝了杯茶认识了一下。"),
    }

    def items(answer: Any, v: Mapping[str, Any]) -> list[Any]:
        out = [dict(i) for i in answer.get("items", [])]
        if out:
            name, description = texts[(kind, "zh" if v.get("language") == "zh" else "en")]
            out[-1].update(name=name, description=description)
        return out
    return items


def _one_day_theme(kind: str):
    """The themes with one more that is a single day's event (theme-spans-time)."""
    texts = {("wedding", "en"): ("A friend's wedding", "She was a bridesmaid at her best friend's wedding on a "
                                 "Saturday in June."),
             ("wedding", "zh"): ("好友的婚礼", "六月的一个周六，她给最好的朋友当了伴娘。"),
             ("poster", "en"): ("A poster at a regional meeting", "She stood by her poster for one afternoon at a "
                                "regional meeting."),
             ("poster", "zh"): ("一次学术年会壁报", "她在省里的学术年会上站在自己的壁报前讲了一个下午。")}

    def themes(answer: Any, v: Mapping[str, Any]) -> list[Any]:
        out = [dict(t) for t in answer.get("themes", [])]
        if out:
            title, description = texts[(kind, "zh" if v.get("language") == "zh" else "en")]
            out.append({"theme": title, "description": description, "start_date": out[-1]["start_date"]})
        return out
    return themes


# A characteristic of general praise or blame with no behaviour (relationship-behaviour).
_VAGUE_CHARACTER = {"good": {"en": "Cheerful and very capable, and a great help to her; they have always got on well.",
                             "zh": "性格开朗，专业能力强，为人热心，帮了她很多，两人关系一直很好。"},
                    "bad": {"en": "Difficult and not very supportive, and hard to work with; she finds them a strain.",
                            "zh": "性格强势，不太好相处，也不怎么支持她，让她觉得很有压力。"}}


def _vague_character(quality: str):
    def items(answer: Any, v: Mapping[str, Any]) -> list[Any] | None:
        out = [dict(i) for i in answer.get("items", [])]
        at = next((k for k, i in enumerate(out) if i.get("relationship_quality") == quality), None)
        if at is None:
            return None
        out[at]["characteristic"] = _VAGUE_CHARACTER[quality]["zh" if v.get("language") == "zh" else "en"]
        return out
    return items


def _reply_from(which: int):
    """The reply told from another listed memory than the one the answer chose, its number named
    rightly (eval-chooses-memory): the first or the last of the others in the list."""
    def answer_with(answer: Any, v: Mapping[str, Any]) -> Any:
        others = [m for m in v.get("memories", []) if m.get("number") != answer.get("memory")]
        if not others or v.get("mode") == "golden":
            return None
        chosen = others[which]
        account = re.split(r"[:：]", str(chosen["text"]), maxsplit=1)[-1].strip().rstrip("。.")
        if v.get("language") == "zh":
            response = f"听你这么说，我想起{account[:90]}。你其实比自己想的更有办法。"
        else:
            response = (f"That sounds hard. It makes me think of this: {' '.join(account.split()[:45]).rstrip('.')}. "
                        "You have more in you than today suggests.")
        return {**answer, "memory": chosen["number"], "response": response}
    return answer_with


def _whole(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    return [()]


def _older(answer: Any, v: Mapping[str, Any]) -> Any:
    """An age the persona does not give (profile-keeps-persona): twelve years on."""
    age = answer.get("age")
    return age + 12 if isinstance(age, int) else age


_ZH_TIMES = "一两三四五六七"
_EN_TIMES = ("once", "twice", "three times", "four times", "five times", "six times", "seven times")


def _routine_recounted(answer: Any, v: Mapping[str, Any]) -> list[str] | None:
    """The first habit that counts a routine the persona counts, given one more day a week
    (profile-keeps-persona: "每周二、周五…" of "每周挤出两个早上" made 每周三次)."""
    from flows.enpmr.persona_checks import _CLAUSES, _same_routine
    from memsynth.quality.textrules.frequency import weekly_counts
    from memsynth.quality.textrules.meaning import meaning_units

    persona = [meaning_units(c.rest) for clause in _CLAUSES.split(str(v.get("persona", "")))
               for c in weekly_counts(clause)]
    habits = [str(h) for h in answer.get("habits", [])]
    for i, habit in enumerate(habits):
        for count in weekly_counts(habit):
            if any(_same_routine(meaning_units(count.rest), units) for units in persona) and count.times < 7:
                more = (f"每周{_ZH_TIMES[count.times]}次" if v.get("language") == "zh"
                        else f"{_EN_TIMES[count.times]} a week")
                return [*habits[:i], habit.replace(count.said, more, 1), *habits[i + 1:]]
    return None


# A profile's rest and comfort preferences replaced by food ones (profile-preference-kinds).
_REST_OR_COMFORT = {"en": ("sleep", "nap", "bed", "rest", "pillow", "blanket", "curtain", "quiet", "window", "bath",
                           "lie-in", "cosy", "cozy", "soft", "loose", "warm", "cold"),
                    "zh": ("睡", "午休", "休息", "躺", "枕", "被", "毯", "窗帘", "安静", "宽松", "衣", "冷", "暖")}
_FOODS = {"en": ("Loves a bowl of ramen on a wet evening", "Can't stand olives", "Orders extra pickles on every burger",
                 "Prefers dark chocolate to milk chocolate", "Loves a bacon sandwich on a Saturday"),
          "zh": ("下雨天爱吃一碗热汤面", "不吃橄榄", "汉堡里总要加双份酸黄瓜", "黑巧克力比牛奶巧克力更对胃口", "周六早上爱吃一碗牛肉粉")}


def _food_only(answer: Any, v: Mapping[str, Any]) -> list[str]:
    language = "zh" if v.get("language") == "zh" else "en"
    prefs, foods = list(answer.get("preferences", [])), iter(_FOODS[language])
    return [next(foods, p) if any(w in p.lower() for w in _REST_OR_COMFORT[language]) else p for p in prefs]


AIMS = (
    Aim("power-performance-fits", ("power",), InsertText(_proficient, lambda v, lang: _STILL_DEPENDENT[lang],
                                                         "proficient_yet_dependent")),
    Aim("goal-measurable", ("goal",), Rewrite(_first_name, lambda v, lang: _VAGUE_GOALS[lang], "vague_goal")),
    Aim("preferences-as-profile", ("preferences",), Rewrite(_first_name, _liked_dislikes, "dislike_as_liking")),
    Aim("session-at-memory-date", ("memory_session",), InsertText(_user_turns, lambda v, lang: _YEARS_BACK[lang],
                                                                  "years_back")),
    Aim("session-at-memory-date", ("memory_session",), InsertText(_ai_turns, lambda v, lang: _AI_YEARS_BACK[lang],
                                                                  "ai_years_back")),
    # Judge work (no check reads these; the audit judge does).
    Aim("persona-specific", ("persona",), Rewrite("description", _attributes_restated, "attributes_restated")),
    Aim("power-specific", ("power",), Rewrite(_second_name, lambda v, lang: _BROAD_SKILLS[lang], "broad_field")),
    Aim("highlight-moment", ("highlight",), Set("items", None, "setback", from_answer=_last_item_as("setback"))),
    Aim("highlight-moment", ("highlight",), Set("items", None, "ordinary_day", from_answer=_last_item_as("ordinary"))),
    Aim("theme-spans-time", ("life_themes",), Set("themes", None, "one_day_event", from_answer=_one_day_theme("wedding"))),
    Aim("theme-spans-time", ("life_themes",), Set("themes", None, "one_day_event", from_answer=_one_day_theme("poster"))),
    Aim("relationship-behaviour", ("relationship",), Set("items", None, "vague_praise",
                                                         from_answer=_vague_character("good"))),
    Aim("relationship-behaviour", ("relationship",), Set("items", None, "vague_blame",
                                                         from_answer=_vague_character("bad"))),
    Aim("eval-chooses-memory", ("eval_respond",), Set(_whole, None, "another_memory_first",
                                                      from_answer=_reply_from(0))),
    Aim("eval-chooses-memory", ("eval_respond",), Set(_whole, None, "another_memory_last",
                                                      from_answer=_reply_from(-1))),
    Aim("profile-keeps-persona", ("profile",), Set("age", None, "age_changed", from_answer=_older)),
    Aim("profile-keeps-persona", ("profile",), Set("habits", None, "routine_recounted",
                                                   from_answer=_routine_recounted)),
    Aim("profile-preference-kinds", ("profile",), Set("preferences", None, "no_rest_or_comfort",
                                                      from_answer=_food_only)),
)
