"""Mutators: each turns one good answer into answers that break one rule, and says which.

A mutator is declared with where it applies (a path into the answer, `"turns[*].content"`,
or a function of the answer and the variables giving paths) and the bound it breaks (a
number, or a function of the variables). It yields only answers that break the rule by its
own reading (text.py): a list already at its maximum gets one item more, not "one more"
from below it. A recipe aims mutators at its rules with `Aim` (flows/<recipe>/mutants.py).
"""

from __future__ import annotations

import copy
import datetime as dt
import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memsynth.quality.mutants import lexicon as lx
from memsynth.quality.mutants import text as tx

Path = tuple[str | int, ...]
# The rule of an aim derived from a library check no rule of the recipe's table names
# (memsynth.quality.mutants.library): killed by that check alone.
CHECK_RULE = "check:"
Where = str | Callable[[Any, Mapping[str, Any]], list[Path]]
Bound = int | Callable[[Mapping[str, Any]], int | None] | None


@dataclass(frozen=True)
class Context:
    """What a mutator knows besides the answer: its stage, language, variables and schema."""

    recipe: str
    stage: str
    language: str
    variables: Mapping[str, Any]
    answer_id: str = ""
    schema: Mapping[str, Any] = field(default_factory=dict)  # the stage's output JSON schema

    def rng(self, salt: str) -> random.Random:
        """Seeded by the answer and the mutator: the same mutants on every run."""
        return random.Random(f"{self.recipe}/{self.stage}/{self.answer_id}/{salt}")


@dataclass(frozen=True)
class Mutant:
    answer: Any
    mutator: str  # the mutator's kind: "add_sentence", "insert_person:given_name", …
    note: str  # what changed, in a line


class Mutator:
    """Base: `kind` names it in the table; `__call__` yields mutants of one answer."""

    kind = "mutator"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        raise NotImplementedError


@dataclass(frozen=True)
class Aim:
    """A mutator aimed at a rule (an id of the recipe's rules table) on some stages."""

    rule: str
    stages: tuple[str, ...]
    mutator: Mutator


# Paths -----------------------------------------------------------------------------------


def parse_path(spec: str) -> list[str | int | None]:
    """`"turns[*].content"` → ["turns", None, "content"] (None: every item)."""
    out: list[str | int | None] = []
    for part in re.findall(r"[^.\[\]]+|\[\*\]|\[-?\d+\]", spec):
        out.append(None if part == "[*]" else int(part[1:-1]) if part.startswith("[") else part)
    return out


def locate(answer: Any, where: Where, variables: Mapping[str, Any]) -> list[Path]:
    """Every concrete path `where` names in `answer` (those that exist)."""
    if callable(where):
        return list(where(answer, variables))
    paths: list[Path] = [()]
    for step in parse_path(where):
        nxt: list[Path] = []
        for p in paths:
            node = get(answer, p)
            if step is None and isinstance(node, list):
                nxt += [(*p, i) for i in range(len(node))]
            elif isinstance(step, int) and isinstance(node, list) and -len(node) <= step < len(node):
                nxt.append((*p, step % len(node)))
            elif isinstance(step, str) and isinstance(node, dict) and step in node:
                nxt.append((*p, step))
        paths = nxt
    return paths


def get(answer: Any, path: Path) -> Any:
    for step in path:
        answer = answer[step]
    return answer


def put(answer: Any, path: Path, value: Any) -> Any:
    """A deep copy of `answer` with `value` at `path`."""
    out = copy.deepcopy(answer)
    if not path:
        return value
    get(out, path[:-1])[path[-1]] = value
    return out


def _bound(bound: Bound, v: Mapping[str, Any]) -> int | None:
    return bound(v) if callable(bound) else bound


def _texts(answer: Any, where: Where, ctx: Context) -> list[Path]:
    return [p for p in locate(answer, where, ctx.variables) if isinstance(get(answer, p), str) and get(answer, p).strip()]


def _pick(paths: Sequence[Path], rng: random.Random, n: int = 1) -> list[Path]:
    return rng.sample(list(paths), min(n, len(paths)))


