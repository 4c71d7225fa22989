"""What pal decides in code with the build seed: times, which situations become
dialogues, and each dialogue's skeleton of actions (the seed's Mem-PAL code)."""

from __future__ import annotations

import calendar
import datetime as dt
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from flows.pal.options import (
    DISCUSSION_TURNS,
    END_HOURS,
    HISTORY_SOLUTIONS,
    NEEDS_PREDICTED,
    QUERY_SOLUTIONS,
    START_HOURS,
)
from schemas.pal import SolutionPreferences, TopicRequirement

MINUTE = "%Y-%m-%d %H:%M"

# Action labels as the released PAL-Set writes them: Table 5's names in English, the
# real files' names in Chinese. Rows store the English code whatever the language.
ACTION_LABELS: dict[str, dict[str, str]] = {
    "en": {"topic_inquiry": "topic_inquiry", "requirement_confirmation": "requirement_confirmation",
           "solution_discussion": "solution_discussion", "solution_feedback": "solution_feedback",
           "requirement_prediction": "requirement_prediction", "solution_proposal": "solution_proposal",
           "feedback_response": "feedback_response"},
    "zh": {"topic_inquiry": "话题询问", "requirement_confirmation": "需求确认",
           "solution_discussion": "方案讨论", "solution_feedback": "方案反馈",
           "requirement_prediction": "需求推测", "solution_proposal": "方案提议",
           "feedback_response": "反馈回应"},
}


def weighted(rng: random.Random, weights: Mapping[int, float]) -> int:
    """One draw from {value: weight}."""
    return rng.choices(list(weights), weights=list(weights.values()))[0]


def situation_times(start: dt.date, end: dt.date, rng: random.Random) -> tuple[dt.datetime, dt.datetime]:
    """A span's first moment (random hour 7-12) and last (random hour 12-21, the dialogue's time)."""
    return (dt.datetime.combine(start, dt.time(rng.randint(*START_HOURS))),
            dt.datetime.combine(end, dt.time(rng.randint(*END_HOURS))))


def sample_dialogues(months: Sequence[str], query_month: str, rng: random.Random, *,
                     rate: float, max_skipped: int, attempts: int = 1000) -> list[bool]:
    """Which situations (given by their months, in order) become dialogue sessions.

    Each with probability `rate`, never more than `max_skipped` skipped in a row, and
    drawn again until the query month holds at least one dialogue.
    """
    chosen: list[bool] = []
    for _ in range(attempts):
        chosen, skipped = [], 0
        for _month in months:
            keep = rng.random() < rate or skipped >= max_skipped
            chosen.append(keep)
            skipped = 0 if keep else skipped + 1
        if any(c for c, m in zip(chosen, months) if m == query_month) or query_month not in months:
            return chosen
    # Practically unreachable: force the query month's last situation.
    last = max(i for i, m in enumerate(months) if m == query_month)
    chosen[last] = True
    return chosen


def months_before(reference: dt.date, count: int) -> list[str]:
    """The `count` whole months before the reference date's month, oldest first."""
    year, month = reference.year, reference.month
    out = []
    for _ in range(count):
        month -= 1
        if month == 0:
            year, month = year - 1, 12
        out.append(f"{year:04d}-{month:02d}")
    return out[::-1]


def last_days(month: str) -> list[str]:
    year, m = map(int, month.split("-"))
    n = calendar.monthrange(year, m)[1]
    return [f"{month}-{d:02d}" for d in range(n - 2, n + 1)]


@dataclass(frozen=True)
class TopicPlan:
    """One topic of a session: its framework, the needs predicted and the solutions proposed."""

    index: int  # 1-based within the session
    requirement_id: str
    requirement: TopicRequirement
    needs: int  # how many implicit needs the assistant predicts (1-2)
    proposals: tuple[tuple[str, str, str], ...]  # (solution, feedback pos|neg, reason)


