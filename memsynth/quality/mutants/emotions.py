"""The aims of emotion scoring (memsynth.generation.emotions.SCORE), the one stage every
recipe that can be annotated shares: its rules (EMOTION_RULES) are in each of those recipes'
tables and are measured once, on the answers of the `emotions` files, in rows of their own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memsynth.quality.mutants.base import SCHEMA_RULE, Aim
from memsynth.quality.mutants.fields import Copy, Fields, Set
from memsynth.quality.mutants.rewrite import Rewrite
from memsynth.quality.mutants.sizes import Count, Sentences


def _translated(v: Mapping[str, Any]) -> str:
    """An emotion named in the build's language, or by a synonym, where the prompt lists its names."""
    return "喜悦" if v.get("language") == "zh" else "happiness"


def _others_quoted(v: Mapping[str, Any], language: str) -> list[str]:
    """An analysis whose evidence is another speaker's words, quoted (a memory's other lines)."""
    from memsynth.generation.emotions import _TURN

    speaker = str(v.get("speaker", "")).strip()
    lines = [t.group(2) for t in map(_TURN.match, str(v.get("text", "")).splitlines())
             if t and t.group(1).strip() != speaker and t.group(2).strip()]
    if v.get("kind") != "memory" or not lines:
        return []
    out = []
    for line in lines[:2]:
        words = line.split()
        said = " ".join(words[:6]) if language != "zh" else line[:12]
        out.append(f"对方那句“{said}”说明{speaker}此刻情绪很强烈。" if language == "zh"
                   else f"The line \"{said}\" shows how strongly {speaker} feels this.")
    return out


AIMS = (
    # eight emotions, each once: one dropped or added, one scored twice (another not at all),
    # one named off the list.
    Aim("emotions-eight", ("score",), Count("scores", low=8, high=8)),
    Aim("emotions-eight", ("score",), Copy("scores[*].dim", "emotion_twice")),
    Aim("emotions-eight", ("score",), Set("scores[0].dim", _translated, "translated_emotion")),
    # a whole number from 1 to 10, after a one-sentence analysis.
    Aim("emotions-scale", ("score",), Set("scores[0].score", 0, "below_scale")),
    Aim("emotions-scale", ("score",), Set("scores[0].score", 11, "above_scale")),
    Aim("emotions-scale", ("score",), Set("scores[0].score", 6.5, "fractional_score")),
    Aim("emotions-scale", ("score",), Set("scores[0].analysis", "", "no_analysis")),
    Aim("emotions-scale", ("score",), Sentences("scores[*].analysis", high=1, places=2)),
    # a memory scored on its speaker's own words, not on what the other person said.
    Aim("emotions-what", ("score",), Rewrite("scores[*].analysis", _others_quoted, "others_words")),
    Aim(SCHEMA_RULE, ("score",), Fields()),
)
