"""stratmem's checks on the form of a query and the consistency of a judge's verdict.

Built on memsynth.quality.textrules; calibrated on StratMem-Bench's 657 released queries
(tests/test_stratmem_reference.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.core.textmatch import length_in_words
from memsynth.generation.stage import check, say
from memsynth.quality.textrules.forms import third_person_user
from memsynth.quality.textrules.meaning import meaning_units
from memsynth.quality.textrules.people import named_in, person_forms
from schemas.stratmem import IntegrationScore, UseJudgment, UserQuery, VirtualPersona


@check("speaks_to_the_character")
def speaks_to_the_character(out: UserQuery, v: Mapping[str, Any]) -> Iterator[str]:
    """The query is said to the character: "you", never its name in the third person ("Did
    Melanie …?"); a name said to them ("Melanie, how …") is fine. None of the 657 released
    queries does it."""
    if found := third_person_user(out.query, person_forms(str(v["virtual_person"])) | {
            str(v["virtual_person"]).strip().lower()}):
        yield say(v, f"the query speaks of {v['virtual_person']} in the third person ({found!r}); {v['human']} is "
                     f"talking to {v['virtual_person']}: say \"you\"",
                  f"query 用第三人称说起{v['virtual_person']}（“{found}”）；{v['human']}是在和{v['virtual_person']}说话：请用“你”")


# MIQ's scale (the prompt): 5 no failure, 4 mild friction, 3 adds little, 2 at least one failure,
# 1 several or severe. A listed failure scores at most 2; none listed, at least 3.
FAILED_MAX_SCORE = 2


@check("miq_score_agrees")
def miq_score_agrees(out: IntegrationScore, v: Mapping[str, Any]) -> Iterator[str]:
    if out.failures and out.score > FAILED_MAX_SCORE:
        yield say(v, f"score {out.score} contradicts failures ({', '.join(out.failures)}): a reply with a failure "
                     f"scores at most {FAILED_MAX_SCORE}",
                  f"score {out.score} 与 failures（{'、'.join(out.failures)}）矛盾：有失误的回复最多 {FAILED_MAX_SCORE} 分")
    if not out.failures and out.score <= FAILED_MAX_SCORE:
        yield say(v, f"score {out.score} says the reply fails, but failures is empty: list the failure, or score "
                     f"{FAILED_MAX_SCORE + 1} or more",
                  f"score {out.score} 表示回复有失误，但 failures 为空：请列出失误，或给 {FAILED_MAX_SCORE + 1} 分及以上")


@check("unused_has_no_evidence")
def unused_has_no_evidence(out: UseJudgment, v: Mapping[str, Any]) -> Iterator[str]:
    """A memory judged unused has no evidence (the prompt: empty when it is not used)."""
    for x in out.verdicts:
        if not x.used and x.evidence.strip():
            yield say(v, f"memory {x.index} is marked not used, yet evidence quotes the reply; leave evidence empty "
                         "or mark it used",
                      f"第 {x.index} 条记忆判为未用到，却给了证据；请把证据留空，或判为用到")


# Chinese place names the persona may state only when a session does. jieba's part of speech
# "ns" alone is not enough: its dictionary tags words like 长跑, 开朗, 新鲜, 锦旗 as places. A word
# counts as a place when it is tagged ns *and* written as one: with an administrative suffix
# (西湖区, 盐城市, 郫县, 苏州), after a word that takes a place (在, 去过, 来自, 搬到了, 老家),
# before one that follows a place (成都人, 成都一家医院), or listed with such a place (日本和巴黎).
_ZH = re.compile(r"[\u4e00-\u9fff]")
# Words jieba tags as places that name none even in a place's position.
_NOT_PLACES = frozenset("城市 地方 家乡 老家 国内 国外 全国 中国 本地 外地 海外 市区 郊区 乡下 农村 城里 大陆 南方 北方 "
                        "东方 西方 世界 各地 当地 附近 周边 社区 小区".split())
_SUFFIX = tuple("省市县区州镇乡村岛湾港")
_BEFORE = frozenset("在 去 到 回 往 从 于 住 赴 来自 位于 住在 回到 去过 搬到 搬去 搬回 来到 到过 生于 出生于 飞往 前往 "
                    "离开 定居 移居 老家 家乡 故乡 籍贯".split())
_SKIP = frozenset({"了", "过"})
_AFTER = frozenset("人 一家 一所 一名 一位 一个 本地人 口音 方言".split())
_AND = frozenset({"和", "、", "与", "及", "或"})


def _as_place(words: list[tuple[str, str]], i: int) -> bool:
    word = words[i][0]
    if word.endswith(_SUFFIX):
        return True
    j = i - 1
    while j >= 0 and words[j][0] in _SKIP:
        j -= 1
    if j >= 0 and words[j][0] in _BEFORE:
        return True
    return i + 1 < len(words) and words[i + 1][0] in _AFTER


def zh_places(text: str) -> list[str]:
    from memsynth.core.textmatch import jieba_module

    jieba_module()  # quiet, its cache under memsynth's folder
    import jieba.posseg as posseg

    words = [(p.word, p.flag) for p in posseg.lcut(text)]
    places: list[str] = []
    for i, (word, flag) in enumerate(words):
        if flag != "ns" or len(word) < 2 or word in _NOT_PLACES:
            continue
        listed = i >= 2 and words[i - 1][0] in _AND and words[i - 2][0] in places
        if listed or _as_place(words, i):
            places.append(word)
    return places


@check("persona_places_from_sessions")
def persona_places_from_sessions(out: VirtualPersona, v: Mapping[str, Any]) -> Iterator[str]:
    """A Chinese persona names no place its sessions do not (English ones: persona_from_sessions,
    by capitalised words)."""
    import json

    said = json.dumps(v["sessions"], ensure_ascii=False)
    pieces = [out.summary, *out.traits, *out.style, *out.domains, *out.values]
    new = [w for piece in pieces if _ZH.search(piece) for w in zh_places(piece) if w not in said]
    if new := list(dict.fromkeys(new)):
        yield say(v, f"the persona names places no session mentions ({', '.join(new[:6])}); describe "
                     f"{v['virtual_person']} from the sessions only",
                  f"角色描述提到了对话里没有的地方（{'、'.join(new[:6])}）；请只依据这些对话描写{v['virtual_person']}")


# A persona describes the character ("Chen Jing is …", 陈静是……); it does not speak as them
# ("I'm Chen Jing", 我是陈静). Words in quotation marks are theirs to say: a style note may quote
# "I mean". zh: 我 outside quotes, except where it is part of a word (自我, 忘我, 我行我素).
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|「[^」]*」|『[^』]*』|(?<![A-Za-z])'[^']*'(?![A-Za-z])|‘[^’]*’")
_FIRST_EN = re.compile(r"(?<![\w'-])(I|I'm|I've|I'd|I'll|me|my|mine|myself)(?![\w'-])", re.IGNORECASE)
_FIRST_ZH = re.compile(r"我")
_NOT_FIRST_ZH = re.compile(r"自我|忘我|唯我|无我|本我|超我|小我|大我|敌我|物我|非我|我行我素")


def first_person(text: str) -> str | None:
    """The first-person word a description says outside quotation marks, or None."""
    said = _QUOTED.sub(" ", text.replace("’", "'") if "‘" not in text else text)
    if _ZH.search(said):
        m = _FIRST_ZH.search(_NOT_FIRST_ZH.sub("", said))
        return m.group(0) if m else None
    m = _FIRST_EN.search(said)
    return m.group(0) if m else None


@check("persona_described")
def persona_described(out: VirtualPersona, v: Mapping[str, Any]) -> Iterator[str]:
    """The persona describes the character in the third person, never as their own words."""
    for label in ("summary", "traits", "style", "domains", "values"):
        value = getattr(out, label)
        for i, text in enumerate([value] if isinstance(value, str) else value):
            if word := first_person(text):
                where = label if isinstance(value, str) else f"{label}[{i}]"
                yield say(v, f"{where} speaks as {v['virtual_person']} ({word!r}); describe {v['virtual_person']} "
                             f"in the third person (\"{v['virtual_person']} is …\")",
                          f"{where} 用第一人称（“{word}”）写成了{v['virtual_person']}的自述；请用第三人称描述"
                          f"（“{v['virtual_person']}是……”）")
                return


@check("said_by_the_speaker")
def said_by_the_speaker(out: UserQuery, v: Mapping[str, Any]) -> Iterator[str]:
    """The query is {human}'s own message: it never names {human} (a message that calls them
    by name is the character's, said the wrong way round). None of the 657 released queries
    names its speaker."""
    human, character = str(v["human"]), str(v["virtual_person"])
    forms = (person_forms(human) | {human.strip().lower()}) - person_forms(character) - {character.strip().lower()}
    if named := named_in(out.query, {f for f in forms if f}):
        yield say(v, f"the query names {human} ({named[0]!r}), who is the one speaking: write {human}'s own message "
                     f"to {character}",
                  f"query 提到了说话人{human}（“{named[0]}”）：这句话是{human}对{character}说的，请以{human}的口吻来写")


# "one natural question" (query.j2): a strong model's acceptable queries ask one question, or one
# and its follow-up ("脚踝恢复得怎么样了？五月那场比赛还来得及准备吗？"); 655 of the 657 released
# queries ask exactly one. Three or more is a list of questions.
MAX_QUESTIONS = 2
_QUESTION_MARK = re.compile(r"[?？]+")


@check("one_question")
def one_question(out: UserQuery, v: Mapping[str, Any]) -> Iterator[str]:
    if (n := len(_QUESTION_MARK.findall(out.query))) > MAX_QUESTIONS:
        yield say(v, f"the query asks {n} questions at once; ask one natural question",
                  f"query 一口气问了 {n} 个问题；请只问一个自然的问题")


_FIRST_PERSON = {"en": re.compile(r"\b(i|i'm|i've|i'd|i'll|me|my|mine|we|we're|our|us)\b", re.IGNORECASE),
                 "zh": re.compile(r"[我咱]")}
_SECOND_PERSON = {"en": re.compile(r"\byou", re.IGNORECASE), "zh": re.compile(r"[你您]")}


def _theirs_as_yours(query: str, human: str, facts: Any) -> bool:
    """The query calls the speaker's own people or things the character's: "你表姐" where a memory
    says "许磊的表姐", "your mentor" where it says "Caroline's mentor"."""
    name = re.escape(human.strip())
    for fact in facts:
        for m in re.finditer(rf"{name}的([\u4e00-\u9fff]{{2}})", fact):
            if re.search(rf"你的?{m.group(1)}", query):
                return True
        for m in re.finditer(rf"\b{name}['’]s ([a-z]+)", fact):
            if re.search(rf"\byour {m.group(1)}\b", query, re.IGNORECASE):
                return True
    return False


@check("asks_the_character")
def asks_the_character(out: UserQuery, v: Mapping[str, Any]) -> Iterator[str]:
    """A query whose every target is of the speaker's own life alone (its memory names the speaker,
    not the character), asked with "you" and never "I", or that calls the speaker's people or
    things the character's ("你表姐" of "许磊的表姐"), is the character asking the speaker: said the
    wrong way round. 649 of the 657 released queries pass (tests/test_stratmem.py)."""
    human, character = str(v["human"]), str(v["virtual_person"])
    facts = {int(m["number"]): str(m["fact"]) for m in v.get("memories", [])}
    targets = [facts[t] for t in out.targets if t in facts]
    own = [f for f in targets if named_in(f, person_forms(human)) and not named_in(f, person_forms(character))]
    language = "zh" if re.search(r"[\u4e00-\u9fff]", out.query) else "en"
    if (targets and len(own) == len(targets) and _SECOND_PERSON[language].search(out.query)
            and not _FIRST_PERSON[language].search(out.query)):
        yield say(v, f"every memory the query aims at is {human}'s own, yet it asks \"you\" about it: it is "
                     f"{character} asking {human}; write {human}'s message to {character}",
                  f"query 针对的记忆都是{human}自己的事，却用“你”来问：这成了{character}在问{human}；"
                  f"请写{human}对{character}说的话")
    elif _theirs_as_yours(out.query, human, facts.values()):
        yield say(v, f"the query calls {human}'s own people or things {character}'s (\"your …\"): it is {character} "
                     f"speaking; write {human}'s message to {character}",
                  f"query 把{human}自己的人或事说成了{character}的（“你的…”）：这成了{character}在说话；"
                  f"请写{human}对{character}说的话")


# "traits (6 to 12 short personality traits)" (persona.j2): the 657 released personas' traits run
# to 8 words; a strong model's acceptable Chinese traits to 9 characters. A trait past these is
# a sentence with its example, not a trait.
TRAIT_LIMIT = {"en": 8, "zh": 15}  # words in English, characters in Chinese


@check("short_traits")
def short_traits(out: VirtualPersona, v: Mapping[str, Any]) -> Iterator[str]:
    language = "zh" if v.get("language") == "zh" else "en"
    for i, trait in enumerate(out.traits):
        if (n := length_in_words(trait)) > TRAIT_LIMIT[language]:
            yield say(v, f"traits[{i}] has {n} words; a trait is a short phrase of at most {TRAIT_LIMIT['en']} words",
                      f"traits[{i}] 有 {n} 个字；性格特点要简短，不超过 {TRAIT_LIMIT['zh']} 个字")
            return


@check("domains_of_the_character")
def domains_of_the_character(out: VirtualPersona, v: Mapping[str, Any]) -> Iterator[str]:
    """"domains (4 to 10 areas they can talk about)": the character's, not the other speaker's. A
    domain whose words the sessions' notes say only of {human}, and the character's own lines
    barely touch ("小程序开发" when 陈静 only asked "什么项目？"), is the other speaker's topic."""
    human, character = str(v["human"]), str(v["virtual_person"])
    sessions = list(v.get("sessions", ()))
    own = meaning_units(" ".join(str(line) for s in sessions for line in s.get("lines", ())))
    theirs = [str(n) for s in sessions for n in s.get("notes", ())
              if named_in(str(n), person_forms(human)) and not named_in(str(n), person_forms(character))]
    other = frozenset().union(*(meaning_units(n) for n in theirs))
    for domain in out.domains:
        units = meaning_units(domain)
        if len(units & other) >= 2 and 3 * len(units & own) < len(units & other):
            yield say(v, f"the domain {domain!r} is {human}'s topic: {character} never talks about it; list what "
                         f"{character} can talk about",
                      f"领域“{domain}”是{human}的话题，{character}自己并没有谈过；请只写{character}能自如谈论的领域")
            return
