"""enpmr's checks that read which listed memory a text draws on, by that memory's own words:
the units (memsynth.quality.textrules.meaning) no other listed memory has and the context the
text answers lacks. A text that draws on a memory repeats some of them; one that only shares
the theme holds few or none."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.stage import check, say
from memsynth.quality.textrules.meaning import own_units_held
from schemas.enpmr import Scene, SupportReply

# A turn that draws on a memory repeats some of that memory's own words (in no other listed memory
# and not in the conversation). Held to the shared corpus and the held-out rounds: acceptable turns
# hold at most 2 of another memory's (English stems, Chinese character pairs); a turn that brings in
# a second memory, or names the wrong number, holds 3-5 (English) or 6-7 (Chinese) of the other's.
DRAWN = {"en": 3, "zh": 5}


@check("draws_on_its_memory")
def draws_on_its_memory(out: SupportReply, v: Mapping[str, Any]) -> Iterator[str]:
    """The turn brings in the one memory `memory` names: not another (a number off by one), and
    not a second beside it ("the one memory that is most relevant")."""
    memories = list(v["memories"])
    numbers = [int(m["number"]) for m in memories]
    if len(memories) < 2 or out.memory not in numbers:
        return
    held = own_units_held([str(m["text"]) for m in memories], out.response,
                          " ".join(str(t["content"]) for t in v.get("history", ())))
    least = DRAWN["zh" if v.get("language") == "zh" else "en"]
    named = held[numbers.index(out.memory)]
    drawn = sorted(((n, h) for n, h in zip(numbers, held) if n != out.memory and h >= least), key=lambda x: -x[1])
    if drawn and named * 3 < drawn[0][1]:
        yield say(v, f"`response` draws on memory {drawn[0][0]}, not on memory {out.memory} that `memory` names: "
                     "put the number of the memory your turn brings in",
                  f"`response` 用的是第 {drawn[0][0]} 条记忆，而 `memory` 写的是第 {out.memory} 条：请填写回复里提到的那条记忆的编号")
    elif drawn:
        yield say(v, f"`response` brings in memory {drawn[0][0]} beside memory {out.memory}: bring in one memory only",
                  f"`response` 在第 {out.memory} 条之外还用到了第 {drawn[0][0]} 条记忆：只用一条记忆")


# "while none of the other memories listed (same theme and category) would fit" (scene.j2): held
# to the shared corpus and eight held-out rounds, an acceptable scene holds at most 2 of a listed
# negative's own units (English stems, Chinese character pairs, of which it holds at most 1); a
# scene set where a negative happened (the case review, the practical exam) holds 4-11 of that
# negative's, and one that names the negative by its title 3 or more.
OTHER_MEMORY = {"en": 3, "zh": 4}
_LEAD_IN = re.compile(r"^(During '[^']*', |在“[^”]*”期间的?)")


@check("fits_no_other_memory")
def fits_no_other_memory(out: Scene, v: Mapping[str, Any]) -> Iterator[str]:
    negatives = [str(n) for n in v.get("negatives", ())]
    if not negatives:
        return
    target = v["target"]["text"] if isinstance(v.get("target"), Mapping) else str(v.get("target", ""))
    known = " ".join(str(v.get(k, "")) for k in ("profile_summary", "theme_name", "need_description"))
    held = own_units_held([str(target), *negatives], out.scene, known)
    least = OTHER_MEMORY["zh" if v.get("language") == "zh" else "en"]
    for negative, count in zip(negatives, held[1:]):
        if count >= least:
            negative = _LEAD_IN.sub("", negative)  # "During 'theme', " says nothing of which memory
            yield say(v, f"the scene is set where another listed memory happened ({negative[:80]!r}): that memory would "
                         "support the user as well as the target; set it where only the target fits",
                      f"场景发生在另一条列出的记忆的情境里（“{negative[:40]}”），那条记忆同样适合安慰用户；"
                      "请换一个只有目标记忆才合适的场景")
            return
