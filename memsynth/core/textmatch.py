"""Does a text mention a name? Word overlap for alphabetic scripts, character pairs for CJK."""

from __future__ import annotations

import functools
import os
import re
import threading
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{2,}")


# Curly and corner quotation marks read as the straight ones: a quote typed with ' from a
# reply written with ’ is the same quote.
_QUOTES = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "“": '"', "”": '"', "„": '"',
                         "‟": '"', "″": '"', "「": '"', "」": '"', "『": '"', "』": '"', "«": '"', "»": '"'})


def _normal(text: str) -> str:
    if text.isascii():  # NFKC leaves ASCII as it is
        return text.casefold()
    # NFKC again after case folding: folding may undo a composition ("ῢ".upper() folds back
    # decomposed), and a text and its upper case must read the same (Unicode's NFKC_Casefold).
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES).casefold()
    return " ".join(unicodedata.normalize("NFKC", folded).split())


def normal_text(text: str) -> str:
    """The text as the matchers compare it: NFKC, straight quotes, case-folded, spaces collapsed."""
    return _normal(text)


def mentions_exactly(text: str, name: str) -> bool:
    """The whole name appears in the text (case- and width-insensitive)."""
    return _normal(name).strip() in _normal(text)


def mentions_term(text: str, term: str) -> bool:
    """The text names the term: a term with CJK characters as those characters anywhere (Chinese
    has no word breaks); any other as a whole word or phrase ("cat" is not in "category", nor
    "run" in "brunch"); case, width and runs of spaces or line breaks ignored."""
    text, term = " ".join(_normal(text).split()), " ".join(_normal(term).split())
    if not term:
        return False
    if _CJK.search(term):
        return term in text
    return re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text) is not None


def mentions(text: str, name: str, share: float = 0.5) -> bool:
    """The name appears, or most of its words (or CJK character pairs) do."""
    if mentions_exactly(text, name):
        return True
    t, n = _normal(text), _normal(name)
    if _CJK.search(n):
        pairs = {n[i:i + 2] for i in range(len(n) - 1) if _CJK.match(n[i]) and _CJK.match(n[i + 1])}
        return bool(pairs) and sum(p in t for p in pairs) / len(pairs) >= share
    words = {w for w in _WORD.findall(n) if len(w) >= 3}
    present = set(_WORD.findall(t))
    return bool(words) and len(words & present) / len(words) >= share


# A Chinese sentence ends at 。！？ or an ellipsis; "；" joins clauses of one sentence. An end
# inside quotation marks ends the quote, not the sentence (他说：“不行！”然后走了。), unless the
# text ends there. English goes to pysbd, which knows "e.g." and "Mr.".
_ZH_SENTENCE_END = re.compile(r"[。！？!?…]+(?![”’」』])")


# One segmenter a thread: pysbd keeps the text being segmented on the instance, so two threads
# sharing one (shard threads, the simulator's) now and then count another text's sentences,
# and a check failed or passed by chance (a cached rebuild then asked repairs the first did not).
_SEGMENTERS = threading.local()


def _english_segmenter() -> Any:
    segmenter = getattr(_SEGMENTERS, "en", None)
    if segmenter is None:
        import pysbd

        segmenter = _SEGMENTERS.en = pysbd.Segmenter(language="en", clean=False)
    return segmenter


def sentences(text: str) -> list[str]:
    """The sentences of a text: Chinese split after 。！？…, anything else by pysbd."""
    return list(_sentences(text.strip()))


@functools.lru_cache(maxsize=32768)
def _sentences(text: str) -> tuple[str, ...]:
    # Kept: pysbd takes about a millisecond a sentence, and one answer's texts are split by
    # several checks, again after a repair, and by the simulator that drew them.
    parts = _split_zh(text) if _CJK.search(text) else _split_en(text)
    return tuple(s for s in (part.strip() for part in parts) if len(s) > 1)


# The separators U+001C-U+001F: whitespace to re's \s, not to int(), so pysbd's list patterns
# take "\x1f0" for a list number and fail (hypothesis found it); it gets a space, which keeps
# every sentence's length and place.
_ODD_SPACE = re.compile(r"[\x1c-\x1f]")
_EN_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _split_en(text: str) -> list[str]:
    try:
        return _english_segmenter().segment(_ODD_SPACE.sub(" ", text))
    except (ValueError, IndexError, TypeError, RecursionError):
        # Any other text pysbd cannot read is still split, at . ! ? before a space.
        return _EN_SENTENCE_END.split(text)


def _split_zh(text: str) -> list[str]:
    parts, start = [], 0
    for m in _ZH_SENTENCE_END.finditer(text):
        end = m.end()
        if end > start:
            parts.append(text[start:end])
            start = end
    parts.append(text[start:])
    return parts


