"""longmem's stages and their checks: an evidence session reveals its fact in the right
speaker's turn, indirectly; no session names what it must avoid; the asked number of exchanges."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from flows.longmem.text import named, names
from memsynth.generation.stage import Stage, check, say
from schemas.longmem import Chat


def turns(chat: Chat) -> list[tuple[str, str]]:
    return [t for e in chat.exchanges for t in (("user", e.user), ("assistant", e.assistant))]


@check("exchange_count")
def exchange_count(out: Chat, v: Mapping[str, Any]) -> Iterator[str]:
    if len(out.exchanges) != v["exchanges"]:
        yield say(v, f"write exactly {v['exchanges']} exchanges, not {len(out.exchanges)}",
                  f"恰好写 {v['exchanges']} 轮对话，而不是 {len(out.exchanges)} 轮")


@check("reveals_fact")
def reveals_fact(out: Chat, v: Mapping[str, Any]) -> Iterator[str]:
    revealing = [text for role, text in turns(out) if role == v["speaker"] and names(text, v["value"])]
    if not revealing:
        yield say(v, f"a {v['speaker']} message must contain \"{v['value']}\"",
                  f"{'用户' if v['speaker'] == 'user' else '助手'}的某条消息必须出现“{v['value']}”")
    for text in revealing:
        if names(text, v["question"]) or names(text, v["attribute"]):
            yield say(v, "reveal the fact in passing, not in the question's own words",
                      "要顺带透露这个事实，不要用问题本身的说法")


@check("avoids")
def avoids(out: Chat, v: Mapping[str, Any]) -> Iterator[str]:
    hits = sorted({t for _, text in turns(out) for t in named(text, v["avoid"])})
    if hits:
        yield say(v, f"the chat must not mention: {', '.join(hits)}", f"对话不能提到：{'、'.join(hits)}")


EVIDENCE = Stage("longmem", "evidence", Chat, checks=(exchange_count, reveals_fact, avoids), max_tokens=4096)
FILLER = Stage("longmem", "filler", Chat, checks=(exchange_count, avoids), max_tokens=4096)
STAGES = (EVIDENCE, FILLER)
