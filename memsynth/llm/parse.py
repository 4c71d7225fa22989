"""Tolerant JSON extraction from model text: code fences, leading prose, small damage."""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

from memsynth.core.errors import ConfigError
from memsynth.core.inputs import MAX_DEPTH, check_shape

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


class UnparsableOutput(ValueError):
    """The text held no JSON value that could be recovered."""


def extract_json(text: str) -> Any:
    """The JSON value in `text`, repairing small syntax damage; raises UnparsableOutput."""
    candidate = text.strip()
    fenced = _FENCE.search(candidate)
    if fenced:
        candidate = fenced.group(1).strip()
    start = _first_bracket(candidate)
    if start is None:
        raise UnparsableOutput("no JSON object or array found in the answer")
    candidate = candidate[start:]
    try:
        value, _ = json.JSONDecoder().raw_decode(candidate)
        return _shallow(value)
    except RecursionError:
        raise UnparsableOutput(f"the answer's JSON is nested more than {MAX_DEPTH} levels deep") from None
    except ValueError:
        pass
    if _stops_early(candidate):
        # Closing what a cut-off answer left open would yield a shorter object that
        # passes as whole: fewer items, silently. A cut answer is re-asked, never repaired.
        raise UnparsableOutput("the answer stops before its JSON is complete")
    try:
        value = json_repair.loads(candidate)
    except Exception as exc:  # json_repair raises assorted errors on hopeless input
        raise UnparsableOutput(f"answer is not valid JSON: {exc}") from exc
    if not isinstance(value, (dict, list)) or value in ({}, []):
        raise UnparsableOutput("answer is not valid JSON and could not be repaired")
    return _shallow(value)


def _shallow(value: Any) -> Any:
    """`value` if no deeper than any stage's output may be (pydantic and the checks recurse)."""
    try:
        check_shape(value, "answer")
    except ConfigError:
        raise UnparsableOutput(f"the answer's JSON is nested more than {MAX_DEPTH} levels deep") from None
    return value


def _first_bracket(text: str) -> int | None:
    positions = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(positions) if positions else None


def _stops_early(text: str) -> bool:
    """True when a string, object or array opened in `text` is never closed."""
    depth = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return False  # the first value is complete; what follows is prose
    return in_string or depth > 0
