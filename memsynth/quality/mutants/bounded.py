"""The mutators the check library's kinds need beyond the shared set (mutators.py): a text cut
short, questions added or dropped, dates and clock times past a window in each way they are
written, values out of order, repeats and rewordings, a detail told, a copied run, a person
named in the forms a check claims to catch. Each is built on a checklib path (`where`) and the
bounds a check was declared with, and makes only mutants that break them by its own reading."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.generation.checklib.paths import parse_path, resolve
from memsynth.quality.mutants import lexicon as lx
from memsynth.quality.mutants import text as tx
from memsynth.quality.mutants.base import Context, Mutant, Mutator, Path, _show, get, put
from memsynth.quality.mutants.wording import InsertPerson


def where(path: str, upto: int | None = None) -> Callable[[Any, Mapping[str, Any]], list[Path]]:
    """A checklib path (`turns[role=user].content`) as a mutator's `where`: the concrete paths
    it reaches in a JSON answer (`upto`: only its first segments)."""
    segments = parse_path(path)[:upto]

    def find(answer: Any, variables: Mapping[str, Any]) -> list[Path]:
        found: list[Path] = [()]
        for seg in segments:
            nxt: list[Path] = []
            for p in found:
                node = get(answer, p)
                if not isinstance(node, dict) or node.get(seg.name) is None:
                    continue
                child = node[seg.name]
                if not seg.each:
                    nxt.append((*p, seg.name))
                elif isinstance(child, list):
                    nxt += [(*p, seg.name, i) for i, item in enumerate(child)
                            if seg.key is None or (isinstance(item, dict) and str(item.get(seg.key)) == seg.value)]
            found = nxt
        return found

    find.__qualname__ = f"checklib:{path}:{upto}"  # the mutators seed from it (mutators._key)
    return find


def bound(value: Any) -> Callable[[Mapping[str, Any]], int | None] | None:
    if value is None:
        return None
    return lambda v: None if (r := resolve(value, v)) is None else int(r)


def _texts(answer: Any, at: Callable[..., list[Path]], ctx: Context) -> list[Path]:
    return [p for p in at(answer, ctx.variables) if isinstance(get(answer, p), str) and get(answer, p).strip()]


def _appended(text: str, language: str, sentence: str) -> str:
    body = text.strip()
    if not re.search(r"[.!?。！？…][\"”’')）」』]*$", body):
        body += "。" if language == "zh" else "."
    return tx.joined(language, [body, sentence])


# Mutators the shared set lacks -----------------------------------------------------------


@dataclass(frozen=True)
class Shorter(Mutator):
    """A text cut below `low` words (Chinese: characters; `characters`: non-space characters)."""

    where: Any
    low: Any
    characters: bool = False
    kind = "shorter"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        low = self.low(ctx.variables) if self.low else None
        if not low or low < 2:
            return
        for path in _texts(answer, self.where, ctx)[:2]:
            text = get(answer, path)
            if self.characters:
                new = "".join(text.split())[: low - 1]
                size = len(new)
            else:
                new = "".join(re.findall(r"[\u3400-\u9fff]", text))[: low - 1] if tx.is_zh(text) else \
                    " ".join(text.split()[: low - 1])
                size = tx.size(new)
            if new and new != text and size < low:
                yield Mutant(put(answer, path, new), "below_length", f"{_show(path)}: {size} long, at least {low}")


QUESTIONS = {"en": ("And what time works best for you?", "Have you tried it before?"),
             "zh": ("你觉得什么时候最合适？", "你以前试过吗？")}


@dataclass(frozen=True)
class Questions(Mutator):
    """Questions added past `high` (each a sentence ending in ? or ？), or the question marks
    made full stops below `low`."""

    where: Any
    low: Any = None
    high: Any = None
    kind = "questions"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        low = self.low(ctx.variables) if self.low else None
        high = self.high(ctx.variables) if self.high else None
        for path in _texts(answer, self.where, ctx)[:2]:
            text = get(answer, path)
            n = len(re.findall(r"[?？]+", text))
            if high is not None and n <= high:
                extra = [QUESTIONS[ctx.language][i % 2] for i in range(high + 1 - n)]
                yield Mutant(put(answer, path, _appended(text, ctx.language, tx.joined(ctx.language, extra))),
                             "add_question", f"{_show(path)}: {high + 1} questions, at most {high}")
            if low is not None and n >= low >= 1:
                flat = re.sub(r"[?？]+", lambda m: "。" if "？" in m.group(0) else ".", text)
                yield Mutant(put(answer, path, flat), "drop_question", f"{_show(path)}: no question, at least {low}")


def _date(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value).strip()[:10]) if re.fullmatch(
            r"\d{4}-\d{2}-\d{2}([T ].*)?", str(value).strip()) else None
    except ValueError:
        return None


def _written(day: dt.date, language: str) -> dict[str, str]:
    """A day as prose writes it with its year."""
    if language == "zh":
        return {"iso": day.isoformat(), "prose": f"{day.year}年{day.month}月{day.day}日"}
    return {"iso": day.isoformat(), "prose_us": f"{day.strftime('%B')} {day.day}, {day.year}",
            "prose": f"{day.day} {day.strftime('%B')} {day.year}"}


@dataclass(frozen=True)
class OutsideDates(Mutator):
    """A date past the window: a date field moved a day to three months past an end; prose
    given a sentence dated past one, in each way the date is written."""

    where: Any
    start: Any = None
    end: Any = None
    kind = "dates_within"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"dates/{self.where.__qualname__}")
        bounds = [(side, _date(resolve(b, ctx.variables))) for side, b in (("after", self.end), ("before", self.start))]
        paths = [p for p in self.where(answer, ctx.variables) if isinstance(get(answer, p), str)]
        fields = [p for p in paths if _date(get(answer, p))]
        prose = [p for p in paths if p not in fields and get(answer, p).strip()]
        for side, bound in bounds:
            if bound is None:
                continue
            day = bound + dt.timedelta(days=rng.randint(1, 90)) * (1 if side == "after" else -1)
            if fields:
                path = fields[-1] if side == "after" else fields[0]
                yield Mutant(put(answer, path, day.isoformat()), "move_date", f"{_show(path)} = {day}, {side} {bound}")
            if prose:
                path = rng.choice(prose)
                for form, said in _written(day, ctx.language).items():
                    sentence = tx.moment_sentence(ctx.language, said if ctx.language == "zh" else f"on {said}",
                                                  rng.choice(lx.EVENTS[ctx.language]))
                    yield Mutant(put(answer, path, _appended(get(answer, path), ctx.language, sentence)),
                                 f"prose_date:{form}", f"{_show(path)} + {said!r}, {side} {bound}")


def _clock(value: Any) -> int:
    hour, _, minute = str(value).partition(":")
    return int(hour) * 60 + int(minute or 0)


@dataclass(frozen=True)
class OutsideTimes(Mutator):
    """Prose given a clock time past the window (HH:MM bounds), in each way it is written:
    "23:15", "11:15 pm", "晚上十一点一刻"."""

    where: Any
    start: Any
    end: Any
    kind = "times_within"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        lo, hi = _clock(resolve(self.start, ctx.variables)), _clock(resolve(self.end, ctx.variables))
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        rng = ctx.rng(f"times/{self.where.__qualname__}")
        inside = (lambda t: lo <= t <= hi) if lo <= hi else (lambda t: t >= lo or t <= hi)
        # Outside by a quarter to two hours past either end, on the same day's clock.
        moments = [t % 1440 for t in (hi + 15, hi + 75, lo - 30, lo - 105)]
        for t in dict.fromkeys(m for m in moments if not inside(m)):
            moment = dt.datetime(2024, 1, 1, t // 60, t % 60)
            for form, clock in tx.clock_forms(moment, ctx.language).items():
                path = rng.choice(paths)
                sentence = tx.moment_sentence(ctx.language, clock if ctx.language == "zh" else f"at {clock}",
                                              rng.choice(lx.EVENTS[ctx.language]))
                yield Mutant(put(answer, path, _appended(get(answer, path), ctx.language, sentence)),
                             f"prose_time:clock_{form}", f"{_show(path)} + {clock!r}, outside {self.start}-{self.end}")


@dataclass(frozen=True)
class OutOfOrder(Mutator):
    """Two values in order swapped (with `strict`, one also made equal to the one before)."""

    where: Any
    strict: bool = False
    kind = "chronological"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = self.where(answer, ctx.variables)
        values = [get(answer, p) for p in paths]
        for i in range(1, len(values)):
            if values[i] != values[i - 1]:
                swapped = put(put(answer, paths[i], values[i - 1]), paths[i - 1], values[i])
                yield Mutant(swapped, "out_of_order", f"{_show(paths[i - 1])} and {_show(paths[i])} swapped")
                if self.strict:
                    yield Mutant(put(answer, paths[i], values[i - 1]), "same_time",
                                 f"{_show(paths[i])} = {_show(paths[i - 1])}")
                return


@dataclass(frozen=True)
class Repeat(Mutator):
    """An item made a repeat of another, only its case and spacing changed."""

    where: Any
    kind = "repeat"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = _texts(answer, self.where, ctx)
        if len(paths) >= 2:
            rng = ctx.rng(f"repeat/{self.where.__qualname__}")
            i, j = rng.sample(range(len(paths)), 2)
            twin = "  ".join(get(answer, paths[i]).upper().split())
            yield Mutant(put(answer, paths[j], twin), "exact_duplicate", f"{_show(paths[j])} repeats {_show(paths[i])}")


def _units(text: str) -> set[str]:
    """Words, or CJK character pairs: what a reader sees two texts share."""
    text = text.lower()
    cjk = re.findall(r"[\u3400-\u9fff]", text)
    if cjk:
        return {a + b for a, b in zip(cjk, cjk[1:])}
    return set(re.findall(r"[a-z0-9']+", text))


def _share(a: str, b: str) -> float:
    x, y = _units(a), _units(b)
    return len(x & y) / max(1, len(x | y))


@dataclass(frozen=True)
class Reworded(Mutator):
    """An item replaced by another reworded (synonyms, clauses reordered, a restating prefix)
    that still shares `near` of its words or character pairs, by the mutators' own reading: the
    duplicate the check was declared to catch. A rewording sharing fewer is a meaning-level
    duplicate no word count sees (judge work), and is not made here."""

    where: Any
    near: float
    tries: int = 8
    kind = "duplicate"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = _texts(answer, self.where, ctx)
        if len(paths) < 2:
            return
        rng = ctx.rng(f"reworded/{self.where.__qualname__}")
        made = 0
        for _ in range(self.tries):
            i, j = rng.sample(range(len(paths)), 2)
            source = get(answer, paths[i])
            twin = tx.paraphrase(source, ctx.language, rng)
            if twin.strip().lower() != source.strip().lower() and _share(twin, source) >= self.near + 0.05:
                yield Mutant(put(answer, paths[j], twin), "paraphrase_duplicate",
                             f"{_show(paths[j])} rewords {_show(paths[i])}")
                made += 1
                if made == 2:
                    return


@dataclass(frozen=True)
class Tells(Mutator):
    """A sentence telling a detail: as written, and reworded (synonyms, a restating prefix)."""

    where: Any
    details: Any
    kind = "tells"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        rng = ctx.rng(f"tells/{self.where.__qualname__}")
        for detail in _strings(resolve(self.details, ctx.variables)):
            path = rng.choice(paths)
            for label, said in (("detail_verbatim", detail), ("detail_reworded", tx.paraphrase(detail, ctx.language, rng))):
                sentence = said.strip().rstrip(".。") + ("。" if ctx.language == "zh" else ".")
                yield Mutant(put(answer, path, _appended(get(answer, path), ctx.language, sentence)), label,
                             f"{_show(path)} tells {detail[:40]!r}")


@dataclass(frozen=True)
class Copied(Mutator):
    """A verbatim run of `longest` + 1 to + 5 words (characters in Chinese) of a source copied in."""

    where: Any
    source: Any
    longest: Any
    kind = "copied"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = _texts(answer, self.where, ctx)
        most = int(resolve(self.longest, ctx.variables))
        if not paths:
            return
        rng = ctx.rng(f"copied/{self.where.__qualname__}")
        for source in _strings(resolve(self.source, ctx.variables)):
            units = re.findall(r"[\u3400-\u9fff]", source) if tx.is_zh(source) else source.split()
            if len(units) <= most:
                continue
            n = min(len(units), most + rng.randint(1, 5))
            start = rng.randint(0, len(units) - n)
            run = ("" if tx.is_zh(source) else " ").join(units[start:start + n]).strip(" ,.;:")
            path = rng.choice(paths)
            sentence = run + ("。" if ctx.language == "zh" else ".")
            yield Mutant(put(answer, path, _appended(get(answer, path), ctx.language, sentence)), "copy_run",
                         f"{_show(path)} copies {n} in a row of {source[:30]!r}")


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [s for item in value for s in _strings(item)]
    return [] if value is None else [str(value)]


def _people(people: Any) -> Callable[[Mapping[str, Any], str], list[tuple[str, str]]]:
    def found(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
        return [(name, "") for name in _strings(resolve(people, v))]
    return found


@dataclass(frozen=True)
class Named(Mutator):
    """A person named in the forms the check claims to catch: with partial names, every form
    (full name, surname + title, given name); without, the whole name as written and in
    another case or width."""

    where: Any
    people: Any
    partial: bool
    kind = "insert_person"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if self.partial:
            yield from InsertPerson(self.where, _people(self.people))(answer, ctx)
            return
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        rng = ctx.rng(f"named/{self.where.__qualname__}")
        for name in _strings(resolve(self.people, ctx.variables)):
            wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in name)
            for form, said in (("full_name", name), ("other_case", name.upper()), ("full_width", wide)):
                if form != "full_name" and said == name:
                    continue
                path = rng.choice(paths)
                new = tx.joined(ctx.language, [get(answer, path).strip(), tx.mention(ctx.language, said, "user")])
                yield Mutant(put(answer, path, new), f"insert_person:{form}", f"{_show(path)} names {said!r}")
