"""Stage-aware answers: rules a JSON Schema cannot carry, read from the prompt like a model would.

Each function takes the schema-valid draft, the prompt text and the text maker, and
returns an answer that also passes the stage's checks. Keyed by the request's schema
name (`<recipe>_<stage>`); stages without an entry get the schema-driven draft as is.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from typing import Any

from memsynth.simulator.text import TextMaker

StageAnswer = Callable[[dict[str, Any], str, TextMaker], dict[str, Any]]
STAGE_ANSWERS: dict[str, StageAnswer] = {}


def answers(schema_name: str) -> Callable[[StageAnswer], StageAnswer]:
    def register(fn: StageAnswer) -> StageAnswer:
        STAGE_ANSWERS[schema_name] = fn
        return fn
    return register


def prompt_date(prompt: str, label: str, default: dt.date) -> dt.date:
    """The YYYY-MM-DD after `label:` in the prompt, else `default`."""
    match = re.search(re.escape(label) + r"\s*:\s*(\d{4}-\d{2}-\d{2})", prompt)
    return dt.date.fromisoformat(match.group(1)) if match else default


def prompt_int(prompt: str, pattern: str, default: int) -> int:
    match = re.search(pattern, prompt)
    return int(match.group(1)) if match else default


@answers("enpmr_profile")
def _profile(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    draft["name"] = text.person_name()
    draft["preferences"] = text.distinct_sentences(text.rng.randint(10, 13))
    return draft


@answers("enpmr_life_themes")
def _life_themes(draft: dict[str, Any], prompt: str, text: TextMaker) -> dict[str, Any]:
    reference = prompt_date(prompt, "Reference date", dt.date(2024, 12, 2))
    earliest = prompt_date(prompt, "Earliest allowed date", reference - dt.timedelta(days=5 * 365))
    wanted = prompt_int(prompt, r"at least (\d+) life themes", 10)
    count = wanted + text.rng.randint(0, 2)
    draft["themes"] = [
        {"theme": title, "description": text.paragraph(2),
         "start_date": text.date_between(earliest, reference).isoformat()}
        for title in text.theme_titles(count)
    ]
    return draft
