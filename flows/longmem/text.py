"""Does a text name a term? Whole words in English (case-insensitive), the characters in Chinese."""

from __future__ import annotations

import re
from collections.abc import Iterable

from memsynth.core.textmatch import normal_text

_CJK = re.compile(r"[\u3400-\u9fff]")


def names(text: str, term: str) -> bool:
    text, term = normal_text(text), normal_text(term).strip()
    if not term:
        return False
    if _CJK.search(term):
        return term in text
    return re.search(rf"(?<![^\W_]){re.escape(term)}(?![^\W_])", text) is not None


def named(text: str, terms: Iterable[str]) -> list[str]:
    """The terms the text names."""
    return [t for t in terms if names(text, t)]
