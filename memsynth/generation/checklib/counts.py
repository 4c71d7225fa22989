"""Counts inside bounds: sentences, words, characters, list items, questions, proposed items.

Counted per language as the project's checks count: sentences by `textmatch.sentences`
(Chinese split after 。！？…, English by pysbd, which knows "e.g." and "Mr."); words by
`textmatch.length_in_words` (a Chinese character is a word, as Chinese length is told in 字);
characters are the text's non-space characters.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from memsynth.core.textmatch import length_in_words
from memsynth.core.textmatch import sentences as split_sentences
from memsynth.generation.checklib.paths import Bound, LibraryCheck, make, resolve, select, slug
from memsynth.generation.stage import say


def count_sentences(text: str) -> int:
    return len(split_sentences(text))


def count_words(text: str) -> int:
    return length_in_words(text)


def count_characters(text: str) -> int:
    return sum(1 for ch in text if not ch.isspace())


# A question ends at ? or ？ (a run such as "?!" or "？？" ends one).
_QUESTION = re.compile(r"[?？][?？!！]*")


def count_questions(text: str) -> int:
    return len(_QUESTION.findall(text))


# An enumeration's markers: a bullet opening a line, "1." "2)" "3、" after a space or a line's
# start, "(1)" "（2）", circled numbers, and Chinese 第一/第二 … .
_MARKERS = re.compile(r"(?:^|\n)[ \t]*[-*•·][ \t]+|(?:^|(?<=[\s:：,，;；]))\d{1,2}[.)、](?!\d)|[（(]\d{1,2}[)）]|[\u2460-\u2473]"
                      r"|第[一二三四五六七八九十][个条点项是，,、]|(?:^|(?<=[\s:：,，;；]))[一二三四五六七八九十]、")


def count_items(text: str) -> int:
    """Items a text enumerates: its list markers (a text without any proposes one)."""
    return max(1, len(_MARKERS.findall(text))) if text.strip() else 0


# (English unit, its plural, the Chinese one, the verb that asks for them in either language)
UNITS = {
    "sentences": ("sentence", "sentences", "句", ("write", "写")),
    "words": ("word", "words", "个字", ("write", "写")),
    "characters": ("character", "characters", "个字符", ("write", "写")),
    "items": ("item", "items", "项", ("give", "给出")),
    "questions": ("question", "questions", "个问题", ("ask", "提")),
}


def span(low: Any, high: Any, kind: str, zh: bool) -> str:
    """The bound in words: "2 to 4 sentences", "至少 2 句"."""
    one, many, unit, _ = UNITS[kind]
    if zh:
        if low is not None and high is not None:
            return f"恰好 {low} {unit}" if low == high else f" {low} 到 {high} {unit}"
        return f"至少 {low} {unit}" if low is not None else f"至多 {high} {unit}"
    if low is not None and high is not None:
        return f"exactly {low} {one if low == 1 else many}" if low == high else f"{low} to {high} {many}"
    return f"at least {low} {one if low == 1 else many}" if low is not None else \
        f"at most {high} {one if high == 1 else many}"


def _in_bounds(kind: str, counter: Callable[[Any], int], path: str, low: Bound, high: Bound,
               name: str | None, text: bool = True) -> LibraryCheck:
    if low is None and high is None:
        raise ValueError(f"{kind}({path!r}): give min, max or both")

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        lo, hi = resolve(low, v), resolve(high, v)
        one, many, unit, (verb_en, verb_zh) = UNITS[kind]
        for label, value in select(out, path):
            if text and not isinstance(value, str):
                continue
            n = counter(value)
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                yield say(v, f"{label} has {n} {one if n == 1 else many}; {verb_en} {span(lo, hi, kind, False)}",
                          f"{label} 有 {n} {unit}；请{verb_zh}{span(lo, hi, kind, True)}")

    return make(kind, name, path, fn, min=low, max=high)


def sentences(path: str, min: Bound = None, max: Bound = None, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` holds min…max sentences."""
    return _in_bounds("sentences", count_sentences, path, min, max, name)


def words(path: str, min: Bound = None, max: Bound = None, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` holds min…max words (in Chinese, characters: 字)."""
    return _in_bounds("words", count_words, path, min, max, name)


def characters(path: str, min: Bound = None, max: Bound = None, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` holds min…max characters, spaces not counted."""
    return _in_bounds("characters", count_characters, path, min, max, name)


def items(path: str, min: Bound = None, max: Bound = None, *, name: str | None = None) -> LibraryCheck:
    """Each list at `path` holds min…max items (bounds a schema cannot hold: a variable's)."""
    return _in_bounds("items", len, path, min, max, name, text=False)


def questions(path: str, min: Bound = None, max: Bound = None, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` asks min…max questions (counted by ? and ？)."""
    return _in_bounds("questions", count_questions, path, min, max, name)


def one_question(path: str, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` asks exactly one question."""
    return questions(path, 1, 1, name=name or f"one_question_{slug(path)}")


# Words that offer a second item beside the first: "…, or alternatively …", "…；也可以…".
_ALTERNATIVE = re.compile(r"\balternatively\b|\bor else\b|\bor instead\b|\bor (?:you|we) (?:could|can|might)\b"
                          r"|\binstead,? you (?:could|can)\b|或者|或是|要不然|要么|也可以", re.IGNORECASE)


def offers_alternative(text: str) -> str | None:
    """The words by which a text offers a second item, if it does."""
    m = _ALTERNATIVE.search(text)
    return m.group(0) if m else None


def one_item(path: str, *, name: str | None = None) -> LibraryCheck:
    """Each text at `path` proposes one item: it enumerates no list of them and offers no
    alternative ("or alternatively", "or you could", 或者, 也可以)."""

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        for label, value in select(out, path):
            if not isinstance(value, str):
                continue
            if (n := count_items(value)) > 1:
                yield say(v, f"{label} lists {n} items; propose exactly one",
                          f"{label} 列出了 {n} 项；请只提出一项")
            elif words := offers_alternative(value):
                yield say(v, f"{label} offers an alternative ({words!r}); propose exactly one",
                          f"{label} 用“{words}”给出了另一个选择；请只提出一项")

    return make("one_item", name, path, fn)
