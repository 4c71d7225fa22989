"""PAL-Set's own files, written from a pal release's views and checked key for key.

The models below describe the real release (../shared/reference-data/pal): the tests
hold them against those files, so `verify` checks our files by the real shapes.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    RootModel,
    StringConstraints,
    model_validator,
)

from flows.pal.plan import ACTION_LABELS
from memsynth.release.files import write_json
from memsynth.release.folder import ReleaseFolder
from memsynth.release.verify import model_problems
from schemas.pal import ASPECTS  # work, health, family, leisure: the real files' order

USER_ID = r"^\d{4}$"
SECOND = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$"
MINUTE = r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$"
# The seed's action names per language: Table 5's English ones, the real files' Chinese ones.
ACTION_NAMES = {
    "en": {"topic_inquiry": "Topic Inquiry", "requirement_confirmation": "Requirement Confirmation",
           "solution_discussion": "Solution Discussion", "solution_feedback": "Solution Feedback",
           "requirement_prediction": "Requirement Prediction", "solution_proposal": "Solution Proposal",
           "feedback_response": "Feedback Response"},
    "zh": ACTION_LABELS["zh"],
}
KNOWN_ACTIONS = frozenset(name for names in ACTION_NAMES.values() for name in names.values())

Text = Annotated[str, StringConstraints(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Log(_Strict):
    timestamp: Annotated[str, StringConstraints(pattern=MINUTE)]
    content: Text


class Utterance(_Strict):
    action: Text
    content: Text

    @model_validator(mode="after")
    def _known(self) -> Utterance:
        if self.action not in KNOWN_ACTIONS:
            raise ValueError(f"unknown action label {self.action!r}")
        return self


class TurnPair(_Strict):
    user: Utterance
    assistant: Utterance


class Solution(_Strict):
    pos: list[Text] = Field(min_length=2, max_length=2)
    neg: list[Text] = Field(min_length=2, max_length=2)


class Candidate(_Strict):
    solution: Text
    feedback: Literal["pos", "neg", "neu"]


class Topic(_Strict):
    user_query: Text
    implicit_needs: list[Text] = Field(min_length=2, max_length=2)
    requirement: Text
    solution: Solution
    candidate_solutions: list[Candidate] = Field(min_length=8, max_length=8)

    @model_validator(mode="after")
    def _framework(self) -> Topic:
        if Counter(c.feedback for c in self.candidate_solutions) != {"pos": 2, "neg": 2, "neu": 4}:
            raise ValueError("candidate_solutions must hold 2 pos, 2 neg and 4 neu")
        for label in ("pos", "neg"):
            rated = [c.solution for c in self.candidate_solutions if c.feedback == label]
            # A set: the real files list them in the framework's order, not the candidates'.
            if set(getattr(self.solution, label)) != set(rated):
                raise ValueError(f"solution.{label} must be the candidates rated {label}")
        return self


def _numbered(keys: list[str], prefix: str) -> list[str]:
    expected = [f"{prefix}{i}" for i in range(1, len(keys) + 1)]
    return [] if keys == expected else [f"keys {keys} are not {prefix}1.. numbered consecutively"]


class Sample(_Strict):
    sample_id: Annotated[str, StringConstraints(pattern=r"^\d{4}_sample\d+$")]
    dialogue_timestamp: Annotated[str, StringConstraints(pattern=SECOND)]
    logs: list[Log]
    dialogue: dict[str, TurnPair] = Field(min_length=1)
    topics: dict[str, Topic] = Field(min_length=1)

    @model_validator(mode="after")
    def _order(self) -> Sample:
        problems = _numbered(list(self.dialogue), "turn_") + _numbered(list(self.topics), "topic-")
        stamps = [log.timestamp for log in self.logs]
        if stamps != sorted(stamps):
            problems.append("logs are not in time order")
        if stamps and stamps[-1] > self.dialogue_timestamp[:16]:
            problems.append(f"a log ({stamps[-1]}) comes after the dialogue ({self.dialogue_timestamp})")
        if problems:
            raise ValueError("; ".join(problems))
        return self


class UserSamples(_Strict):
    history: list[Sample]
    query: list[Sample]


class UserFile(RootModel[dict[Annotated[str, StringConstraints(pattern=USER_ID)], UserSamples]]):
    """`<user_id>.json`: one user's history and query samples."""

    @model_validator(mode="after")
    def _samples(self) -> UserFile:
        for user_id, user in self.root.items():
            samples = user.history + user.query
            ids = [s.sample_id for s in samples]
            if ids != [f"{user_id}_sample{i}" for i in range(len(ids))]:
                raise ValueError(f"user {user_id}: sample ids {ids} are not {user_id}_sample0.. over history then query")
            times = [s.dialogue_timestamp for s in samples]
            if times != sorted(times):
                raise ValueError(f"user {user_id}: dialogues are not in time order")
            for before, sample in zip(samples, samples[1:]):
                if sample.logs and sample.logs[0].timestamp <= before.dialogue_timestamp[:16]:
                    raise ValueError(f"{sample.sample_id}: its logs start before the previous dialogue")
        return self


class Personality(_Strict):
    Openness: Literal["low", "medium", "high"]
    Conscientiousness: Literal["low", "medium", "high"]
    Extraversion: Literal["low", "medium", "high"]
    Agreeableness: Literal["low", "medium", "high"]
    Neuroticism: Literal["low", "medium", "high"]


class Background(_Strict):
    name: Text
    gender: Text
    age: int
    occupation: Text
    health_status: Text = Field(alias="health status")
    family_members: Text = Field(alias="family members")
    hobbies: Text
    personality: Personality


