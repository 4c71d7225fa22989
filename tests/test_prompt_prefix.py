"""Prompt-cache-friendly templates: a persona's prompts of one stage share everything up to
their item-specific part, so a provider's prompt cache can serve that shared prefix."""

from __future__ import annotations

import re

import pytest

from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.registry import names, recipe_class
from memsynth.generation.stage import localized
from tests.golden import LANGUAGES, recorded_requests

# Shorter static lines, and labels (ending in a colon), may sit in the item part.
MIN_LINE = 20
# Enough items of every stage for one persona (the golden run's options otherwise).
OPTIONS = {"enpmr": {"dialogues_per_persona": 2}, "stratmem": {"max_sessions": 4}}


def static_lines(library: PromptLibrary, template: str) -> set[str]:
    """The template's (and its partials') lines of plain text: instructions, not data."""
    lines = set()
    for source in library.files(template).values():
        for line in source.splitlines():
            text = re.sub(r"\{#.*?#\}", "", line).strip()  # a line's rule ids render to nothing
            label = text.endswith((":", "："))
            if len(text) >= MIN_LINE and not label and not any(t in text for t in ("{{", "{%", "{#", "#}", "%}", "}}")):
                lines.add(text)
    return lines


def common_prefix(texts: list[str]) -> int:
    first, last = min(texts), max(texts)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return n


def late_instructions(recipe_name: str, language: str) -> dict[str, list[str]]:
    """Per stage with two or more items for the persona: the instruction lines every prompt
    holds that come after the prompts' first difference."""
    library = PromptLibrary()
    _, _, recorded = recorded_requests(recipe_name, language, OPTIONS.get(recipe_name))
    prompts: dict[str, list[str]] = {}
    for body in recorded:
        if any(m["role"] == "assistant" for m in body["messages"]):
            continue  # a repair: the first request's exchange is its prefix already
        text = "\n\n".join(m["content"] for m in body["messages"])
        prompts.setdefault(body["memsynth"]["stage"], []).append(text)
    late: dict[str, list[str]] = {}
    for stage, texts in prompts.items():
        texts = sorted(set(texts))
        if len(texts) < 2:
            continue
        shared = common_prefix(texts)
        template = localized(stage.replace(".", "/", 1) + ".j2", language)
        lines = [line for line in static_lines(library, template) if all(line in t for t in texts)]
        after = [line for line in lines if texts[0].index(line) + len(line) > shared]
        late[stage] = sorted(after)
    return late


CASES = [(r, lang) for r in names() if recipe_class(r).stages and recipe_class(r).buildable for lang in LANGUAGES]


@pytest.mark.parametrize(("recipe_name", "language"), CASES)
def test_a_persona_s_prompts_of_a_stage_share_all_their_instructions(recipe_name: str, language: str):
    late = late_instructions(recipe_name, language)
    assert late, "no stage with two or more items for the persona: nothing was checked"
    offending = {stage: lines for stage, lines in late.items() if lines}
    assert not offending, f"instructions after the item-specific part: {offending}"
