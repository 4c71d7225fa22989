"""A streamed chat completion (server-sent events) put back together as the one answer a
non-streamed call would have had: the cache, the counts and the parser see no difference.

Streaming is how a slow server that is working is told from one that went silent: a
timeout then means no token for `llm.idle_timeout_s`, not a long answer (nor, for a request
still queued, a long queue: memsynth.llm.silence).
"""

from __future__ import annotations

from typing import Any

import orjson

from memsynth.llm.retry import EmptyResponse, StreamCut
from memsynth.llm.runaway import Runaway, RunawayWatch

DONE = b"[DONE]"


class StreamAssembler:
    """Collects a chat.completion.chunk stream into a chat.completion body; with
    `runaway_tokens`, raises `Runaway` as soon as the answer has run on that long with
    whitespace or one repeated fragment (the poster then closes the stream)."""

    def __init__(self, runaway_tokens: int | None = None) -> None:
        self.parts: list[str] = []
        self.watch = RunawayWatch(runaway_tokens) if runaway_tokens else None
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.model = ""
        self.done = False

    def feed_line(self, line: bytes) -> None:
        """One line of the event stream (`data: {...}`, `data: [DONE]`, comments, blanks)."""
        line = line.strip()
        if not line.startswith(b"data:"):
            return  # a blank separator, a comment or an `event:` line
        payload = line[5:].strip()
        if payload == DONE:
            self.done = True
            return
        try:
            event = orjson.loads(payload)
        except orjson.JSONDecodeError as exc:
            raise EmptyResponse(f"an unreadable event in the answer's stream: {payload[:80]!r}") from exc
        self.feed(event)

    def feed(self, event: dict[str, Any]) -> None:
        if not isinstance(event, dict):
            raise EmptyResponse("an unreadable event in the answer's stream")
        if event.get("error"):
            error = event["error"]
            said = error.get("message") if isinstance(error, dict) else error
            raise EmptyResponse(f"the endpoint sent an error mid-answer: {str(said)[:200]}")
        self.model = event.get("model") or self.model
        for choice in event.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            text = (choice.get("delta") or {}).get("content")
            if text:
                self.parts.append(text)
                if self.watch is not None and (kind := self.watch.feed(text)) is not None:
                    raise Runaway("".join(self.parts), self.watch.tokens, self.model, kind)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        if event.get("usage"):
            self.usage = event["usage"]

    def completion(self) -> dict[str, Any]:
        """The chat.completion body; a stream cut before its end is no answer."""
        if self.finish_reason is None:
            raise StreamCut("the answer's stream ended before the answer did")
        content = "".join(self.parts)
        # A server that sends no usage with its stream: about four characters a token, so the
        # counts, the cost and the budget still see the answer.
        usage = self.usage or {"prompt_tokens": 0, "completion_tokens": max(1, len(content) // 4)}
        return {"object": "chat.completion", "model": self.model, "usage": usage,
                "choices": [{"index": 0, "finish_reason": self.finish_reason,
                             "message": {"role": "assistant", "content": content}}]}