Aspect = Literal[ASPECTS]  # type: ignore[valid-type]


def _requirement_ids(tree: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> None:
    for user_id, aspects in tree.items():
        for aspect, items in aspects.items():
            bad = [k for k in items if not re.fullmatch(rf"{aspect}-\d+", k)]
            if bad:
                raise ValueError(f"user {user_id}: requirement ids {bad} do not read {aspect}-<n>")


class Requirements(RootModel[dict[Annotated[str, StringConstraints(pattern=USER_ID)], dict[Aspect, dict[str, Text]]]]):
    """`requirement.json`: requirement types per user and aspect."""

    @model_validator(mode="after")
    def _ids(self) -> Requirements:
        _requirement_ids(self.root)
        return self


class PosNeg(_Strict):
    pos: Text
    neg: Text


class PreferenceEntry(_Strict):
    requirement: Text
    preference: PosNeg


class Preferences(RootModel[dict[Annotated[str, StringConstraints(pattern=USER_ID)],
                                 dict[Aspect, dict[str, PreferenceEntry]]]]):
    """`preference.json`: liked and disliked solution styles per requirement type."""

    @model_validator(mode="after")
    def _ids(self) -> Preferences:
        _requirement_ids(self.root)
        return self


Backgrounds = RootModel[dict[Annotated[str, StringConstraints(pattern=USER_ID)], Background]]


class PalSetFormat:
    """`users_<lang>/<user_id>.json`, `pal_input.json` (all users) and the profile files."""

    name = "pal-set"
    description = ("PAL-Set's layout: `users_<language>/<user_id>.json` (`{user_id: {history, query}}`), "
                   "`pal_input.json` with every user, and `background.json`, `requirement.json`, "
                   "`preference.json`")
    FILES = {"background.json": Backgrounds, "requirement.json": Requirements,
             "preference.json": Preferences, "pal_input.json": UserFile}

    def write(self, views: Mapping[str, list[dict[str, Any]]], folder: Path, language: str) -> None:
        users: dict[str, dict[str, list[dict[str, Any]]]] = {
            p["user_id"]: {"history": [], "query": []} for p in views["profiles"]}
        samples = sorted(views["samples"], key=lambda s: (s["user_id"], _sample_number(s["sample_id"])))
        for s in samples:
            users[s["user_id"]][s["sample_type"]].append(_sample_record(s))
        for user_id, user in users.items():
            write_json({user_id: user}, folder / f"users_{language}" / f"{user_id}.json")
        write_json(users, folder / "pal_input.json")
        write_json({p["user_id"]: _background(p) for p in views["profiles"]}, folder / "background.json")
        requirements: dict[str, dict[str, dict[str, Any]]] = {}
        preferences: dict[str, dict[str, dict[str, Any]]] = {}
        ordered = sorted(views["preferences"], key=lambda r: (
            r["user_id"], ASPECTS.index(r["aspect"]), int(r["requirement_id"].rsplit("-", 1)[1])))
        for r in ordered:
            requirements.setdefault(r["user_id"], {}).setdefault(r["aspect"], {})[r["requirement_id"]] = r["requirement"]
            preferences.setdefault(r["user_id"], {}).setdefault(r["aspect"], {})[r["requirement_id"]] = {
                "requirement": r["requirement"], "preference": {"pos": r["pos"], "neg": r["neg"]}}
        write_json(requirements, folder / "requirement.json")
        write_json(preferences, folder / "preference.json")

    def problems(self, folder: ReleaseFolder | Path) -> Iterator[str]:
        folder = ReleaseFolder.of(folder)
        valid = set()
        for name, model in self.FILES.items():
            problems = list(model_problems(folder, name, model))
            yield from problems
            valid |= set() if problems else {name}
        user_files = folder.glob("users_*/*.json")
        if not user_files:
            yield "no users_<language>/<user_id>.json files"
        for rel in user_files:
            problems = list(model_problems(folder, rel, UserFile))
            yield from problems
            if not problems and list(folder.read_json(rel)) != [folder.stem(rel)]:  # type: ignore[call-overload]
                yield f"{rel}: the file's user id is not {folder.stem(rel)}"
        if "pal_input.json" in valid and user_files:  # read only once it has the users' shape
            if set(folder.read_json("pal_input.json")) != {folder.stem(p) for p in user_files}:  # type: ignore[call-overload]
                yield "pal_input.json: its users differ from the users_* files"


def _sample_number(sample_id: str) -> int:
    return int(sample_id.rsplit("sample", 1)[1])


def _sample_record(s: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "sample_id": s["sample_id"],
        "dialogue_timestamp": s["dialogue_timestamp"],
        "logs": [{"timestamp": log["timestamp"], "content": log["content"]} for log in s["logs"]],
        "dialogue": {t["turn"]: {"user": t["user"], "assistant": t["assistant"]} for t in s["dialogue"]},
        "topics": {t["topic"]: {
            "user_query": t["user_query"], "implicit_needs": t["implicit_needs"],
            "requirement": t["requirement"], "solution": t["solution"],
            "candidate_solutions": t["candidate_solutions"]} for t in s["topics"]},
    }


def _background(p: Mapping[str, Any]) -> dict[str, Any]:
    return {"name": p["name"], "gender": p["gender"], "age": p["age"], "occupation": p["occupation"],
            "health status": p["health_status"], "family members": p["family_members"],
            "hobbies": p["hobbies"], "personality": p["personality"]}