# Words too common to show that one text draws on another.
_STOP_EN = frozenset("""that this with from have they their there about would could should which when
what your yours them then than were been being into over just like very much more most some such only
also because while after before again other those these where will shall really still even feel felt
make made know think said says going back time today""".split())
_STOP_ZH = frozenset("""用户 我们 你们 他们 她们 自己 一个 这个 那个 时候 已经 因为 所以 但是 可以 没有 什么 觉得
现在 今天 真的 还是 就是 不是 一下 一些 这些 那些 这样 那样 如果 知道 事情 时间 一起 还有 其实 感觉 我的 你的 他的
她的 的时 了一 是一 在一 我们的""".split())


def _tokens(normal: str) -> Iterator[str]:
    """Words of four letters or more, then CJK character pairs, minus the commonest ones."""
    for w in _WORD.findall(normal):
        if len(w) >= 4 and w.isascii() and w not in _STOP_EN:
            yield w
    for run in _CJK_RUN.findall(normal):
        for i in range(len(run) - 1):
            if run[i:i + 2] not in _STOP_ZH:
                yield run[i:i + 2]


def content_tokens(text: str) -> set[str]:
    """Words of four letters or more, and CJK character pairs, minus the commonest ones."""
    return set(_tokens(_normal(text)))


def refers_to(text: str, reference: str, min_shared: int = 2) -> bool:
    """Does `text` draw on `reference` (holds at least `min_shared` of its content words or CJK pairs)?

    The reference is tokenized, the text only searched: a memory session's turns are long
    and checked by the hundred thousand, a memory's details are short.
    """
    t = _normal(text)
    found: set[str] = set()
    for token in _tokens(_normal(reference)):  # lazily: most texts are settled in a few tokens
        if token not in found and token in t:
            found.add(token)
            if len(found) >= min_shared:
                return True
    return False


def jieba_module():
    """jieba, quiet, keeping its prepared dictionary under memsynth's cache folder: left to
    itself it writes `jieba.cache` (~3 MB) into the system's temp folder and leaves it there."""
    import logging

    import jieba

    if jieba.dt.tmp_dir is None:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memsynth"
        cache.mkdir(parents=True, exist_ok=True)
        jieba.dt.tmp_dir = str(cache)
    jieba.setLogLevel(logging.WARNING)
    return jieba


def zh_words(text: str) -> list[str]:
    """jieba's words of a Chinese text (its dictionary ships in the wheel)."""
    return jieba_module().lcut(text)


def shared_run(text: str, source: str) -> int:
    """The longest stretch `text` copies from `source`: in words, or in characters where
    either is Chinese (punctuation, case and width ignored)."""
    import difflib

    a, b = _normal(text), _normal(source)
    if _CJK.search(a) or _CJK.search(b):
        x, y = "".join(_WORD.findall(a)), "".join(_WORD.findall(b))
    else:
        x, y = _WORD.findall(a), _WORD.findall(b)  # type: ignore[assignment]
    if not x or not y:
        return 0
    return difflib.SequenceMatcher(None, x, y, autojunk=False).find_longest_match(0, len(x), 0, len(y)).size


# Two texts sharing this share of their character pairs (Chinese) or words say the same thing
# in other words: the 2,744 released PAL-Set candidate solutions never pass 0.14 within a topic.
NEAR_DUPLICATE = 0.5


def _units(text: str) -> set[str]:
    """Chinese: its character pairs; other languages: its words of three letters or more."""
    normal = _normal(text)
    if _CJK.search(normal):
        letters = "".join(_WORD.findall(normal))
        return {letters[i:i + 2] for i in range(len(letters) - 1)} or {letters}
    return {w for w in _WORD.findall(normal) if len(w) >= 3 and w not in _STOP_EN} or set(_WORD.findall(normal))


def near_duplicates(texts: list[str], threshold: float = NEAR_DUPLICATE) -> list[tuple[int, int]]:
    """(i, j), i < j, for each two texts whose units (`_units`) overlap by `threshold` (Jaccard) or more."""
    units = [_units(t) for t in texts]
    return [(i, j) for i in range(len(units)) for j in range(i + 1, len(units))
            if len(units[i] & units[j]) / max(1, len(units[i] | units[j])) >= threshold]


# A word as a reader counts it: "couldn't", "Khan's" and "six-week" are one word each.
_COUNTED_WORD = re.compile(r"[^\W_]+(?:['’\-‐][^\W_]+)*", re.UNICODE)


def length_in_words(text: str) -> int:
    """Words for alphabetic scripts (joined by an apostrophe or hyphen, one word); each CJK
    character counts as one."""
    cjk = len(_CJK.findall(text))
    return cjk + len(_COUNTED_WORD.findall(_CJK.sub(" ", text)))
