"""enpmr's checks of what a memory says, where one wording of a mistake is there for code to
see: a proficient skill the text says the user still cannot do alone, a goal named as a feeling
with nothing to measure, a preference named after what the profile avoids, a session that
recalls its memory as years gone. The rest of each rule is a reading of meaning, which the
stage's audit judge does (rules.py names both)."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.stage import check, say
from memsynth.quality.textrules.meaning import meaning_units
from schemas.enpmr import Goals, MemorySession, Powers, Preferences

# --- power-performance-fits -------------------------------------------------------------
# "performance: proficient or not proficient" (power.j2): a strong model's not-proficient items
# say why in these words ("still needs the engineer present", 仍需工程师在旁指导); no acceptable
# proficient item holds them (../shared/model-answers, held-out r1-r10), and two held-out
# mistakes marked such a skill proficient.
STILL_DEPENDENT = {
    "en": re.compile(
        r"\bstill (?:needs?|relies|depends|has to|asks|can(?:no|')t|struggles|mixes|gets lost|is not able|isn't able)"
        r"|\bcan(?:no|')t yet\b|\bnot yet (?:able|confident|independent)\b|\byet to (?:master|manage|run|set)\b"
        r"|\bcan(?:no|')t (?:yet )?\w+(?: \w+){0,3} without (?:a|an|the|her|his|their) "
        r"(?:senior|engineer|supervisor|colleague|mentor|tutor|help)", re.I),
    "zh": re.compile(
        r"(?:仍|仍然|还|还是|依然|依旧)(?:需|需要|要|得|离不开|靠)[^，。；]{0,10}(?:帮|指导|在旁|在场|盯|请教|问|陪|把关|救场|接手)"
        r"|(?:仍|仍然|还|还是|依然)(?:常常|经常|总是)?(?:看不懂|弄不懂|做不好|拿捏不准|不会)"),
}
# A clause about someone else ("patients who still need a hoist", 病人仍需两人搀扶) is not the
# user's, nor one that describes a noun (为还不会走的病人: 的 closes it before any comma).
_OTHERS_BEFORE = {"en": re.compile(r"\b(?:who|that|which|patients?|clients?)\s+$", re.I),
                  "zh": re.compile(r"(?:病人|患者|老人|孩子|他们|她们)$")}
_DESCRIBES_NOUN = re.compile(r"^[^，。；、]{0,8}的")


def still_dependent(text: str, language: str) -> str | None:
    """The words of `text` saying the user still cannot do it without help, or None."""
    lang = "zh" if language == "zh" else "en"
    for m in STILL_DEPENDENT[lang].finditer(text):
        if _OTHERS_BEFORE[lang].search(text[max(0, m.start() - 20):m.start()]):
            continue
        if lang == "zh" and _DESCRIBES_NOUN.search(text[m.end():]):
            continue
        return m.group(0)
    return None


@check("proficiency_fits_account")
def proficiency_fits_account(out: Powers, v: Mapping[str, Any]) -> Iterator[str]:
    language = str(v.get("language", "en"))
    for i, item in enumerate(out.items):
        if item.performance != "proficient":
            continue
        for field in ("description", "acquisition_method"):
            if words := still_dependent(getattr(item, field), language):
                yield say(v, f"items[{i}] ({item.name!r}) is \"proficient\", but its {field} says {words!r}: a skill "
                             "the user still cannot do without help is \"not proficient\"; make the two agree",
                          f"items[{i}]（“{item.name}”）标为 \"proficient\"，但 {field} 写着“{words}”：用户离开别人帮助"
                          "还做不到的技能应为 \"not proficient\"；两者要一致")
                break


# --- goal-measurable ----------------------------------------------------------------------
# "name: a specific, measurable milestone" (goal.j2). A goal named by a feeling or an open-ended
# improvement ("get more confident", "become the go-to person", 做得更专业, 进一步提高效果) with
# nothing to count, pass or meet by a date has no end point. Seven held-out mistakes wrote one;
# every acceptable name holds a number, a deadline or an outcome (approved, published, passed).
VAGUE_GOAL = {
    "en": re.compile(r"\b(?:confident|confidence|comfortable|better|improv\w*|go-to|grow into|expert|good at|"
                     r"well-rounded|more (?:\w+ )?(?:skilled|professional|effective|experienced|independent|capable))\b",
                     re.I),
    "zh": re.compile(r"更(?:加|好|专业|熟练|自信|出色|规范|有信心|有底气)|进一步|提高|提升|自信|有信心|得心应手|"
                     r"越来越|做好|专业化"),
}
# What makes a name measurable: a number (digits or words), a share, a deadline.
MEASURE = {
    "en": re.compile(r"\d|%|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|"
                     r"fifty|hundred|half|all|every|both|first|by|within|before)\b", re.I),
    "zh": re.compile(r"\d|[一二两三四五六七八九十百千半][例个名位篇次项分年月周天成倍%]|％|内|之前|以前|前完成|截止|达到|"
                     r"通过|拿到|发表"),
}


def vague_goal(name: str, language: str) -> str | None:
    """The improvement words of a goal name that holds no measure, or None."""
    lang = "zh" if language == "zh" else "en"
    m = VAGUE_GOAL[lang].search(name)
    return m.group(0) if m and not MEASURE[lang].search(name) else None


@check("measurable_names")
def measurable_names(out: Goals, v: Mapping[str, Any]) -> Iterator[str]:
    language = str(v.get("language", "en"))
    for i, item in enumerate(out.items):
        if words := vague_goal(item.name, language):
            yield say(v, f"items[{i}].name {item.name!r} is an improvement ({words!r}) with nothing to measure; name "
                         "a milestone the user can tick off (a count, a score, an approval, a deadline)",
                      f"items[{i}].name“{item.name}”只是一种提高（“{words}”），没有可衡量的终点；请写成能判断是否完成的"
                      "里程碑（数量、分数、通过审核、期限）")


# --- preferences-as-profile -------------------------------------------------------------------
# "Turn the profile's preferences into ... preference memories" (preferences.j2): a profile's
# dislike ("Avoids coffee, it makes her jittery", 不喜欢喝咖啡) named as a liking ("oat milk in
# coffee") turns the profile around. Five held-out mistakes did it; acceptable items name a
# disliked thing only with its negation ("avoids coffee", 不喝咖啡) or as the one passed over.
_NEG = {"en": re.compile(r"\b(?:not|no|never|avoids?|avoiding|dislikes?|hates?|can't stand|cannot stand|"
                         r"steers? clear of|won't|doesn't|refuses?)\b", re.I),
        "zh": re.compile(r"不(?:喜欢|爱|吃|喝|碰|用|看|穿|去|想)?|讨厌|厌恶|受不了|拒绝|避免|怕|没法")}
# A name that sets one thing over another keeps the other as the one not chosen, and one that
# says what the thing does to the user ("coriander tastes like soap", 闻到香菜就头疼, 香菜免谈,
# "running is bad for her knees", 咖啡敬而远之, "steers clear of coffee": a27's acceptable
# answers) keeps the dislike in other words.
_OVER = {"en": re.compile(r"\b(?:over|instead of|rather than|than|not|no|never|without|avoids?|dislikes?|hates?|"
                          r"skips?|swaps?|tastes? like|makes? (?:her|him|them|me)|gives? (?:her|him|them|me)|"
                          r"allergic|gave up|quit|off|can't|cannot|don't|doesn't|won't|steers? clear|stays? away|"
                          r"keeps? away|bad for|hard on|hurts?|harms?|wrecks?|ruins?|kills?)\b", re.I),
         "zh": re.compile(r"不|没|别|而非|而不是|代替|替代|胜过|比起|比(?!较)|讨厌|怕|戒|免谈|免了|拒|躲|远离|远之|嫌|"
                          r"头疼|头痛|心慌|难受|恶心|反胃|过敏|受不了")}
_CLAUSES = re.compile(r"[,，;；:：。.!！?？()（）]")
_CJK = re.compile(r"[\u4e00-\u9fff]")
_VERBS_ZH = re.compile(r"^(?:吃|喝|碰|看|用|去|穿|听|闻)")


def disliked_things(preferences: list[str]) -> list[tuple[str, str, frozenset[str]]]:
    """(the clause, what it avoids, that thing's meaning units) of each negated clause of the
    profile's preferences: "Avoids coffee, it makes her jittery" gives coffee; 不吃香菜 gives 香菜."""
    out = []
    for pref in preferences:
        lang = "zh" if re.search(r"[\u4e00-\u9fff]", pref) else "en"
        for clause in _CLAUSES.split(pref):
            m = _NEG[lang].search(clause)
            if not m:
                continue
            thing = clause[m.end():].strip()
            if lang == "zh":
                thing = _VERBS_ZH.sub("", thing)
            if units := meaning_units(thing):
                out.append((clause.strip(), thing, units))
    return out


@check("dislikes_kept")
def dislikes_kept(out: Preferences, v: Mapping[str, Any]) -> Iterator[str]:
    profile = v.get("profile") or {}
    prefs = [str(p) for p in (profile.get("preferences") or [])] if isinstance(profile, Mapping) else []
    disliked = disliked_things(prefs)
    language = "zh" if v.get("language") == "zh" else "en"
    for i, item in enumerate(out.items):
        if _OVER[language].search(item.name):
            continue
        held = meaning_units(item.name)
        for clause, thing, units in disliked:
            # Chinese units are character pairs, and a two-character thing (香菜) has none of
            # the name's own: the thing itself is looked for there.
            if (thing in item.name) if _CJK.search(thing) else units <= held:
                yield say(v, f"items[{i}] is named {item.name!r}, a liking, but the profile says {clause!r}; keep each "
                             "preference as the profile states it",
                          f"items[{i}] 的名称“{item.name}”写成了喜好，但资料中写的是“{clause}”；每条偏好要照资料原意写")
                break


# --- session-at-memory-date ---------------------------------------------------------------------
# "Write the conversation the user had with the AI around the date of the memory" (memory_session.j2):
# a speaker who places the memory two or more years back is talking long after it ("nearly two
# years ago now", 前年冬天, the AI's "隔了快两年再看到"); no acceptable session of the corpus or the
# held-out rounds does, in either speaker's turns. "Last year" and 去年 are left out: near a new
# year they can name last week.
YEARS_BACK = {
    "en": re.compile(r"\b(?:(?:two|three|four|five|six|several|a few|few|many|\d+) |)years ago\b"
                     r"|\b(?:the )?year before last\b|\bback in (?:19|20)\d\d\b"
                     r"|\b(?:nearly|almost|over|more than|some) (?:two|three|four|five|\d+) years (?:on|later|since)\b", re.I),
    "zh": re.compile(r"大?前年|(?:[两二三四五六七八九十几]|好几|很多|许多)年(?:前|以前|之前)|多年(?:前|以前)"
                     r"|隔了(?:快|近|将近|差不多)?(?:[两二三四五六七八九十几]|好几)年"),
}


@check("told_near_its_date")
def told_near_its_date(out: MemorySession, v: Mapping[str, Any]) -> Iterator[str]:
    pattern = YEARS_BACK["zh" if v.get("language") == "zh" else "en"]
    for i, turn in enumerate(out.turns):
        if m := pattern.search(turn.content):
            yield say(v, f"turns[{i}] places the memory {m.group(0)!r}; the conversation takes place around the "
                         "memory's date, while it is recent news",
                      f"turns[{i}] 把这段记忆说成“{m.group(0)}”的事；这段对话发生在记忆日期前后，事情刚发生不久")
            return
