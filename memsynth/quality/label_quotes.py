"""Which rules a labelled mistake breaks, read from the prompt lines its label quotes.

A corpus labels each mistake in prose that quotes the instruction it breaks ("“one per like or
dislike”: two preferences merged"). Every instruction line of a stage's template names its
rule ids (memsynth.generation.rules.prompt_lines), so a quoted fragment found in a line gives
that line's ids: no reader's judgement, and the same ids every time.

With them, `check-answers` states the figure the rules table promises: of the mistakes whose
quoted lines name only rules a check enforces (no judge criterion, not left to the prompt), how
many the checks reject. A mistake whose label quotes no line (a seed rule in the label's own
words) has no ids and is left out of that figure.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from typing import Any

# A quoted fragment: “…”, "…", 「…」 or 『…』 of four characters or more.
_QUOTE = re.compile(r"[“\"「『]([^”\"」』]{4,})[”\"」』]")
_ELLIPSIS = re.compile(r"……|…|\.\.\.")
# Characters a label may write differently from the prompt: spaces, backticks, emphasis.
_LOOSE = re.compile(r"[\s`*]")
_JSON_ONLY = "json-only"


def _loose(text: str) -> str:
    return _LOOSE.sub("", text)


@functools.lru_cache(maxsize=256)
def _lines(recipe: str, stage: str, language: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(the line's text, loosened; its rule ids) of every tagged line of the stage's template."""
    from memsynth.generation.audit import _library, _tagged_lines
    from memsynth.quality.answer_check import find_stage

    template = find_stage(recipe, stage).template_for(language)
    return tuple((_loose(line.text), tuple(i for i in line.ids if i != _JSON_ONLY))
                 for _, line in _tagged_lines(_library(), template))


def quoted_rule_ids(recipe: str, stage: str, language: str, label: str) -> list[str]:
    """The rule ids of the prompt lines `label` quotes (a fragment's first 25 characters found in
    the line, ellipses splitting a quote into fragments); [] when it quotes none."""
    lines = _lines(recipe, stage, language)
    ids: dict[str, None] = {}
    for quote in _QUOTE.findall(label):
        for part in _ELLIPSIS.split(quote):
            fragment = _loose(part)
            if len(fragment) < 4:
                continue
            for text, line_ids in lines:
                if fragment[:25] in text:
                    ids.update(dict.fromkeys(line_ids))
    return list(ids)


@functools.lru_cache(maxsize=16)
def _table(recipe: str) -> dict[str, Any]:
    from memsynth.core.errors import ConfigError
    from memsynth.generation.registry import recipe_class
    from memsynth.generation.rules import EMOTION_RULES, SHARED_RULES

    try:
        rules = recipe_class(recipe).rules
    except ConfigError:  # emotion scoring, shared by every recipe, has no recipe of its own
        rules = (*EMOTION_RULES, *SHARED_RULES)
    return {r.id: r for r in rules}


def checks_only(recipe: str, ids: Iterable[str]) -> bool:
    """Every one of `ids` is a rule the table gives a check and neither a judge nor the prompt alone."""
    table = _table(recipe)
    ids = [i for i in ids if i in table]
    return bool(ids) and all(table[i].checks and not table[i].judges and not table[i].prompt_only for i in ids)


def claimed_by_checks(verdicts: Sequence[Any]) -> dict[str, Any]:
    """Over the labelled violations of `verdicts` (memsynth.quality.answer_check.AnswerVerdict):
    those whose quoted lines name only check-enforced rules, how many the checks rejected, and
    the ones they let through by name."""
    claimed, missed = 0, []
    for v in verdicts:
        if v.label != "violation":
            continue
        if checks_only(v.recipe, quoted_rule_ids(v.recipe, v.stage, v.language, v.rule or "")):
            claimed += 1
            if v.passed:
                missed.append(f"{v.recipe}/{v.language}/{v.stage}/{v.id}")
    return {"claimed": claimed, "rejected": claimed - len(missed), "let_through": missed}
