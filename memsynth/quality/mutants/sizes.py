"""Mutators of size: sentences added past a bound or dropped below it, a text 10-30 % past
its length, a list's items past its bounds, one required item dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants import text as tx
from memsynth.quality.mutants.base import (
    Bound,
    Context,
    Mutant,
    Mutator,
    Where,
    _bound,
    _key,
    _pick,
    _show,
    _texts,
    get,
    locate,
    put,
)


@dataclass(frozen=True)
class Sentences(Mutator):
    """Add sentences past `high`, or drop them below `low` (with `clauses`, a ；-joined clause
    counts as a statement, as the rule reads it)."""

    where: Where
    low: Bound = None
    high: Bound = None
    clauses: bool = False
    places: int = 1  # how many of the located texts to mutate, each on its own
    kind = "sentences"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        low, high = _bound(self.low, ctx.variables), _bound(self.high, ctx.variables)
        rng = ctx.rng(f"sentences/{_key(self.where)}")
        for path in _pick(_texts(answer, self.where, ctx), rng, self.places):
            text = get(answer, path)
            parts = tx.statements(text) if self.clauses else tx.split_sentences(text)
            count = tx.statements if self.clauses else tx.split_sentences
            if high is not None and len(parts) <= high:
                new = tx.add_sentences(text, ctx.language, high + 1 - len(parts), rng)
                if len(count(new)) > high:
                    yield Mutant(put(answer, path, new), "add_sentence",
                                 f"{_show(path)}: {high + 1} sentences, at most {high}")
            if low is not None and low >= 2 and len(parts) >= low:
                kept = parts[: low - 1]
                new = tx.joined(ctx.language, kept)
                if len(count(new)) < low:
                    yield Mutant(put(answer, path, new), "drop_sentence",
                                 f"{_show(path)}: {low - 1} sentences, at least {low}")


@dataclass(frozen=True)
class Longer(Mutator):
    """A text 10-30 % longer than its limit (words; characters in Chinese)."""

    where: Where
    limit: Bound
    places: int = 1
    kind = "longer"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        limit = _bound(self.limit, ctx.variables)
        if limit is None:
            return
        rng = ctx.rng(f"longer/{_key(self.where)}")
        for path in _pick(_texts(answer, self.where, ctx), rng, self.places):
            target = tx.exceeding(limit, rng)
            new = tx.stretch(get(answer, path), ctx.language, target)
            if tx.size(new) > limit:
                yield Mutant(put(answer, path, new), "exceed_length",
                             f"{_show(path)}: {tx.size(new)} words, at most {limit}")


@dataclass(frozen=True)
class Count(Mutator):
    """A list with items past `high` (copies of its own) or dropped below `low`."""

    where: Where
    low: Bound = None
    high: Bound = None
    kind = "count"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        low, high = _bound(self.low, ctx.variables), _bound(self.high, ctx.variables)
        rng = ctx.rng(f"count/{_key(self.where)}")
        for path in locate(answer, self.where, ctx.variables)[:2]:
            items = get(answer, path)
            if not isinstance(items, list) or not items:
                continue
            if high is not None and len(items) <= high:
                extra = [copy.deepcopy(items[rng.randrange(len(items))]) for _ in range(high + 1 - len(items))]
                yield Mutant(put(answer, path, items + extra), "add_item", f"{_show(path)}: {high + 1} items, "
                             f"at most {high}")
            if low is not None and low >= 1 and len(items) >= low:
                keep = sorted(rng.sample(range(len(items)), low - 1))
                yield Mutant(put(answer, path, [items[i] for i in keep]), "drop_item",
                             f"{_show(path)}: {low - 1} items, at least {low}")



@dataclass(frozen=True)
class DropOne(Mutator):
    """One item of a list dropped, where every item is required (a candidate merged, a memory
    labelled)."""

    where: Where
    kind = "drop_one"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"drop-one/{_key(self.where)}")
        for path in locate(answer, self.where, ctx.variables)[:1]:
            items = get(answer, path)
            if isinstance(items, list) and items:
                k = rng.randrange(len(items))
                yield Mutant(put(answer, path, items[:k] + items[k + 1:]), "drop_item", f"{_show((*path, k))} dropped")


@dataclass(frozen=True)
class Merged(Mutator):
    """Two items of a list written as one (two likes in one preference memory): the first text
    field (a name) joined with "、" / ", ", the others with "；另外，" / "; and ", the second item
    dropped."""

    where: Where
    fields: tuple[str, ...]
    kind = "merge_items"

    @staticmethod
    def _joined(a: str, b: str, first: bool, language: str) -> str:
        if language == "zh":
            return f"{a.rstrip('。')}{'、' if first else '；另外，'}{b}"
        return f"{a.rstrip('.')}{', ' if first else '; and '}{b[:1].lower()}{b[1:]}"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"merged/{_key(self.where)}")
        for path in locate(answer, self.where, ctx.variables)[:1]:
            items = get(answer, path)
            if not isinstance(items, list) or len(items) < 2:
                continue
            for i, j in sorted({tuple(sorted(rng.sample(range(len(items)), 2))) for _ in range(4)})[:2]:
                one = copy.deepcopy(items[i])
                for key in self.fields:
                    one[key] = self._joined(str(items[i].get(key, "")), str(items[j].get(key, "")),
                                            key == self.fields[0], ctx.language)
                merged = [one if k == i else item for k, item in enumerate(items) if k != j]
                yield Mutant(put(answer, path, merged), "merge_items", f"{_show((*path, j))} merged into {_show((*path, i))}")
