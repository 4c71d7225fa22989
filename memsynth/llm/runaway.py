"""Runaway answers: a streamed answer that has produced only whitespace, or only text it
already wrote, for `llm.runaway_tokens` tokens is stopped there instead of read to its limit.

Under a JSON grammar a small model can keep emitting whitespace inside an object (or one
key-value pair again and again) until max_tokens: measured on llama.cpp with SmolLM2-135M,
4095 tokens and four minutes for an answer of under a hundred. It also loops on a whole
paragraph (370 characters, said again and again inside a JSON string), which no short
period finds: so the watch also asks how much of its window the answer had already
written, in shingles of SHINGLE characters. Closing the stream stops the server
generating; the engine returns what came with finish_reason `runaway`, and the stage
runner re-asks with a repair, then applies the stage's policy. An answer that comes whole
(not streamed, or from a batch) and was cut off in such a loop is a runaway too, not an
answer to grow (`looped`).
"""

from __future__ import annotations

import math

RUNAWAY = "runaway"  # the finish_reason of an answer stopped as a runaway
MAX_PERIOD = 64  # the longest repeated fragment looked for, in characters
# A window this much written before is a loop. Real answers repeat only their JSON's
# punctuation and keys (under a fifth of a window in every answer of the shared corpus);
# a paragraph said again is all of it.
SHINGLE = 32
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
        self._tail = ""  # the answer's last SHINGLE - 1 characters
        self._pending: list[str] = []  # pieces not yet shingled
        self._seen: set[int] = set()  # hashes of its shingles
        self._recycled = [0]  # _recycled[i]: how many of its first i characters were written before

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
            # Shingled only here: an answer shorter than the limit (nearly every one) costs
            # nothing, a longer one a pass over each character once.
            self._shingle("".join(self._pending))
            self._pending.clear()
            window = sum(len(t) for t, _ in self._window)
            if repeats("".join(t for t, _ in self._window)):
                return "repetition"
            if window >= LOOP_WINDOW and self._recycled[-1] - self._recycled[-1 - window] >= RECYCLED * window:
                return "loop"
        return None

    def _shingle(self, text: str) -> None:
        """Count, for each new character, whether the shingle ending there was already in
        the answer: in a loop nearly every one was, in a real answer only its keys'."""
        marks, seen = self._recycled, self._seen
        whole = self._tail + text
        for end in range(len(self._tail) + 1, len(whole) + 1):
            again = False
            if end >= SHINGLE:
                key = hash(whole[end - SHINGLE:end])
                again = key in seen
                seen.add(key)
            marks.append(marks[-1] + again)
        self._tail = whole[-(SHINGLE - 1):]


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
