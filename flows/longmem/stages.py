"""longmem's stages and their checks: an evidence session reveals its fact in the right
speaker's turn, indirectly; no session names what it must avoid; the asked number of exchanges.

The count and `avoids` are the check library's (`items`, `no_mention`: a term as a whole word,
"cat" is not in "category"). `reveals_fact` stays here: the library has no "a turn of this
speaker must state this value, but not in the question's words"."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from flows.longmem.text import names
from memsynth.generation import checklib as lib
from memsynth.generation.stage import Stage, check, say
from schemas.longmem import Chat


def turns(chat: Chat) -> list[tuple[str, str]]:
    return [t for e in chat.exchanges for t in (("user", e.user), ("assistant", e.assistant))]


# The library's count (memsynth.generation.checklib), under the name the summary tallies.
exchange_count = lib.items("exchanges", min=lib.var("exchanges"), max=lib.var("exchanges"), name="exchange_count")


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


# Every text of the chat, both speakers' (the library reads every text under `exchanges`).
avoids = lib.no_mention("exchanges", lib.var("avoid"), name="avoids")

EVIDENCE = Stage("longmem", "evidence", Chat, checks=(exchange_count, reveals_fact, avoids), max_tokens=4096)
FILLER = Stage("longmem", "filler", Chat, checks=(exchange_count, avoids), max_tokens=4096)
STAGES = (EVIDENCE, FILLER)
