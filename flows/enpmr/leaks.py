"""Does a turn give a memory away? Its people, in any form, or its distinctive details.

A memory's distinctive details are what only it holds: its words (jieba's for Chinese,
crudely stemmed for English) less those of the scene, the profile and the other memories
the dialogue has in view. Its people are whom it names: a relationship's person, whoever
recognised a highlight; a person is found by name, surname with a title (张老师, 老张,
Mr Bennett) or given name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.core.textmatch import normal_text, zh_words

# Two details of a memory in one turn give it away; one shared word may be chance.
GIVEAWAY_DETAILS = 2

_CJK = re.compile(r"[\u4e00-\u9fff]")
_EN_WORD = re.compile(r"[a-z][a-z'-]*[a-z]|\d{2,}")
_ZH_NUMBER = re.compile(r"\d{2,}")
_STOP_EN = frozenset("""that this with from have they their there about would could should which when
what your yours them then than were been being into over just like very much more most some such only
also because while after before again other those these where will shall really still even feel felt
make made know think said says going back time today user user's during theme highlight recognised
recognized relationship goal preference skill memory good bad with without every each days weeks
remember want wanted need needs help helped thing things people someone something maybe always never
little great""".split())
_STOP_ZH = frozenset("""用户 我们 你们 他们 她们 自己 一个 这个 那个 时候 已经 因为 所以 但是 可以 没有 什么 觉得 现在
今天 真的 还是 就是 不是 一下 一些 这些 那些 这样 那样 如果 知道 事情 时间 一起 还有 其实 感觉 期间 高光 时刻 认可
得到 关系 目标 偏好 技能 良好 紧张 完成 尚未 后来 当时 每天 之后 以后 以前 开始 一次 一直""".split())
# Titles a Chinese speaker puts after a surname, or 老/小 before it.
_ZH_TITLES = ("老师", "大爷", "大妈", "阿姨", "叔叔", "叔", "姐", "哥", "总", "工", "经理", "医生", "大夫", "主任",
              "师傅", "老板", "教练", "教授", "奶奶", "爷爷", "婆婆", "伯")
_ZH_GROUPS = ("组", "会", "中心", "部", "科", "院", "队", "团", "班", "处", "局", "公司", "小组", "委员会", "学校", "医院")
_EN_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "madam", "coach", "uncle",
                        "aunt", "auntie", "grandma", "grandpa", "the", "a", "an", "his", "her", "their", "my"})
_GENERIC = re.compile(r"\b(his|her|their|my|the user's)\b|他的|她的|用户的|他们|她们")


def _stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            return word[: -len(suffix)]
    return word


def _en_tokens(text: str) -> set[str]:
    words = _EN_WORD.findall(normal_text(text))
    return {_stem(w) for w in words if w.isdigit() or (len(w) >= 4 and w not in _STOP_EN)}


def _zh_tokens(text: str) -> set[str]:
    words = {w for w in zh_words(normal_text(text)) if len(w) >= 2 and all(_CJK.match(c) for c in w)}
    return (words - _STOP_ZH) | set(_ZH_NUMBER.findall(text))


def tokens(text: str) -> set[str]:
    """The content words of a text: jieba's for Chinese, stemmed words of four letters or more for English."""
    return _zh_tokens(text) if _CJK.search(text) else _en_tokens(text)


def _raw_words(normal: str) -> set[str]:
    return set(re.findall(r"[a-z][a-z'-]+", normal))


def _found(token: str, text_normal: str, text_tokens: set[str]) -> bool:
    return token in text_normal if _CJK.search(token) else token in text_tokens


def person_forms(name: str) -> set[str]:
    """The ways a person is named: the whole name, and surname with a title, or the given name."""
    original = name.strip()
    name = normal_text(name).strip()
    if not name or _GENERIC.search(name):
        return set()
    if _CJK.search(name):
        if name.endswith(_ZH_GROUPS):  # 进修中心考核组: a body, not a person
            return set()
        core = name[-3:] if len(name) > 4 else name  # 科室主任刘卫东: the name ends a role
        name = core
        for title in _ZH_TITLES:
            if core.endswith(title) and len(core) > len(title):
                core = core[: -len(title)]
                break
        forms = {name}
        if 1 <= len(core) <= 4 and all(_CJK.match(c) for c in core):
            surname = core[0]
            forms |= {surname + t for t in _ZH_TITLES if len(t) >= 2} | {"老" + surname, "小" + surname}
            if len(core) >= 3:
                forms.add(core[1:])  # the given name
            elif core != name:
                forms.add(core)
        return {f for f in forms if len(f) >= 2}
    # English names are capitalised: "the centre's assessment panel" names nobody.
    return {w.lower() for w in re.findall(r"[A-Z][a-zA-Z'-]+", original)
            if len(w) >= 3 and w.lower() not in _EN_TITLES}


_RECOGNISED = re.compile(r"recogni[sz]ed by (.+?):|得到(.+?)的认可")
_SPLIT_PEOPLE = re.compile(r",| and |、|和|及|与")


def memory_people(memory: Mapping[str, Any], category: str | None = None) -> set[str]:
    """The people a memory names: a relationship's person, whoever recognised a highlight."""
    text = str(memory.get("text", ""))
    people: list[str] = []
    if category == "relationship" or re.search(r"relationship with the user|与用户关系", text):
        people.append(str(memory.get("name", "")))
    if m := _RECOGNISED.search(text):
        people += _SPLIT_PEOPLE.split(m.group(1) or m.group(2))
    return {form for p in people for form in person_forms(p)}


@dataclass(frozen=True)
class Giveaway:
    """What of one memory a turn may not hold: its people and its distinctive details."""

    people: frozenset[str]
    details: frozenset[str]

    @classmethod
    def of(cls, memory: Mapping[str, Any] | str, background: Iterable[str], category: str | None = None,
           others: Iterable[Mapping[str, Any] | str] = ()) -> Giveaway:
        """`memory`'s people and details, less what the background and the other memories hold."""
        text = memory if isinstance(memory, str) else f"{memory.get('details', '')} {memory.get('text', '')}"
        rest = " ".join([*background, *(o if isinstance(o, str) else str(o.get("text", "")) for o in others)])
        rest_normal = normal_text(rest)
        rest_tokens = tokens(rest) | _en_tokens(rest)
        people = memory_people({"text": text} if isinstance(memory, str) else memory, category)
        people = {p for p in people if not _found(p, rest_normal, _raw_words(rest_normal))}
        details = {t for t in tokens(text) if not _found(t, rest_normal, rest_tokens)} - people
        return cls(frozenset(people), frozenset(details))

    def in_text(self, text: str) -> list[str]:
        """What of the memory `text` holds, when it is enough to give the memory away; else []."""
        normal = normal_text(text)
        words = _en_tokens(text)
        people = sorted(p for p in self.people if _found(p, normal, _raw_words(normal)))
        details = sorted(d for d in self.details if _found(d, normal, words))
        if people or len(details) >= GIVEAWAY_DETAILS:
            return people + details
        return []
