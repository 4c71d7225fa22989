"""A canonical LLM request and its content-addressed cache key."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

# Bump when the canonical form changes, so old cache entries stop matching
# instead of being misread.
CACHE_KEY_VERSION = 2


_DIGESTS: dict[int, tuple[dict[str, Any], str]] = {}


def schema_digest(schema: dict[str, Any] | None) -> str | None:
    """sha256 of a JSON schema's canonical text, memoised per schema object.

    A stage sends the same schema dict with every call; re-serialising it was a large
    share of a cached rebuild. The dict is kept referenced so its id is never reused.
    """
    if schema is None:
        return None
    hit = _DIGESTS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    text = json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if len(_DIGESTS) < 4096:
        _DIGESTS[id(schema)] = (schema, digest)
    return digest


@dataclass(frozen=True)
class LLMRequest:
    """Everything that determines an answer: what is hashed is what is sent, but the budget.

    `params["max_tokens"]` is the build's limit (llm.max_tokens) and is hashed as it always
    was; `budget` is the max_tokens the request is first sent with (a stage's budget,
    memsynth.llm.budget) and is not hashed. max_tokens only decides where an answer is cut,
    not what it says, and a cut-off answer is asked again with more room up to the ceiling
    (the limit when none is set): an answer kept under this key is one the request, sent
    under any budget, ends with. So a changed budget re-asks nothing, and the caches of
    builds before budgets existed stay valid.
    """

    model: str
    messages: tuple[dict[str, str], ...]
    params: dict[str, Any] = field(default_factory=dict)  # temperature, max_tokens, seed, ...
    schema_name: str | None = None
    json_schema: dict[str, Any] | None = None
    response_mode: str = "json_schema"  # json_schema | json_object_schema | json_object | text
    sample_index: int = 0
    # A regenerated item's salt: another answer to the same prompt, under a new cache key,
    # while the old answer stays cached for the versions that used it. Empty: no salt.
    salt: str = ""
    # The stage and its variables, sent only to memsynth's simulator (`llm.stage_variables`).
    # Not hashed: the variables are what the messages were rendered from.
    hints: dict[str, Any] | None = field(default=None, compare=False)
    # The max_tokens first sent (None: params' max_tokens). Not hashed: see above.
    budget: int | None = field(default=None, compare=False)

    @property
    def first_max_tokens(self) -> int | None:
        """The max_tokens the request is first sent with: its budget, never above its limit."""
        limit = self.params.get("max_tokens")
        if self.budget is None:
            return None if limit is None else int(limit)
        return self.budget if limit is None else min(self.budget, int(limit))

    def canonical(self) -> str:
        """Stable JSON text of the request (sorted keys, no whitespace); the schema by its hash."""
        body = {
            "v": CACHE_KEY_VERSION,
            "model": self.model,
            "messages": list(self.messages),
            "params": self.params,
            "schema_name": self.schema_name,
            "json_schema": schema_digest(self.json_schema),
            "response_mode": self.response_mode,
            "sample_index": self.sample_index,
        }
        if self.salt:  # absent otherwise, so every unsalted key stays what it was
            body["salt"] = self.salt
        return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    def cache_key(self) -> str:
        """sha256 of the canonical request, prefixed with the key version (computed once:
        the runner records it and the engine looks it up)."""
        key = self.__dict__.get("_cache_key")
        if key is None:
            digest = hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()
            key = f"v{CACHE_KEY_VERSION}-{digest}"
            object.__setattr__(self, "_cache_key", key)  # frozen: the fields, not this memo
        return key

    def response_format(self) -> dict[str, Any] | None:
        """The `response_format` argument for the chat completions API."""
        if self.response_mode == "json_schema" and self.json_schema is not None:
            return {
                "type": "json_schema",
                "json_schema": {
                    "name": self.schema_name or "output",
                    "schema": self.json_schema,
                    "strict": False,
                },
            }
        if self.response_mode == "json_object_schema" and self.json_schema is not None:
            return {"type": "json_object", "schema": self.json_schema}  # llama-cpp-python's field
        if self.response_mode in ("json_schema", "json_object", "json_object_schema"):
            return {"type": "json_object"}
        return None


@dataclass(frozen=True)
class EmbeddingRequest:
    """One text to embed with `model` (`/v1/embeddings`), cached under its own key."""

    model: str
    text: str

    def cache_key(self) -> str:
        canonical = json.dumps({"v": CACHE_KEY_VERSION, "endpoint": "embeddings", "model": self.model,
                                "input": self.text}, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return f"v{CACHE_KEY_VERSION}-emb-" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    @property
    def params(self) -> dict[str, Any]:
        return {}

    budget = None  # an embedding has no answer to cut
    first_max_tokens = None


@dataclass(frozen=True)
class LLMResponse:
    """What came back for a request, whether from the endpoint or the cache."""

    content: str
    finish_reason: str | None
    prompt_tokens: int
    completion_tokens: int
    model: str
    cached: bool = False
    attempts: int = 1
    latency_s: float = 0.0
    cached_prompt_tokens: int = 0  # of prompt_tokens, read from the provider's prompt cache

    def to_record(self) -> dict[str, Any]:
        return {
            "content": self.content,
            "finish_reason": self.finish_reason,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
            "model": self.model,
        }


class TransportFailure(Exception):
    """A call that could not get an answer after every retry."""
