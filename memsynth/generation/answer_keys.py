"""The top-level keys of a stage's answer: the ones its output model names, and any others."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


def answer_keys(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def unknown_keys(model: type[BaseModel], answer: str | Any) -> list[str]:
    """Top-level keys the output model lacks. Pydantic ignores them, but the prompt names
    every key of the answer: a model that adds one ("notes", "reasoning") did not follow it,
    and what it put there is lost. Checked here, not by `extra="forbid"` on the models, whose
    JSON schema (and so every request and cache key) would change. Nested objects are left
    to the schema."""
    if isinstance(answer, str):
        try:
            answer = json.loads(answer)
        except ValueError:
            return []
    if not isinstance(answer, dict) or model.model_config.get("extra") == "allow":
        return []
    known = set(answer_keys(model)) | set(model.model_fields)
    return [str(k) for k in answer if k not in known][:6]
