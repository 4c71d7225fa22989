"""Runaway answers: a streamed answer that has produced only whitespace, or one fragment
repeated, for `llm.runaway_tokens` tokens is stopped there instead of read to its limit.

Under a JSON grammar a small model can keep emitting whitespace inside an object (or one
key-value pair again and again) until max_tokens: measured on llama.cpp with SmolLM2-135M,
4095 tokens and four minutes for an answer of under a hundred. Closing the stream stops
the server generating; the engine returns what came with finish_reason `runaway`, and the
stage runner re-asks with a repair, then applies the stage's policy.
"""

from __future__ import annotations

import math

RUNAWAY = "runaway"  # the finish_reason of an answer stopped as a runaway
MAX_PERIOD = 64  # the longest repeated fragment looked for, in characters


class Runaway(Exception):
    """A streamed answer stopped as a runaway: what it said so far and about how many tokens."""

    def __init__(self, content: str, tokens: int, model: str, kind: str):
        super().__init__(f"the answer ran on with {kind} for {tokens} tokens")
        self.content = content
        self.tokens = tokens
        self.model = model
        self.kind = kind


def delta_tokens(text: str) -> int:
    """Tokens one streamed piece is taken to hold: servers send one token a piece, and a
    longer piece (a server that batches them) about four characters a token."""
    return max(1, math.ceil(len(text) / 4))


class RunawayWatch:
    """Watches a stream's pieces; `feed` returns the kind of runaway ("whitespace" or
    "repetition") once the answer's last `limit` tokens are nothing else, else None."""

    def __init__(self, limit: int):
        self.limit = limit
        self.tokens = 0  # the answer's tokens so far
        self._window: list[tuple[str, int]] = []  # the latest pieces covering >= limit tokens
        self._window_tokens = 0
        self._unchecked = 0  # tokens since the repetition was last looked for
        self._blank = 0  # tokens of whitespace at the answer's end

    def feed(self, text: str) -> str | None:
        n = delta_tokens(text)
        self.tokens += n
        self._blank = self._blank + n if not text.strip() else 0
        if self._blank >= self.limit:
            return "whitespace"
        self._window.append((text, n))
        self._window_tokens += n
        while len(self._window) > 1 and self._window_tokens - self._window[0][1] >= self.limit:
            self._window_tokens -= self._window.pop(0)[1]
        self._unchecked += n
        # Looked for every eighth of the limit: a runaway runs at most that much past it, and
        # an answer of any length costs a few comparisons per limit's worth of tokens.
        if self._window_tokens >= self.limit and self._unchecked >= max(1, self.limit // 8):
            self._unchecked = 0
            if repeats("".join(t for t, _ in self._window)):
                return "repetition"
        return None


def repeats(text: str) -> bool:
    """True when `text` is one fragment of at most MAX_PERIOD characters over and over (at
    least twice), whatever its first and last copies were cut to."""
    size = len(text)
    for period in range(1, min(MAX_PERIOD, size // 2) + 1):
        if text[period:] == text[:-period]:
            return True
    return False
