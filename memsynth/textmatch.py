"""Does a text mention a name? Word overlap for alphabetic scripts, character pairs for CJK."""

from __future__ import annotations

import re
import unicodedata

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _normal(text: str) -> str:
    if text.isascii():  # NFKC leaves ASCII as it is
        return text.casefold()
    return unicodedata.normalize("NFKC", text).casefold()


def mentions_exactly(text: str, name: str) -> bool:
    """The whole name appears in the text (case- and width-insensitive)."""
    return _normal(name).strip() in _normal(text)


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


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])")


def sentences(text: str) -> list[str]:
    """The sentences of a text: split after . ! ? (then a space) and after 。！？."""
    return [s for s in (part.strip() for part in _SENTENCE_END.split(text.strip())) if len(s) > 1]
