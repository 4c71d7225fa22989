"""Does a turn give a memory away? Its people, in any form, or its distinctive details.

A memory's distinctive details are what only it holds: its words (jieba's for Chinese,
crudely stemmed for English) less those of the scene, the profile and the other memories
the dialogue has in view. Its people are whom it names: a relationship's person, whoever
recognised a highlight; a person is found by name, surname with a title (张老师, 老张,
Mr Bennett) or given name.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.core.textmatch import normal_text, zh_words
from memsynth.quality.textrules.people import KIN_ZH, kin_pattern, kin_words, person_forms

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
    return set(_tokens(text))


@functools.lru_cache(maxsize=32768)
def _tokens(text: str) -> frozenset[str]:
    # Kept: each memory's words are looked for in every turn of every dialogue that may leak it.
    return frozenset(_zh_tokens(text) if _CJK.search(text) else _en_tokens(text))


def _raw_words(normal: str) -> set[str]:
    words = set(re.findall(r"[a-z][a-z'-]+", normal.replace("’", "'")))
    return words | {w[:-2] for w in words if w.endswith("'s")}  # Okafor's names Okafor


def _found(token: str, text_normal: str, text_tokens: set[str]) -> bool:
    if token.startswith("kin:"):  # a kinship word: the user's mother is 妈妈 or "her mum", not "a patient's mother"
        pattern = kin_pattern({token[4:]})
        return bool(pattern and pattern.search(text_normal))
    return token in text_normal if _CJK.search(token) else token in text_tokens


_KIN = re.compile(r"the user's ([^,()]+)[,)]|（用户的([^，（）]+)[，）]")
_RECOGNISED = re.compile(r"recogni[sz]ed by (.+?):|得到(.+?)的认可")
_SPLIT_PEOPLE = re.compile(r",| and |、|和|及|与")


def memory_people(memory: Mapping[str, Any], category: str | None = None) -> set[str]:
    """The people a memory names: a relationship's person, whoever recognised a highlight."""
    text = str(memory.get("text", ""))
    people: list[str] = []
    if category == "relationship" or re.search(r"relationship with the user|与用户关系", text):
        people.append(str(memory.get("name", "")))
        if kin := _KIN.search(text):  # 外婆 王秀英 is also 外婆, 姥姥; Rose, the user's mum, is also "her mum"
            return {form for p in people for form in person_forms(p)} | {f"kin:{w}" for w in
                                                                          kin_words(kin.group(1) or kin.group(2))}
    if m := _RECOGNISED.search(text):
        people += [_owner(p) for p in _SPLIT_PEOPLE.split(m.group(1) or m.group(2))]
    return {form for p in people for form in person_forms(p)}


_KIN_ZH_WORDS = "|".join(sorted({w for group in KIN_ZH for w in group if len(w) >= 2} | {"家属", "家人"}, key=len,
                                reverse=True))
_OWNED = re.compile(rf"^(.{{2,}}?)的?({_KIN_ZH_WORDS})$|^(.+?)['’]s\s+\w+$")


def _owner(person: str) -> str:
    """"Mr Okafor's daughter" and 欧阳大爷女儿 recognised it: the memory's person is the one
    they belong to (Mr Okafor, 欧阳大爷), named as the user would name him."""
    m = _OWNED.match(person.strip())
    return (m.group(1) or m.group(3)) if m else person


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

    def recognisable(self) -> bool:
        """Can a text give the memory away at all (a person, or enough details only it holds)?"""
        return bool(self.people) or len(self.details) >= GIVEAWAY_DETAILS

    def in_text(self, text: str) -> list[str]:
        """What of the memory `text` holds, when it is enough to give the memory away; else []."""
        normal = normal_text(text)
        words = _en_tokens(text)
        people = sorted(p for p in self.people if _found(p, normal, _raw_words(normal)))
        details = sorted(d for d in self.details if _found(d, normal, words))
        if people or len(details) >= GIVEAWAY_DETAILS:
            return [p.removeprefix("kin:") for p in people] + details
        return []
