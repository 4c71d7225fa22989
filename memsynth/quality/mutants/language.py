"""Mutants of the shared `language` rule, aimed at every stage: a text value written in the
other language, another language's words mixed in, or (Chinese) traditional characters.

The value changed is the answer's longest text that is not copied from its inputs (a quote or
a name keeps its source's language, and the check lets it)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.quality.mutants.base import Context, Mutant, Mutator, Path, _show, put

# Whole values and mixed-in clauses of the other language, several so no one wording is learnt.
_EN_SENTENCES = ("She has been working late all week and feels worn out.",
                 "He wants to feel that his effort is finally noticed by the people around him.",
                 "They agreed to meet again next weekend and talk it through calmly.")
_EN_CLAUSES = (", which really matters to her right now", " because she needs some proper rest",
               " and honestly she is quite tired of waiting", "，这周的pace还算稳")  # one word is enough
_ZH_SENTENCES = ("她这一周一直在加班，感觉非常疲惫。", "他希望自己的努力终于能被身边的人看见。",
                 "他们约好下周末再见面，心平气和地把事情谈清楚。")
_ZH_CLAUSES = ("，这对她来说很重要", "，因为她真的需要好好休息", "，说实话她已经等得很累了")
# Simplified → traditional, for the characters common enough to appear in any answer.
_TRADITIONAL = str.maketrans("们这说时个为会对后发过还来见样让觉经关长开门问间学习书东车现实点从",
                             "們這說時個為會對後發過還來見樣讓覺經關長開門問間學習書東車現實點從")


def _leaves(value: Any, path: Path = ()) -> Iterator[tuple[Path, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, (*path, i))


def _inputs(variables: Mapping[str, Any]) -> str:
    return "\n".join(text for _, text in _leaves(dict(variables)))


class Language(Mutator):
    kind = "language"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if ctx.language not in ("en", "zh"):
            return
        inputs = _inputs(ctx.variables)
        texts = [(p, t) for p, t in _leaves(answer) if len(t.strip()) >= 8 and t.strip() not in inputs]
        if not texts:
            return
        path, text = max(texts, key=lambda pt: len(pt[1]))
        rng = ctx.rng(f"language:{_show(path)}")
        if ctx.language == "en":
            yield Mutant(put(answer, path, rng.choice(_ZH_SENTENCES)), "language:other", f"{_show(path)} in Chinese")
            yield Mutant(put(answer, path, text.rstrip(".") + rng.choice(_ZH_CLAUSES) + "."), "language:mixed",
                         f"{_show(path)} with a Chinese clause")
            return
        yield Mutant(put(answer, path, rng.choice(_EN_SENTENCES)), "language:other", f"{_show(path)} in English")
        yield Mutant(put(answer, path, text.rstrip("。") + rng.choice(_EN_CLAUSES) + "。"), "language:mixed",
                     f"{_show(path)} with an English clause")
        traditional = text.translate(_TRADITIONAL)
        if sum(a != b for a, b in zip(text, traditional, strict=True)) >= 2:
            yield Mutant(put(answer, path, traditional), "language:traditional", f"{_show(path)} in traditional characters")

