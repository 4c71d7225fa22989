"""pal draws what the seed's code draws: over many draws, the weights and ranges of Mem-PAL."""

from __future__ import annotations

import datetime as dt
import random
from collections import Counter

from flows.pal.options import DISCUSSION_TURNS, HISTORY_SOLUTIONS, NEEDS_PREDICTED, QUERY_SOLUTIONS
from flows.pal.plan import TopicPlan, build_skeleton, plan_topic, sample_dialogues, situation_times
from schemas.pal import SolutionPreferences, TopicRequirement

N = 20_000
PREFS = SolutionPreferences(analysis="a", liked=[{"solution": f"like {i}", "reason": "r"} for i in range(2)],
                            disliked=[{"solution": f"hate {i}", "reason": "r"} for i in range(2)])
REQ = TopicRequirement(requirement_id="work-1", user_query="q", requirement="r", implicit_needs=[
    {"need": "a", "evidences": ["e"]}, {"need": "b", "evidences": ["f"]}])


def shares(counts: Counter) -> dict:
    total = sum(counts.values())
    return {k: v / total for k, v in counts.items()}


def close(observed: dict, expected: dict, tolerance: float = 0.02) -> bool:
    return set(observed) == set(expected) and all(abs(observed[k] - p) < tolerance for k, p in expected.items())


def test_situation_hours_are_drawn_from_the_seed_ranges():
    rng = random.Random(1)
    starts, ends = Counter(), Counter()
    for _ in range(N):
        start, end = situation_times(dt.date(2024, 3, 1), dt.date(2024, 3, 5), rng)
        starts[start.hour] += 1
        ends[end.hour] += 1
        assert start.date() == dt.date(2024, 3, 1) and end.date() == dt.date(2024, 3, 5)
    assert close(shares(starts), {h: 1 / 6 for h in range(7, 13)})
    assert close(shares(ends), {h: 1 / 10 for h in range(12, 22)})


def test_dialogue_sessions_are_sampled_as_the_seed_samples():
    rng = random.Random(2)
    months = [f"2024-{m:02d}" for m in range(1, 13) for _ in range(5)]
    kept = total = 0
    for _ in range(2000):
        chosen = sample_dialogues(months, "2024-12", rng, rate=0.6, max_skipped=3)
        kept += sum(chosen)
        total += len(chosen)
        assert any(c for c, m in zip(chosen, months) if m == "2024-12")
        run = longest = 0
        for c in chosen:
            run = 0 if c else run + 1
            longest = max(longest, run)
        assert longest <= 3
    # 0.6 per situation, nudged up by the forced keep after three skips.
    assert 0.6 < kept / total < 0.66, kept / total


def test_topic_plans_follow_the_seed_weights():
    rng = random.Random(3)
    history = [plan_topic(1, "work-1", REQ, PREFS, "history", rng) for _ in range(N)]
    query = [plan_topic(1, "work-1", REQ, PREFS, "query", rng) for _ in range(N)]
    assert close(shares(Counter(len(p.proposals) for p in history)), HISTORY_SOLUTIONS)
    assert close(shares(Counter(len(p.proposals) for p in query)), QUERY_SOLUTIONS)
    assert close(shares(Counter(p.needs for p in history + query)), NEEDS_PREDICTED)
    assert {f for p in query for _, f, _ in p.proposals} == {"pos"}
    assert {f for p in history for _, f, _ in p.proposals} == {"pos", "neg"}
    for p in history:
        assert len({s for s, _, _ in p.proposals}) == len(p.proposals)


def test_discussion_turns_follow_the_seed_weights():
    rng = random.Random(4)
    discussions = Counter()
    for _ in range(N // 4):
        topic = TopicPlan(1, "work-1", REQ, 1, (("s1", "pos", "r"), ("s2", "neg", "r")))
        skeleton = build_skeleton([topic], rng)
        for j in (1, 2):
            discussions[sum(1 for t in skeleton if t["user_action"] == "solution_discussion"
                            and t["user_reference"] == f"T1_S{j}")] += 1
    assert close(shares(discussions), DISCUSSION_TURNS)
