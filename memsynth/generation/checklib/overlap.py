"""What a text shares with others: repeats and near-duplicates among an answer's items, named
people and details it must not give away, terms it must not mention, and stretches copied
from a source.

Texts are compared as `memsynth.core.textmatch` compares them (NFKC, case- and width-
insensitive, curly quotes as straight; Chinese by characters, other scripts by words).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel

from memsynth.core.textmatch import (
    NEAR_DUPLICATE,
    mentions,
    mentions_exactly,
    mentions_term,
    near_duplicates,
    normal_text,
    refers_to,
    shared_run,
)
from memsynth.generation.checklib.paths import Bound, LibraryCheck, Var, make, resolve, select
from memsynth.generation.stage import say


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def distinct(path: str, *, near: float | None = NEAR_DUPLICATE, name: str | None = None) -> LibraryCheck:
    """No text at `path` repeats another (case, width and spacing ignored) or, with `near`,
    says the same in other words (that share, Jaccard, of their words or CJK character pairs)."""
    if near is not None and not 0 < near <= 1:
        raise ValueError(f"distinct({path!r}): near is a share in (0, 1], not {near!r}")

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        found = [(label, value) for label, value in select(out, path) if isinstance(value, str)]
        seen: dict[str, str] = {}
        repeated = False
        for label, value in found:
            key = " ".join(normal_text(value).split())
            if key in seen:
                repeated = True
                yield say(v, f"{label} {_short(value)!r} repeats {seen[key]}; every one must differ",
                          f"{label}“{_short(value)}”与 {seen[key]} 重复；每一项都要不同")
            else:
                seen[key] = label
        if near is None or repeated:  # exact repeats are said above; their near twins would say it again
            return
        for i, j in near_duplicates([value for _, value in found], near):
            yield say(v, f"{found[j][0]} {_short(found[j][1])!r} says what {found[i][0]} says in other words; "
                         f"make each one about something different (they share over {near:.0%} of their words)",
                      f"{found[j][0]}“{_short(found[j][1])}”与 {found[i][0]} 是同一件事换了说法；每一项都要写不同的内容"
                      f"（两者超过 {near:.0%} 的用词相同）")

    return make("distinct", name, path, fn, near=near)


def _texts(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [t for item in value for t in _texts(item)]
    return [str(value)]


def no_leak(path: str, *, people: Var | list[str] | None = None, details: Var | list[str] | None = None,
            min_shared: int = 2, partial_names: bool = False, name: str | None = None) -> LibraryCheck:
    """No text at `path` names any of `people` (whole names; with `partial_names`, most of a
    name's words or CJK character pairs) or draws on any of `details` (holds `min_shared` or more
    of a detail's content words or CJK character pairs)."""
    if people is None and details is None:
        raise ValueError(f"no_leak({path!r}): give people, details or both")

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        names = _texts(resolve(people, v))
        facts = _texts(resolve(details, v))
        for label, value in select(out, path):
            if not isinstance(value, str):
                continue
            named = [n for n in names if (mentions(value, n) if partial_names else mentions_exactly(value, n))]
            if named:
                yield say(v, f"{label} names {', '.join(named)}; leave them out",
                          f"{label} 提到了{'、'.join(named)}；不要提到他们")
            for fact in facts:
                if refers_to(value, fact, min_shared):
                    yield say(v, f"{label} gives away {_short(fact)!r} (it shares {min_shared} or more of its words); "
                                 "do not bring it up, even in other words",
                              f"{label} 透露了“{_short(fact)}”（有 {min_shared} 处以上的用词相同）；不要提到它，换个说法也不行")
                    break

    return make("no_leak", name, path, fn, people=people, details=details, min_shared=min_shared)


def texts_under(label: str, value: Any) -> Iterator[tuple[str, str]]:
    """(label, text) of every text at or under a value: a model's or a mapping's fields, a
    list's items, in order (`exchanges` reaches `exchanges[0].user`, `exchanges[0].assistant`, …)."""
    if isinstance(value, str):
        yield label, value
    elif isinstance(value, BaseModel):
        for key in type(value).model_fields:
            yield from texts_under(f"{label}.{key}" if label else key, getattr(value, key))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from texts_under(f"{label}.{key}" if label else str(key), item)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from texts_under(f"{label}[{i}]", item)


def no_mention(path: str, terms: Var | str | list[str], *, name: str | None = None) -> LibraryCheck:
    """No text at or under `path` mentions any of `terms`: a term with CJK characters as those
    characters anywhere, any other as a whole word or phrase ("cat" is not in "category");
    case and width ignored. `path` may reach a list or an object: every text under it is read
    (`exchanges` reads both sides of every exchange)."""

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        words = _texts(resolve(terms, v))
        hits: list[str] = []
        for _, value in select(out, path):
            for _, text in texts_under("", value):
                hits += [t for t in words if t not in hits and mentions_term(text, t)]
        if hits:
            yield say(v, f"{path} must not mention: {', '.join(hits)}; leave them out, and write around them",
                      f"{path} 不能提到：{'、'.join(hits)}；请完全避开这些词")

    return make("no_mention", name, path, fn, terms=terms)


def not_copied(path: str, source: Var | str | list[str], *, longest: Bound = None,
               name: str | None = None) -> LibraryCheck:
    """No text at `path` copies more than `longest` words in a row (Chinese: characters) from
    any of `source`. Default: 7 words, 9 characters."""
    bound = longest if longest is not None else {"en": 7, "zh": 9}

    def fn(out: Any, v: Mapping[str, Any]) -> Iterator[str]:
        most = int(resolve(bound, v))
        sources = _texts(resolve(source, v))
        for label, value in select(out, path):
            if not isinstance(value, str):
                continue
            for text in sources:
                if (n := shared_run(value, text)) > most:
                    yield say(v, f"{label} copies {n} words in a row from {_short(text)!r}; say it in your own words, "
                                 f"sharing at most {most} words in a row with it",
                              f"{label} 照抄了“{_short(text)}”中连续 {n} 个字；请用自己的话写，与它连续相同的字不超过 {most} 个")
                    break

    return make("not_copied", name, path, fn, source=source, longest=bound)
