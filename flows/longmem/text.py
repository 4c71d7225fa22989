"""Does a text name a term? Whole words in English (case-insensitive), the characters in Chinese:
the check library's reading (`memsynth.core.textmatch.mentions_term`, behind `lib.no_mention`),
so the gold checks read a session as the stage checks that wrote it did."""

from __future__ import annotations

from collections.abc import Iterable

from memsynth.core.textmatch import mentions_term as names


def named(text: str, terms: Iterable[str]) -> list[str]:
    """The terms the text names."""
    return [t for t in terms if names(text, t)]


__all__ = ["named", "names"]
