"""Runaway answers: a streamed answer that has produced only whitespace, or only text it
already wrote, for `llm.runaway_tokens` tokens is stopped there instead of read to its limit.

Under a JSON grammar a small model can keep emitting whitespace inside an object (or one
key-value pair again and again) until max_tokens: measured on llama.cpp with SmolLM2-135M,
4095 tokens and four minutes for an answer of under a hundred. It also loops on a whole
paragraph (370 characters, said again and again inside a JSON string), which no short
period finds: so the watch also asks how much of its window the answer had already
written (stretches of SHINGLE characters across the window found earlier in it). Closing
the stream stops the server generating; the engine returns what came with finish_reason
`runaway`, and the stage runner re-asks with a repair, then applies the stage's policy. An
answer that comes whole (not streamed, or from a batch) and was cut off in such a loop is a
runaway too, not an answer to grow (`looped`).
"""

from __future__ import annotations

import math

RUNAWAY = "runaway"  # the finish_reason of an answer stopped as a runaway
MAX_PERIOD = 64  # the longest repeated fragment looked for, in characters
# A window this much written before is a loop. Real answers repeat their JSON's keys and
# indentation: at most six probes in ten in any window of the shared corpus's answers, compact
# or indented by 2 or 4 (dense Chinese turns between long keys); a paragraph said again is all
# of it. Stretches shorter than 64 characters land wholly in that scaffolding too often.
SHINGLE = 64
PROBES = 10  # stretches looked up across the window, each a C-speed find in what came before
RECYCLED = 0.9
# Fewer characters than this cannot tell a loop from a list's repeated fields: log entries
# in the corpus repeat 60-character stretches ("The user created a schedule named 'Send …").
LOOP_WINDOW = 256


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
    """Watches a stream's pieces; `feed` returns the kind of runaway ("whitespace",
    "repetition" or "loop") once the answer's last `limit` tokens are nothing else, else None."""

    def __init__(self, limit: int):
        self.limit = limit
        self.tokens = 0  # the answer's tokens so far
        self._window: list[tuple[str, int]] = []  # the latest pieces covering >= limit tokens
        self._window_tokens = 0
        self._unchecked = 0  # tokens since the repetition was last looked for
        self._blank = 0  # tokens of whitespace at the answer's end
        self._text = ""  # the answer up to the last look
        self._pending: list[str] = []  # pieces since

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
        self._pending.append(text)
        # Looked for every eighth of the limit: a runaway runs at most that much past it, and
        # an answer of any length costs a few comparisons per limit's worth of tokens.
        if self._window_tokens >= self.limit and self._unchecked >= max(1, self.limit // 8):
            self._unchecked = 0
            self._text += "".join(self._pending)
            self._pending.clear()
            window = sum(len(t) for t, _ in self._window)
            if repeats("".join(t for t, _ in self._window)):
                return "repetition"
            if window >= LOOP_WINDOW and recycled(self._text, window) >= RECYCLED:
                return "loop"
        return None


def recycled(text: str, window: int) -> float:
    """The share of PROBES stretches, spread across `text`'s last `window` characters, that
    the text already held before them: 1.0 in a loop, a tenth or two in a real answer (its
    JSON keys)."""
    start = len(text) - window
    step = (window - SHINGLE) / (PROBES - 1)
    found = 0
    for k in range(PROBES):
        at = start + int(k * step)
        # Wholly before its own start (an overlapping copy is a period under SHINGLE).
        found += text.find(text[at:at + SHINGLE], 0, at + SHINGLE - 1) != -1
    return found / PROBES


def looped(text: str, limit: int) -> bool:
    """True when a whole answer (one not streamed, or cut off at its limit) ends in
    `limit` tokens of whitespace, one fragment repeated or text it had already written."""
    if limit <= 0:
        return False
    watch = RunawayWatch(limit)
    # About four characters a token, as a server that batches its pieces is counted.
    return any(watch.feed(text[at:at + 4]) for at in range(0, len(text), 4))


def repeats(text: str) -> bool:
    """True when `text` is one fragment of at most MAX_PERIOD characters over and over (at
    least twice), whatever its first and last copies were cut to."""
    size = len(text)
    for period in range(1, min(MAX_PERIOD, size // 2) + 1):
        if text[period:] == text[:-period]:
            return True
    return False
