"""Mutants of how a list's items are spread over a listed field's values: the kinds grouped
(all of one, then all of the other) or unbalanced (one kind cut to a single item). Items keep
their places, dates and texts; only the field's values move, so no other rule is broken."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants.base import Context, Mutant, Mutator, put


def _values(answer: Any, items: str, key: str) -> list[Any] | None:
    listed = answer.get(items) if isinstance(answer, dict) else None
    if not isinstance(listed, list) or not all(isinstance(x, dict) and key in x for x in listed):
        return None
    return [x[key] for x in listed]


@dataclass(frozen=True)
class Grouped(Mutator):
    """The kinds of `items[*].key` grouped: the same counts, the rarer kind all at the end (and,
    as a second mutant, all at the start)."""

    items: str
    key: str
    kind = "grouped"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        values = _values(answer, self.items, self.key)
        counts = Counter(values or ())
        if len(counts) != 2:
            return
        (common, n_common), (rare, n_rare) = counts.most_common()
        for label, order in (("at_end", [common] * n_common + [rare] * n_rare),
                             ("at_start", [rare] * n_rare + [common] * n_common)):
            if order != values:
                new = answer
                for i, value in enumerate(order):
                    new = put(new, (self.items, i, self.key), value)
                yield Mutant(new, f"grouped:{label}", f"{self.items}: every {rare!r} {label.replace('_', ' ')}")


@dataclass(frozen=True)
class Unbalanced(Mutator):
    """The rarer kind of `items[*].key` cut to one item (the others given the common kind)."""

    items: str
    key: str
    kind = "unbalanced"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        values = _values(answer, self.items, self.key)
        counts = Counter(values or ())
        if len(counts) != 2 or len(values or ()) < 4:
            return
        (common, _), (rare, n_rare) = counts.most_common()
        if n_rare < 2:
            return
        new, kept = answer, False
        for i, value in enumerate(values or ()):
            if value == rare:
                if kept:
                    new = put(new, (self.items, i, self.key), common)
                kept = True
        yield Mutant(new, "unbalanced", f"{self.items}: one {rare!r} of {len(values or ())}")
