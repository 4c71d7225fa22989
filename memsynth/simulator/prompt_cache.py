"""The simulator's model of a provider's prompt cache, so cached-token accounting is tested.

As OpenAI documents it: a prompt of at least 1,024 tokens is cached in steps of 128
tokens of its prefix, and a later prompt that starts with a cached prefix reads those
tokens from the cache (`usage.prompt_tokens_details.cached_tokens`) at a lower price. So
only the part of a prompt before its first difference from earlier prompts can be cached,
which is why templates put what a persona's calls share first.
"""

from __future__ import annotations

import hashlib

MIN_TOKENS = 1024
STEP_TOKENS = 128
CHARS_PER_TOKEN = 4  # the simulator's token count: a token per four characters


class PrefixCache:
    """Prefixes seen so far, per model, by their hash at every step (128 tokens from 1,024;
    tests lower both to see caching on the simulator's short stand-in profiles)."""

    def __init__(self, min_tokens: int = MIN_TOKENS, step_tokens: int = STEP_TOKENS) -> None:
        self.min_tokens = min_tokens
        self.step_tokens = step_tokens
        self._seen: set[bytes] = set()

    def read(self, model: str, prompt: str) -> int:
        """Tokens of `prompt` served from the cache; the prompt's own prefixes are cached after."""
        tokens = len(prompt) // CHARS_PER_TOKEN
        if tokens < self.min_tokens:
            return 0
        digest = hashlib.blake2b(model.encode(), digest_size=16)
        cached, done = 0, 0
        for step in range(self.min_tokens, tokens + 1, self.step_tokens):
            end = step * CHARS_PER_TOKEN
            digest.update(prompt[done:end].encode())
            done = end
            key = digest.copy().digest()
            if key in self._seen:
                cached = step
            else:
                self._seen.add(key)
        return cached
