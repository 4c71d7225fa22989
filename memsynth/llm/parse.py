"""Tolerant JSON extraction from model text: code fences, leading prose, small damage."""

from __future__ import annotations

import json
import re
from typing import Any

import json_repair

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
        return value
    except ValueError:
        pass
    try:
        value = json_repair.loads(candidate)
    except Exception as exc:  # json_repair raises assorted errors on hopeless input
        raise UnparsableOutput(f"answer is not valid JSON: {exc}") from exc
    if not isinstance(value, (dict, list)) or value in ({}, []):
        raise UnparsableOutput("answer is not valid JSON and could not be repaired")
    return value


def _first_bracket(text: str) -> int | None:
    positions = [i for i in (text.find("{"), text.find("[")) if i >= 0]
    return min(positions) if positions else None
