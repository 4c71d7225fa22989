"""Does a query quote a memory? A copy with a few words changed is still a quote.

A speaker who quotes a memory to the character turns its person into "you" and its tense into
theirs ("Melanie and her kids are thinking about going camping in June 2023" -> "you and your
kids were thinking about going camping in June 2023"). So both texts are compared with every
person word (a pronoun, a possessive, the memory's names) as one token and every form of "be"
/ "have" as one, and a query quotes a memory when the stretches of two or more tokens it shares
with it cover most of the memory. A question that points at a memory by its subject shares a
name, a noun or a phrase ("going camping", 脚踝, 猫粮): a small share of the memory.
"""

from __future__ import annotations

import difflib
import re

from memsynth.core.textmatch import normal_text

_CJK = re.compile(r"[\u4e00-\u9fff]")
_WORD = re.compile(r"[^\W_]+(?:'[a-z]+)?")
_PERSON_EN = frozenset("i me my mine myself you your yours yourself she her hers herself he him his himself they "
                       "them their theirs themselves we us our ours".split())
_BE_EN = frozenset("am is are was were be been being has have had 's 're 've".split())
_PERSON_ZH = re.compile(r"[你我她他您]们?")
# A quote covers this share of the memory's tokens, in stretches of MIN_RUN tokens or more
# (en words; zh characters, where a word is about two).
QUOTED_SHARE = 0.65
MIN_RUN = {"en": 2, "zh": 3}
MIN_COVERED = {"en": 6, "zh": 10}


def _tokens(text: str, names: list[str]) -> tuple[list[str], str]:
    normal = normal_text(text).replace("’", "'")
    for name in sorted((normal_text(n) for n in names if n.strip()), key=len, reverse=True):
        normal = normal.replace(name, " \x00 ")
    if _CJK.search(normal):
        normal = _PERSON_ZH.sub("\x00", normal)
        return [ch if ch != "\x00" else "P" for ch in normal if ch == "\x00" or ch.isalnum()], "zh"
    words = []
    for w in re.findall(r"\x00|[^\W_]+(?:'[a-z]+)?", normal):
        base, _, tail = w.partition("'")
        if w == "\x00" or base in _PERSON_EN:
            words.append("P")
        elif base in _BE_EN:
            words.append("BE")
        else:
            words.append(base)
        if tail and f"'{tail}" in _BE_EN:
            words.append("BE")
    return words, "en"


def quoted_share(query: str, memory: str, names: list[str] = ()) -> tuple[float, int]:
    """(the share of the memory's tokens the query repeats in stretches of a few tokens or more,
    how many tokens that is)."""
    mem, language = _tokens(memory, list(names))
    q, _ = _tokens(query, list(names))
    if not mem or not q:
        return 0.0, 0
    blocks = difflib.SequenceMatcher(None, q, mem, autojunk=False).get_matching_blocks()
    covered = sum(b.size for b in blocks if b.size >= MIN_RUN[language])
    return covered / len(mem), covered


def quotes(query: str, memory: str, names: list[str] = ()) -> bool:
    """Does the query repeat most of the memory, a few words changed at most?"""
    share, covered = quoted_share(query, memory, names)
    language = "zh" if _CJK.search(memory) else "en"
    return share >= QUOTED_SHARE and covered >= MIN_COVERED[language]
