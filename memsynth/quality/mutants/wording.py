"""Mutators of wording: a person named, an item reworded from another, two solutions joined as
one, a refusal softened, person or voice switched, text replaced or inserted, a quote reworded.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants import lexicon as lx
from memsynth.quality.mutants import text as tx
from memsynth.quality.mutants.base import (
    Context,
    Mutant,
    Mutator,
    Path,
    People,
    Swaps,
    Texts,
    Where,
    _key,
    _pick,
    _show,
    _texts,
    get,
    locate,
    put,
)


@dataclass(frozen=True)
class InsertPerson(Mutator):
    """A sentence naming a person (`people`: (name, relation) pairs from the variables), one
    mutant per form: full name, surname + title, given name, kinship term."""

    where: Where
    people: People
    voice: str = "user"  # user, ai, narrator: who speaks the inserted sentence
    kind = "insert_person"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"person/{_key(self.where)}/{self.voice}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        seen: set[str] = set()
        for name, relation in self.people(ctx.variables, ctx.language):
            for form, said in tx.person_forms(name, ctx.language, relation).items():
                if said in seen:
                    continue
                seen.add(said)
                path = rng.choice(paths)
                new = tx.joined(ctx.language, [get(answer, path).strip(), tx.mention(ctx.language, said, self.voice)])
                yield Mutant(put(answer, path, new), f"insert_person:{form.removesuffix('_other')}",
                             f"{_show(path)} names {said!r} ({name})")



@dataclass(frozen=True)
class Duplicate(Mutator):
    """An item replaced by a paraphrase of another one of the same list (synonyms from the
    hand-made tables, clauses reordered, a restating prefix); `keys` are the fields of a dict
    item that are reworded, the others copied."""

    where: Where
    keys: tuple[str, ...] = ()
    times: int = 2
    kind = "duplicate"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"duplicate/{_key(self.where)}")
        for path in locate(answer, self.where, ctx.variables)[:2]:
            items = get(answer, path)
            if not isinstance(items, list) or len(items) < 2:
                continue
            for _ in range(self.times):
                i, j = rng.sample(range(len(items)), 2)
                source = items[i]
                if isinstance(source, str):
                    twin: Any = tx.paraphrase(source, ctx.language, rng)
                elif isinstance(source, dict) and self.keys:
                    twin = {k: (tx.paraphrase(v, ctx.language, rng) if k in self.keys and isinstance(v, str) else
                                copy.deepcopy(v)) for k, v in source.items()}
                else:
                    continue
                yield Mutant(put(answer, (*path, j), twin), "paraphrase_duplicate",
                             f"{_show((*path, j))} rewords {_show((*path, i))}")


@dataclass(frozen=True)
class PairDuplicate(Mutator):
    """The second of two paths made a paraphrase of the first (two needs of one topic, say):
    `pairs` gives (original, copy) paths."""

    pairs: Callable[[Any, Mapping[str, Any]], list[tuple[Path, Path]]]
    kind = "duplicate"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng("pair-duplicate")
        for original, twin in self.pairs(answer, ctx.variables):
            new = tx.paraphrase(get(answer, original), ctx.language, rng)
            yield Mutant(put(answer, twin, new), "paraphrase_duplicate", f"{_show(twin)} rewords {_show(original)}")


@dataclass(frozen=True)
class Join(Mutator):
    """Two solutions offered as one: "…, or alternatively, …", "…；也可以…"."""

    where: Where
    other: Callable[[Any, Mapping[str, Any], str], list[str]] | None = None
    kind = "join"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"join/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        others = (self.other(answer, ctx.variables, ctx.language) if self.other else []) or list(
            lx.OTHER_SOLUTIONS[ctx.language])
        for joiner in lx.JOINERS[ctx.language]:
            path = rng.choice(paths)
            other = rng.choice(others).strip().rstrip(".。")
            if ctx.language == "en":
                other = other[:1].lower() + other[1:]
            new = tx.join_alternative(get(answer, path), ctx.language, joiner, other)
            yield Mutant(put(answer, path, new), "join_alternatives", f"{_show(path)} joins {joiner.strip()!r}")


@dataclass(frozen=True)
class Soften(Mutator):
    """A rejection that agrees first ("I see the logic, but", "我理解你的想法，不过")."""

    where: Where
    kind = "soften"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"soften/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        for softener in lx.SOFTENERS[ctx.language]:
            path = rng.choice(paths)
            new = tx.soften(get(answer, path), ctx.language, softener)
            yield Mutant(put(answer, path, new), "soften_refusal", f"{_show(path)} opens {softener.strip()!r}")



@dataclass(frozen=True)
class Voice(Mutator):
    """Person or voice switched: `swaps` gives (label, {old: new}) word tables from the
    answer and the variables (the user named where the prompt says "the user"; a named fact in
    "I" or "she")."""

    where: Where
    swaps: Swaps
    places: int = 1
    kind = "voice"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"voice/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        for label, table in self.swaps(answer, ctx.variables, ctx.language):
            if not table:
                continue
            changed = [p for p in paths if tx.replace_words(get(answer, p), table) != get(answer, p)]
            for path in _pick(changed, rng, self.places):
                new = tx.replace_words(get(answer, path), table)
                yield Mutant(put(answer, path, new), f"switch_person:{label}", f"{_show(path)}: {label}")



@dataclass(frozen=True)
class Replace(Mutator):
    """The first match of `pattern` (per language) replaced by each of `options` (per
    language): an absolute date made "yesterday", a speaker made someone else."""

    where: Where
    pattern: Mapping[str, str]
    options: Mapping[str, Sequence[str]]
    label: str = "replace"
    places: int = 1
    kind = "replace"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"replace/{_key(self.where)}/{self.label}")
        pattern = re.compile(self.pattern[ctx.language])
        paths = [p for p in _texts(answer, self.where, ctx) if pattern.search(get(answer, p))]
        for path in _pick(paths, rng, self.places):
            for option in self.options[ctx.language]:
                new = pattern.sub(option, get(answer, path), count=1)
                yield Mutant(put(answer, path, new), self.label, f"{_show(path)}: {option!r}")


@dataclass(frozen=True)
class InsertText(Mutator):
    """Text appended to a field: a memory quoted into a query, a place no session names."""

    where: Where
    texts: Texts
    label: str = "insert_text"
    kind = "insert_text"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"insert/{_key(self.where)}/{self.label}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        for text in self.texts(ctx.variables, ctx.language):
            path = rng.choice(paths)
            body = get(answer, path).strip()
            new = f"{body}{text}" if ctx.language == "zh" else f"{body} {text}"
            yield Mutant(put(answer, path, new), self.label, f"{_show(path)} + {text[:40]!r}")


@dataclass(frozen=True)
class Reword(Mutator):
    """A text reworded (a quote that no longer quotes)."""

    where: Where
    places: int = 2
    kind = "reword"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"reword/{_key(self.where)}")
        for path in _pick(_texts(answer, self.where, ctx), rng, self.places):
            new = tx.paraphrase(get(answer, path), ctx.language, rng)
            yield Mutant(put(answer, path, new), "reword", f"{_show(path)} reworded")


@dataclass(frozen=True)
class Listed(Mutator):
    """One item asked for, a list given: the text and two other solutions written as a numbered
    list, as labelled options ("方案一：…"), counted ("一是…二是…", "first, … second, …"), or as
    three ；-joined clauses."""

    where: Where
    kind = "listed"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"listed/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        lang = ctx.language
        for k, markers in enumerate(lx.LIST_FORMS[lang]):
            path = rng.choice(paths)
            first = get(answer, path).strip().rstrip(".。")
            others = rng.sample(list(lx.OTHER_SOLUTIONS[lang]), 2)
            items = [first] + [o if lang == "zh" else o[:1].lower() + o[1:] for o in others]
            if lang == "en" and markers[0] in ("", "First, "):
                items[0] = items[0][:1].lower() + items[0][1:] if markers[0] else items[0]
            new = "".join(m + item for m, item in zip(markers, items)) + ("。" if lang == "zh" else ".")
            yield Mutant(put(answer, path, new), f"listed:{k}", f"{_show(path)} as a list of 3")
