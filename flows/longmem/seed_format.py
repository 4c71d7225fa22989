"""LongMemEval's own JSON (../shared/reference-data/longmemeval/README.md, "Dataset Format"),
written from a longmem release's views: the S-style file (each question with its whole
timestamped haystack) and the oracle file (only its evidence sessions). Its evaluate_qa.py
reads them unchanged. As LongMemEval's own files do, a question's evidence sessions are named
`answer_<id>` and alone carry `has_answer`; the persona's other evidence sessions in its haystack
keep their plain ids (the sessions view's)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel

from flows.longmem.plan import released_id, released_turns
from memsynth.release.files import write_json
from memsynth.release.folder import ReleaseFolder
from memsynth.release.verify import model_problems

S_FILE = "longmemeval_s.json"
ORACLE_FILE = "longmemeval_oracle.json"
QuestionType = Literal["single-session-user", "single-session-assistant", "single-session-preference",
                       "multi-session", "knowledge-update", "temporal-reasoning"]


class Turn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["user", "assistant"]
    content: str
    has_answer: bool | None = None


class Instance(BaseModel):
    model_config = ConfigDict(extra="forbid")
    question_id: str
    question_type: QuestionType
    question: str
    answer: str
    question_date: str
    haystack_session_ids: list[str]
    haystack_dates: list[str]
    haystack_sessions: list[list[Turn]]
    answer_session_ids: list[str]


class LongMemEvalFile(RootModel[list[Instance]]):
    pass


def instances(views: Mapping[str, list[dict[str, Any]]], oracle: bool = False) -> list[dict[str, Any]]:
    """Each question of the `questions` view as LongMemEval releases it."""
    sessions = {s["session_id"]: s for s in views["sessions"]}
    out = []
    for q in views["questions"]:
        answers = set(q["answer_session_ids"])
        ids = list(q["answer_session_ids"]) if oracle else list(q["haystack_session_ids"])
        ids = sorted(ids, key=lambda s: (sessions[s]["date"], s))
        out.append({"question_id": q["question_id"], "question_type": q["question_type"],
                    "question": q["question"], "answer": q["answer"], "question_date": q["question_date"],
                    "haystack_session_ids": [released_id(s, answers) for s in ids],
                    "haystack_dates": [sessions[s]["date"] for s in ids],
                    "haystack_sessions": [released_turns(json.loads(sessions[s]["turns_json"]), s in answers)
                                          for s in ids],
                    "answer_session_ids": [released_id(s, answers) for s in q["answer_session_ids"]]})
    return out


class LongMemEvalFormat:
    """`longmemeval_s.json` and `longmemeval_oracle.json`."""

    name = "longmemeval"
    description = (f"LongMemEval's JSON: `{S_FILE}` (each question with its timestamped haystack, sessions in "
                   f"time order) and `{ORACLE_FILE}` (only the evidence sessions); read unchanged by "
                   "LongMemEval's src/evaluation/evaluate_qa.py")

    def write(self, views: Mapping[str, list[dict[str, Any]]], folder: Path, language: str) -> None:
        write_json(instances(views), folder / S_FILE)
        write_json(instances(views, oracle=True), folder / ORACLE_FILE)

    def problems(self, folder: ReleaseFolder | Path) -> Iterator[str]:
        folder = ReleaseFolder.of(folder)
        found = [p for name in (S_FILE, ORACLE_FILE) for p in model_problems(folder, name, LongMemEvalFile)]
        yield from found
        if found:
            return
        full, oracle = folder.read_json(S_FILE), folder.read_json(ORACLE_FILE)
        if [i["question_id"] for i in full] != [i["question_id"] for i in oracle]:  # type: ignore[index]
            yield f"{ORACLE_FILE}: does not hold the questions of {S_FILE}"
        for item in full:  # type: ignore[union-attr]
            if item["haystack_dates"] != sorted(item["haystack_dates"]):
                yield f"{S_FILE}: {item['question_id']}: sessions not in time order"
            if not set(item["answer_session_ids"]) <= set(item["haystack_session_ids"]):
                yield f"{S_FILE}: {item['question_id']}: an answer session is not in its haystack"
            if {s for s in item["haystack_session_ids"] if "answer" in s} != set(item["answer_session_ids"]):
                yield f"{S_FILE}: {item['question_id']}: the sessions named answer_ are not its answer sessions"