# Mutators --------------------------------------------------------------------------------


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
class Moved(Mutator):
    """A date (or minute) field moved past a bound: `after` (the latest allowed) or `before`
    (the earliest), each a function of the variables giving the bound in `fmt`."""

    where: Where
    after: Callable[[Mapping[str, Any]], str | None] | None = None
    before: Callable[[Mapping[str, Any]], str | None] | None = None
    fmt: str = "%Y-%m-%d"
    kind = "move_date"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"moved/{_key(self.where)}")
        paths = [p for p in locate(answer, self.where, ctx.variables) if isinstance(get(answer, p), str)]
        if not paths:
            return
        minutes = "%H" in self.fmt
        step = dt.timedelta(minutes=rng.randint(5, 180)) if minutes else dt.timedelta(days=rng.randint(1, 90))
        for side, bound_of, path, sign in (("after", self.after, paths[-1], 1), ("before", self.before, paths[0], -1)):
            raw = bound_of(ctx.variables) if bound_of else None
            if not raw:
                continue
            moved = dt.datetime.strptime(raw, self.fmt) + sign * step
            value = moved.strftime(self.fmt)
            yield Mutant(put(answer, path, value), "move_date", f"{_show(path)} = {value}, {side} {raw}")


@dataclass(frozen=True)
class ProseMoment(Mutator):
    """Prose that runs past the end: a sentence dated after `end` (a function of the variables
    giving "YYYY-MM-DD HH:MM"), one mutant per way of writing it ("17:15", "5:30 pm",
    "下午五点半", "16 October", "10月16日")."""

    where: Where
    end: Callable[[Mapping[str, Any]], str]
    kind = "prose_time"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"prose/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        path = paths[-1]
        end = dt.datetime.strptime(self.end(ctx.variables), "%Y-%m-%d %H:%M")
        lang = ctx.language
        moments: list[tuple[str, str]] = []
        for delta in (dt.timedelta(minutes=15), dt.timedelta(minutes=30), dt.timedelta(hours=3)):
            later = end + delta
            if later.date() != end.date():
                continue
            day = tx.date_forms(later.date(), lang)["prose"]
            for form, clock in tx.clock_forms(later, lang).items():
                moments.append((f"clock_{form}", f"{day}{clock}" if lang == "zh" else f"at {clock} on {day}"))
        next_day = end.date() + dt.timedelta(days=rng.randint(1, 3))
        for form, day in tx.date_forms(next_day, lang).items():
            moments.append((f"date_{form}", day if lang == "zh" else f"on {day}"))
        seen: set[str] = set()
        for form, when in moments:
            if when in seen:
                continue
            seen.add(when)
            sentence = tx.moment_sentence(lang, when, rng.choice(lx.EVENTS[lang]))
            new = tx.joined(lang, [get(answer, path).strip(), sentence])
            yield Mutant(put(answer, path, new), f"prose_time:{form}", f"{_show(path)} + {sentence!r}, after {end}")


People = Callable[[Mapping[str, Any], str], list[tuple[str, str]]]


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


Swaps = Callable[[Any, Mapping[str, Any], str], list[tuple[str, dict[str, str]]]]


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


Texts = Callable[[Mapping[str, Any], str], Sequence[str]]


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
class Fields(Mutator):
    """A required field dropped (each top-level one, and one of a list item), or a field the
    schema does not have invented."""

    kind = "fields"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if not isinstance(answer, dict):
            return
        required = set(ctx.schema.get("required", []))
        for key in answer:
            if key in required:
                out = copy.deepcopy(answer)
                del out[key]
                yield Mutant(out, "drop_field", f"{key} dropped")
        for key, value in answer.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                inner = _item_required(ctx.schema, key)
                for k in value[0]:
                    if k in inner:
                        out = copy.deepcopy(answer)
                        del out[key][0][k]
                        yield Mutant(out, "drop_field", f"{key}[0].{k} dropped")
                        break
                break
        invented = "notes" if "notes" not in answer else "remarks"
        yield Mutant({**copy.deepcopy(answer), invented: "added by the model"}, "invent_field", f"{invented} invented")


def _item_required(schema: Mapping[str, Any], key: str) -> set[str]:
    prop = schema.get("properties", {}).get(key, {})
    ref = prop.get("items", {}).get("$ref", "")
    target = schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], prop.get("items", {}))
    return set(target.get("required", []))


def _key(where: Where) -> str:
    """A stable name for `where` (a function's repr holds its address, which varies by run)."""
    return where if isinstance(where, str) else f"{where.__module__}.{where.__qualname__}"


def _show(path: Path) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path).lstrip(".") or "answer"


@dataclass(frozen=True)
class Set(Mutator):
    """A field set to `value` where `when` (of the answer) says that breaks the rule: a judge's
    flag turned against a high score, a score off the scale."""

    where: Where
    value: Any
    label: str = "set"
    when: Callable[[Any, Mapping[str, Any]], bool] | None = None
    kind = "set"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if self.when is not None and not self.when(answer, ctx.variables):
            return
        for path in locate(answer, self.where, ctx.variables)[:1]:
            value = self.value(ctx.variables) if callable(self.value) else self.value
            if get(answer, path) != value:
                yield Mutant(put(answer, path, value), self.label, f"{_show(path)} = {value!r}")