def plan_topic(index: int, requirement_id: str, requirement: TopicRequirement,
               prefs: SolutionPreferences, split: str, rng: random.Random) -> TopicPlan:
    """Needs and proposals of one topic: query topics propose liked solutions only."""
    liked = [(r.solution, "pos", r.reason) for r in prefs.liked]
    disliked = [(r.solution, "neg", r.reason) for r in prefs.disliked]
    needs = weighted(rng, NEEDS_PREDICTED)
    if split == "query":
        proposals = rng.sample(liked, weighted(rng, QUERY_SOLUTIONS))
    else:
        proposals = rng.sample(liked + disliked, weighted(rng, HISTORY_SOLUTIONS))
    return TopicPlan(index, requirement_id, requirement, needs, tuple(proposals))


def build_skeleton(topics: Sequence[TopicPlan], rng: random.Random) -> list[dict[str, str]]:
    """The turn-by-turn actions and references, following the seed's action grammar."""
    turns: list[dict[str, str]] = []

    def turn(ua: str, ur: str, aa: str, ar: str) -> None:
        turns.append({"user_action": ua, "user_reference": ur,
                      "assistant_action": aa, "assistant_reference": ar})

    for t in topics:
        p = f"T{t.index}"
        turn("topic_inquiry", f"{p}_Q", "requirement_prediction", f"{p}_N1")
        if t.needs == 2:  # the second need is inferred after the first is confirmed
            turn("requirement_confirmation", f"{p}_N1", "requirement_prediction", f"{p}_N2")
        turn("requirement_confirmation", f"{p}_N{t.needs}", "solution_proposal", f"{p}_S1")
        for j in range(1, len(t.proposals) + 1):
            for _ in range(weighted(rng, DISCUSSION_TURNS)):
                turn("solution_discussion", f"{p}_S{j}", "solution_discussion", f"{p}_S{j}")
            if j < len(t.proposals):
                turn("solution_feedback", f"{p}_S{j}", "solution_proposal", f"{p}_S{j + 1}")
            else:
                turn("solution_feedback", f"{p}_S{j}", "feedback_response", f"{p}_S{j}")
    return turns


def labelled(skeleton: Sequence[Mapping[str, str]], language: str) -> list[dict[str, str]]:
    """The skeleton with actions in the language's labels, as the prompt shows them."""
    labels = ACTION_LABELS[language]
    return [{**slot, "user_action": labels[slot["user_action"]],
             "assistant_action": labels[slot["assistant_action"]]} for slot in skeleton]


# The seed's action grammar as a regular language over (user, assistant) action pairs:
# per topic, inquiry, 1-2 confirmations, then per solution an optional discussion and
# the feedback (answered by the next proposal, or by a feedback response at the end).
_PAIR_LETTERS = {
    ("topic_inquiry", "requirement_prediction"): "Q",
    ("requirement_confirmation", "requirement_prediction"): "C",
    ("requirement_confirmation", "solution_proposal"): "P",
    ("solution_discussion", "solution_discussion"): "D",
    ("solution_feedback", "solution_proposal"): "F",
    ("solution_feedback", "feedback_response"): "R",
}
ACTION_GRAMMAR = re.compile(r"^(QC?P(D?F)*D?R)+$")


def conforms_to_grammar(pairs: Sequence[tuple[str, str]]) -> bool:
    """Does a sequence of (user action, assistant action) turns follow the action grammar?"""
    letters = "".join(_PAIR_LETTERS.get(tuple(p), "?") for p in pairs)
    return bool(ACTION_GRAMMAR.match(letters))


def references(topics: Sequence[TopicPlan]) -> list[dict[str, object]]:
    """The dialogue framework: what each reference label of the skeleton stands for."""
    out: list[dict[str, object]] = []
    for t in topics:
        p = f"T{t.index}"
        out.append({"label": f"{p}_Q", "kind": "query", "text": t.requirement.user_query})
        for n, need in enumerate(t.requirement.implicit_needs[: t.needs], start=1):
            out.append({"label": f"{p}_N{n}", "kind": "need", "text": need.need,
                        "evidences": list(need.evidences)})
        for j, (solution, feedback, reason) in enumerate(t.proposals, start=1):
            out.append({"label": f"{p}_S{j}", "kind": "solution", "text": solution,
                        "feedback": feedback, "reason": reason})
    return out
