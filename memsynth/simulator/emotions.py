"""How the simulator scores emotions: a few cue words per emotion (en and zh) raise its
score, the rest is a small draw, so texts that share a mood get close vectors."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memsynth.generation.emotions import EMOTIONS
from memsynth.simulator.answers import AnswerBook
from memsynth.simulator.text import TextMaker

ANSWERS = AnswerBook("emotions")
CUES = {
    "joy": ("happy", "glad", "excited", "love", "great", "proud", "开心", "高兴", "喜欢", "骄傲", "兴奋"),
    "acceptance": ("thanks", "agree", "trust", "support", "谢谢", "支持", "信任", "理解"),
    "fear": ("afraid", "scared", "worried", "anxious", "nervous", "害怕", "担心", "焦虑", "紧张"),
    "surprise": ("suddenly", "surprised", "unexpected", "wow", "突然", "没想到", "惊讶", "竟然"),
    "sadness": ("sad", "lonely", "tired", "miss", "lost", "cry", "难过", "孤独", "累", "想念", "失落", "哭"),
    "disgust": ("gross", "hate", "awful", "恶心", "讨厌", "糟糕"),
    "anger": ("angry", "unfair", "furious", "annoyed", "生气", "愤怒", "不公平", "烦"),
    "anticipation": ("plan", "hope", "soon", "tomorrow", "goal", "计划", "希望", "明天", "目标", "期待"),
}


@ANSWERS.stage("score")
def score(draft: dict[str, Any], v: Mapping[str, Any], text: TextMaker) -> dict[str, Any]:
    lowered = str(v["text"]).lower()
    scores = []
    for emotion in EMOTIONS:
        hits = sum(lowered.count(cue) for cue in CUES[emotion])
        value = min(10, 1 + text.rng.randint(0, 2) + 3 * hits)
        scores.append({"dim": emotion, "analysis": text.sentence(), "score": value})
    draft["scores"] = scores
    return draft
