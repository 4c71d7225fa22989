"""The answers a check is held to: a stage's answer files in the shared corpus
(../shared/model-answers) and in every held-out round (tests/data/heldout/r*, and the
acceptable-only rounds a*)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL_ANSWERS = ROOT.parent / "shared" / "model-answers"
HELDOUT = ROOT / "tests" / "data" / "heldout"


def stage_answers(recipe: str, stage: str) -> Iterator[tuple[str, dict[str, Any], dict[str, Any]]]:
    """(where: "corpus/<language>" or the round, the file's data, one answer) for every answer."""
    files = [(f"corpus/{p.parent.name}", p) for p in sorted((MODEL_ANSWERS / recipe).glob(f"*/{stage}.json"))]
    files += [(p.parts[-4], p) for p in sorted(HELDOUT.glob(f"[ra]*/{recipe}/*/{stage}.json"))]
    for where, path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        left = LEFT_REJECTED.get(where, [])
        for answer in data["answers"]:
            if f"{recipe}/{data.get('language', path.parent.name)}/{stage}/{answer['id']}" not in left:
                yield where, data, answer


# Acceptable answers of the acceptable-only rounds the checks still reject, by round: the writer's
# slips, calls and contested readings, and the checks' false rejections left, each said with why in
# tests/test_heldout_answers.py (which holds them rejected). The label-reading tests leave them out.
LEFT_REJECTED = {"a28": ["stratmem/zh/eval_miq/eval_miq-zh-a3"],
                 "a29": ["pal/zh/requirement_types/requirement_types-zh-a2", "stratmem/zh/eval_miq/eval_miq-zh-a3"],
                 "a30": ["pal/zh/dialogue/dialogue-zh-a3", "stratmem/en/eval_miq/eval_miq-en-a2"],
                 "a31": ["pal/zh/candidates/candidates-zh-a2", "stratmem/zh/extract/extract-zh-a2"],
                 "a32": ["enpmr/zh/life_themes/life_themes-zh-a3", "pal/zh/candidates/candidates-zh-a3",
                         "pal/zh/requirement_types/requirement_types-zh-a3", "stratmem/zh/query/query-zh-a3"]}


_QUOTED = re.compile(r"[“\"「『]([^”\"」』]*)[”\"」』]")


def label_says(rule: str, words: tuple[str, ...] | list[str]) -> bool:
    """Whether a mistake's label names one of `words`: in the writer's own words, or in a short
    quote. A whole prompt line quoted (r11's writers quote the line, and one line holds several
    instructions) names none of its instructions alone: the writer's words after it say which."""
    own = _QUOTED.sub(" ", rule)
    quotes = [q for q in _QUOTED.findall(rule) if len(q) <= 40]
    return any(w in own or any(w in q for q in quotes) for w in words)
