"""How real OpenAI-compatible servers differ, as far as a build notices: which structured
output they take and enforce, how they answer a model name they do not serve, what /models
says, how they refuse a request too long for the model, and how a small model runs on."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ServerProfile:
    name: str
    # response_format types taken; any other is refused with `refusal_status`.
    formats: tuple[str, ...] = ("text", "json_object", "json_schema")
    refusal_status: int = 400
    schema_in_json_object: bool = False  # a `schema` inside a json_object format is enforced
    answers_any_model: bool = False  # the name is echoed, whatever /models lists
    not_found: str = "The model `{model}` does not exist or you do not have access to it."
    context: int | None = None  # listed at /models, and a longer request is refused
    context_field: str = "max_model_len"

    def refusal(self, fmt: dict[str, Any]) -> tuple[int, str] | None:
        """(status, message) for a response_format this server does not take."""
        kind = fmt.get("type", "text")
        if kind in self.formats:
            return None
        if self.name == "llamacpp":  # pydantic's validation message, as llama-cpp-python sends it
            detail = [{"type": "literal_error", "loc": ["body", "response_format", "type"],
                       "msg": "Input should be 'text' or 'json_object'", "input": kind}]
            return self.refusal_status, str(detail)
        return self.refusal_status, f"response_format type {kind!r} is not supported"

    def too_long(self, prompt_tokens: int, max_tokens: int) -> str | None:
        if self.context is None or prompt_tokens + max_tokens <= self.context:
            return None
        return (f"This model's maximum context length is {self.context} tokens. However, you requested "
                f"{prompt_tokens + max_tokens} tokens ({prompt_tokens} in the messages, {max_tokens} in "
                "the completion). Please reduce the length of the messages or completion.")

    def model_entry(self, model: str) -> dict[str, Any]:
        entry: dict[str, Any] = {"id": model, "object": "model", "created": 0, "owned_by": self.name}
        if self.context is not None:
            entry[self.context_field] = self.context
        return entry


PROFILES: dict[str, ServerProfile] = {
    "openai": ServerProfile("openai"),
    # vLLM: OpenAI's json_schema (and guided decoding), /models with max_model_len, a 400 for
    # a request longer than the context.
    "vllm": ServerProfile("vllm", context=8192),
    # llama-cpp-python's server: response_format.type is text or json_object (a 500 for
    # anything else), a `schema` beside json_object is enforced by grammar, any model name
    # is answered and echoed.
    "llamacpp": ServerProfile("llamacpp", formats=("text", "json_object"), refusal_status=500,
                              schema_in_json_object=True, answers_any_model=True),
    # Ollama (0.5 and later): json_schema enforced by grammar; an unpulled model is a 404.
    "ollama": ServerProfile("ollama", not_found='model "{model}" not found, try pulling it first'),
}


class Runaways:
    """A share of answers that run on to max_tokens, as a small model under llama.cpp's JSON
    grammar does (issue 53, SmolLM2-135M): in whitespace inside the object (`whitespace`, 4095
    tokens of it), or saying one passage of its own again and again (`loop`: a paragraph of
    370 characters, repeated until the limit). Only a recipe stage's requests (those carrying
    `memsynth` hints) run on, never the endpoint probe's; drawn from their own seeded stream."""

    KINDS = ("whitespace", "loop")

    def __init__(self, rate: float = 0.0, seed: int = 0, kind: str = "whitespace"):
        if not 0 <= rate <= 1:
            raise ValueError(f"the runaway rate is a share between 0 and 1, not {rate}")
        if kind not in self.KINDS:
            raise ValueError(f"unknown runaway kind {kind!r} (known: {', '.join(self.KINDS)})")
        self.rate = rate
        self.kind = kind
        self._rng = random.Random(f"runaway|{seed}")

    def apply(self, payload: dict[str, Any], body: dict[str, Any]) -> bool:
        """Turn `payload` into a runaway when drawn: the answer's start, then whitespace (or
        a passage of the answer said again and again) until max_tokens (about four
        characters a token, as the simulator counts), cut there."""
        if not self.rate or "memsynth" not in body or self._rng.random() >= self.rate:
            return False
        limit = int(body.get("max_tokens") or 4096)
        choice = payload["choices"][0]
        content = choice["message"]["content"] or ""
        start = content[:40]
        # Longer than any period a fragment check finds: only the loop watch can see it.
        passage = (content * (1 + 400 // max(1, len(content))))[:370] if self.kind == "loop" else " " * 7 + "\n"
        choice["message"]["content"] = (start + passage * (1 + limit * 4 // len(passage)))[:limit * 4]
        choice["finish_reason"] = "length"
        usage = payload.setdefault("usage", {})
        usage["completion_tokens"] = limit
        usage["total_tokens"] = usage.get("prompt_tokens", 0) + limit
        return True
