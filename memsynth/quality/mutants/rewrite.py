"""Mutators that rewrite what an answer says rather than its form: a user who never gets to
the point, a scene of another need, a liked choice swapped with a disliked one.

Most of what they break is only visible to a model (a judge criterion, or the prompt alone),
so their mutants are expected to survive every check: the table lists them as the rule's
judge work, the set a judge is measured on. `Rewrite` over the user's turns of a memory
session is the exception: `memory_session.user_reveals_memory` must kill it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants.base import (
    Context,
    Mutant,
    Mutator,
    Path,
    Texts,
    Where,
    _key,
    _show,
    _texts,
    get,
    put,
)


@dataclass(frozen=True)
class Rewrite(Mutator):
    """Located texts replaced by others (`texts` of the variables, per language).

    One text replaced per mutant, one mutant per replacement; with `every`, all located texts
    at once (a user who talks all session and never says what happened), the replacements
    taken in turn, `variants` mutants each starting at another replacement."""

    where: Where
    texts: Texts
    label: str = "rewrite"
    every: bool = False
    variants: int = 2
    kind = "rewrite"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"rewrite/{_key(self.where)}/{self.label}")
        paths = _texts(answer, self.where, ctx)
        texts = [t for t in self.texts(ctx.variables, ctx.language) if t.strip()]
        if not paths or not texts:
            return
        if self.every:
            for start in range(min(self.variants, len(texts))):
                out = answer
                for k, path in enumerate(paths):
                    out = put(out, path, texts[(start + k) % len(texts)])
                if out != answer:
                    yield Mutant(out, self.label, f"{len(paths)} texts rewritten, from {texts[start][:30]!r}")
            return
        for text in texts:
            path = rng.choice(paths)
            if get(answer, path) != text:
                yield Mutant(put(answer, path, text), self.label, f"{_show(path)} = {text[:40]!r}")


@dataclass(frozen=True)
class Append(Mutator):
    """Text appended to a located field, chosen from the answer itself as well as the
    variables (`texts(answer, variables, language)`): a memory the reply has not used yet."""

    where: Where
    texts: Callable[[Any, Mapping[str, Any], str], Sequence[str]]
    label: str = "append"
    kind = "append"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        rng = ctx.rng(f"append/{_key(self.where)}/{self.label}")
        paths = _texts(answer, self.where, ctx)
        if not paths:
            return
        for text in self.texts(answer, ctx.variables, ctx.language):
            path = rng.choice(paths)
            body = get(answer, path).strip()
            new = f"{body}{text}" if ctx.language == "zh" else f"{body} {text}"
            yield Mutant(put(answer, path, new), self.label, f"{_show(path)} + {text[:40]!r}")


Pairs = Callable[[Any, Mapping[str, Any]], list[tuple[Path, Path]]]


@dataclass(frozen=True)
class Swap(Mutator):
    """Two values exchanged (a liked choice and a disliked one, with their reasons):
    `pairs` gives the paths, from the answer and the variables."""

    pairs: Pairs
    label: str = "swap"
    kind = "swap"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        for a, b in self.pairs(answer, ctx.variables):
            first, second = get(answer, a), get(answer, b)
            if first != second:
                yield Mutant(put(put(answer, a, second), b, first), self.label, f"{_show(a)} ⇄ {_show(b)}")


def least_related(candidates: Sequence[str], to: str) -> str:
    """The candidate sharing the fewest words (characters in Chinese) with `to`: the memory a
    reply has no reason to bring up. Ties go to the first."""
    from memsynth.quality.mutants.text import is_zh

    def units(text: str) -> set[str]:
        return set(text) if is_zh(text) else {w.strip(".,;:!?'\"()").lower() for w in text.split() if len(w) > 3}

    target = units(to)
    return min(candidates, key=lambda c: len(units(c) & target), default="")
