"""The mutants of `no_mention`: a term it must keep out put into a text under its path, in each
form the check claims to catch (as written, in another case, in full-width letters)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.generation.checklib.paths import resolve
from memsynth.quality.mutants import text as tx
from memsynth.quality.mutants.mutators import Context, Mutant, Mutator, Path, _show, get, put

# Terms a mutator puts in, at most: an avoid list may hold forty, and each term makes up to three.
MOST_TERMS = 4


def leaves(answer: Any, path: Path) -> list[Path]:
    """The paths of every non-empty text at or under `path` of a JSON answer."""
    node = get(answer, path)
    if isinstance(node, str):
        return [path] if node.strip() else []
    if isinstance(node, dict):
        return [p for key in node for p in leaves(answer, (*path, key))]
    if isinstance(node, list):
        return [p for i in range(len(node)) for p in leaves(answer, (*path, i))]
    return []


def _terms(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list | tuple):
        return [t for item in value for t in _terms(item)]
    return []


def _sentence(language: str, term: str) -> str:
    return f"说起来，又想到{term}了。" if language == "zh" else f"That reminds me of {term} again."


@dataclass(frozen=True)
class Mentions(Mutator):
    """A term the check keeps out, said in a text under its path: as written, upper-cased and
    in full-width letters (the forms a case- and width-blind reading must still catch)."""

    where: Any
    terms: Any
    kind = "mention_term"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = [leaf for p in self.where(answer, ctx.variables) for leaf in leaves(answer, p)]
        terms = list(dict.fromkeys(t.strip() for t in _terms(resolve(self.terms, ctx.variables))))
        if not paths or not terms:
            return
        rng = ctx.rng(f"mentions/{self.where.__qualname__}")
        for term in rng.sample(terms, min(MOST_TERMS, len(terms))):
            wide = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in term)
            for form, said in (("as_written", term), ("other_case", term.upper()), ("full_width", wide)):
                if form != "as_written" and said == term:
                    continue
                path = rng.choice(paths)
                new = tx.joined(ctx.language, [get(answer, path).strip(), _sentence(ctx.language, said)])
                yield Mutant(put(answer, path, new), f"mention_term:{form}", f"{_show(path)} mentions {said!r}")
