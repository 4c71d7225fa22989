"""An endpoint's answer as memsynth keeps it: parsed from a completion or an embedding, and
read back from a cache record."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memsynth.llm.request import LLMResponse
from memsynth.llm.retry import EmptyResponse


@dataclass(frozen=True)
class Completion:
    """The parts of a chat.completion response memsynth uses."""

    content: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    model: str
    cached_prompt_tokens: int = 0

    @classmethod
    def parse(cls, data: dict[str, Any]) -> Completion:
        choices = data.get("choices") or []
        if not choices:
            raise EmptyResponse("the endpoint answered with no choices")
        usage = data.get("usage") or {}
        return cls(content=(choices[0].get("message") or {}).get("content") or "",
                   finish_reason=choices[0].get("finish_reason"),
                   prompt_tokens=int(usage.get("prompt_tokens") or 0),
                   completion_tokens=int(usage.get("completion_tokens") or 0),
                   cached_prompt_tokens=int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0),
                   model=str(data.get("model") or ""))

    @classmethod
    def from_embedding(cls, data: dict[str, Any]) -> Completion:
        vector = [float(x) for x in data["data"][0]["embedding"]]
        if not vector:
            raise EmptyResponse("the endpoint answered with an empty embedding")
        usage = data.get("usage") or {}
        return cls(content=json.dumps(vector), finish_reason="stop",
                   prompt_tokens=int(usage.get("prompt_tokens") or 0), completion_tokens=0,
                   model=str(data.get("model") or ""))


def response_from_record(record: dict[str, Any], *, cached: bool) -> LLMResponse:
    return LLMResponse(
        content=record["content"],
        finish_reason=record.get("finish_reason"),
        prompt_tokens=record.get("prompt_tokens", 0),
        completion_tokens=record.get("completion_tokens", 0),
        cached_prompt_tokens=record.get("cached_prompt_tokens", 0),
        model=record.get("model", ""),
        cached=cached,
        attempts=0,
        latency_s=0.0,
    )
