"""Mutators of time: a date or minute field moved past a bound, and prose dated past an end
in each way it is written ("17:15", "5:30 pm", "下午五点半", "16 October", "10月16日"), and an ISO
day written in words.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants import lexicon as lx
from memsynth.quality.mutants import text as tx
from memsynth.quality.mutants.base import (
    Context,
    Mutant,
    Mutator,
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
    "下午五点半", "16 October", "10月16日"). With `at_end`, the end's own clock time too: for a
    span that ends when something else begins (what starts then is not before the end)."""

    where: Where
    end: Callable[[Mapping[str, Any]], str]
    at_end: bool = False
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
        deltas = (dt.timedelta(minutes=15), dt.timedelta(minutes=30), dt.timedelta(hours=3))
        for delta in ((dt.timedelta(0), *deltas) if self.at_end else deltas):
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


# Days said relative to another, and one named weekday, as a text dates a fact with them.
_RELATIVE_DAYS = {"zh": ("昨天", "上周三"), "en": ("yesterday", "last Wednesday")}


@dataclass(frozen=True)
class Dated(Mutator):
    """A text that must carry no date given one: a day of the span (`day`, a function of the
    variables giving "YYYY-MM-DD…") put before it in each way prose writes it ("2024-11-07",
    "11月7日", "7 November", "November 7"), and a relative day ("昨天", "last Wednesday")."""

    where: Where
    day: Callable[[Mapping[str, Any]], str]
    places: int = 1
    kind = "dated"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"dated/{_key(self.where)}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        lang = ctx.language
        day = dt.date.fromisoformat(str(self.day(ctx.variables))[:10])
        whens = [(f"date_{form}", said) for form, said in tx.date_forms(day, lang).items()]
        whens += [("relative", said) for said in _RELATIVE_DAYS[lang]]
        for path in rng.sample(paths, min(self.places, len(paths))):
            body = get(answer, path).strip()
            for form, when in whens:
                new = f"{when}，{body}" if lang == "zh" else f"On {when}, {body[:1].lower()}{body[1:]}" \
                    if form.startswith("date") else f"{when[:1].upper()}{when[1:]}, {body[:1].lower()}{body[1:]}"
                yield Mutant(put(answer, path, new), f"dated:{form}", f"{_show(path)}: {when!r} before it")


@dataclass(frozen=True)
class WrongWeekday(Mutator):
    """A day of the span (`day`, a function of the variables giving "YYYY-MM-DD…") put before a
    text with a weekday it does not fall on ("11月7日周日" when the 7th is a Thursday)."""

    where: Where
    day: Callable[[Mapping[str, Any]], str]
    kind = "wrong_weekday"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        day = dt.date.fromisoformat(str(self.day(ctx.variables))[:10])
        wrong = (day.weekday() + 3) % 7
        path = ctx.rng(f"weekday/{_key(self.where)}").choice(paths)
        body = get(answer, path).strip()
        if ctx.language == "zh":
            new = f"{day.month}月{day.day}日周{'一二三四五六日'[wrong]}，{body}"
        else:
            weekday = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")[wrong]
            new = f"On {weekday} {day.day} {day:%B}, {body[:1].lower()}{body[1:]}"
        yield Mutant(put(answer, path, new), "wrong_weekday", f"{_show(path)}: {day} said as a {wrong}th weekday")


_ISO_DAY = re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)")


def _in_words(day: dt.date, language: str) -> dict[str, str]:
    """A day as prose writes it, with its year and without."""
    if language == "zh":
        return {"zh_full": f"{day.year}年{day.month}月{day.day}日", "zh_short": f"{day.month}月{day.day}号"}
    month = day.strftime("%B")
    return {"us": f"{month} {day.day}, {day.year}", "uk": f"{day.day} {month} {day.year}",
            "ordinal": f"{month} {day.day}th"}


@dataclass(frozen=True)
class DayInWords(Mutator):
    """A day a text writes YYYY-MM-DD rewritten as prose writes it ("March 13, 2024", "13 March
    2024", 2024年3月13日, 3月13号), where the rule asks for the ISO form."""

    where: Where
    places: int = 2
    kind = "day_in_words"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"day_in_words/{_key(self.where)}")
        paths = [p for p in _texts(answer, self.where, ctx) if _ISO_DAY.search(get(answer, p))]
        for path in _pick(paths, rng, self.places):
            text = get(answer, path)
            m = _ISO_DAY.search(text)
            try:
                day = dt.date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
            except ValueError:
                continue
            for form, said in _in_words(day, ctx.language).items():
                new = text[:m.start()] + said + text[m.end():]
                yield Mutant(put(answer, path, new), f"day_in_words:{form}", f"{_show(path)}: {said!r}")
