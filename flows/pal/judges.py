"""pal's judges: a model reviews what code cannot see, and its verdict becomes repair problems.

Each judge is a stage of its own (`prompts/pal/<stage>_review.j2`), asked after the judged
stage's checks pass; a criterion it finds unmet is handed back like a failed check.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from memsynth.generation.stage import Judge, Stage, say
from schemas.pal import PreferencesReview, RequirementsReview, SolutionPreferencesReview


def generic_preferences(out: PreferencesReview, v: Mapping[str, Any]) -> Iterator[str]:
    for item in out.items:
        if not item.personal:
            yield say(v, f"{item.requirement_id}: the preferences are what nearly anyone would accept or reject "
                         f"({item.reason}); make pos and neg this user's own",
                      f"{item.requirement_id}：偏好是几乎人人都会接受或拒绝的（{item.reason}）；请让 pos 和 neg 体现这位用户自己的特点")


def needs_off_topic(out: RequirementsReview, v: Mapping[str, Any]) -> Iterator[str]:
    for t in out.topics:
        if not t.needs_on_topic:
            yield say(v, f"{t.requirement_id}: an implicit need strays from the topic's requirement type ({t.reason}); "
                         "both needs must belong to it",
                      f"{t.requirement_id}：有一个隐含需求偏离了该话题的需求类型（{t.reason}）；两个需求都必须属于它")


def choices_against_preferences(out: SolutionPreferencesReview, v: Mapping[str, Any]) -> Iterator[str]:
    if not out.liked_fit:
        yield say(v, f"a liked solution does not fit the user's preferences ({out.reason}); like only solutions "
                     "that fit what the user accepts and none of what they reject",
                  f"有一个喜欢的方案不符合用户的偏好（{out.reason}）；只能喜欢符合用户接受类型、且不属于拒绝类型的方案")
    if not out.disliked_clash:
        yield say(v, f"a disliked solution is not one the user's preferences turn down ({out.reason}); dislike "
                     "solutions that meet what the user rejects or miss what they accept",
                  f"有一个不喜欢的方案并不是用户偏好会拒绝的（{out.reason}）；不喜欢的应是属于用户拒绝类型、或不符合其接受类型的方案")


def _review(name: str, output: type, verdict: Any) -> Judge:
    return Judge(Stage("pal", name, output, policy="drop", temperature=0.0, kind="judge"), verdict)


PREFERENCES = _review("preferences_review", PreferencesReview, generic_preferences)
REQUIREMENTS = _review("requirements_review", RequirementsReview, needs_off_topic)
SOLUTION_PREFERENCES = _review("solution_preferences_review", SolutionPreferencesReview, choices_against_preferences)
