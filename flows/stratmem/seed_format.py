"""StratMem-Bench's own JSON, written from a stratmem release's view and checked key for key.

The models below describe the real release (../shared/reference-data/stratmem): the tests
hold them against that file, so `verify` checks our files by the real shapes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, RootModel, StringConstraints

from memsynth.release.files import write_json
from memsynth.release.folder import ReleaseFolder
from memsynth.release.verify import model_problems

FILE = "StratMemBench.json"
# The same instances with at most two nice memories each (the seed's §5.2 evaluation set).
TEST_FILE = "StratMemBench_test.json"
QUERY_TIME = r"^\d{1,2}:\d{2} [ap]m on \d{1,2} [A-Z][a-z]+, \d{4}$"
PERSONA_KEYS = ("virtual_person_name", "summary", "traits", "style", "domains", "values")

Text = Annotated[str, StringConstraints(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class Fact(_Strict):
    fact: Text


class Memory(_Strict):
    must: list[Fact]
    nice: list[Fact]
    irr: list[Fact]


class Roles(_Strict):
    human: Text
    virtual_person: Text


class Persona(_Strict):
    virtual_person_name: Text
    summary: Text | list[Text]  # the release has both: a paragraph, or its sentences
    traits: list[Text]
    style: list[Text]
    domains: list[Text]
    values: list[Text]


class Instance(_Strict):
    id: Text
    given_type: Literal["A", "B", "C"]
    inferred_type: Literal["A", "B", "C"]
    query: Text
    query_time: Annotated[str, StringConstraints(pattern=QUERY_TIME)]
    history: str  # "" or a JSON list of "Speaker: text" lines, itself JSON-encoded
    roles: Roles
    memory: Memory
    virtual_person_persona: Persona


class StratMemFile(RootModel[list[Instance]]):
    pass


def encode_history(lines: list[str]) -> str:
    """The release's history field: "" when empty, else the lines as indented JSON text."""
    return json.dumps(lines, ensure_ascii=False, indent=2) if lines else ""


def decode_history(text: str) -> list[str]:
    return json.loads(text) if text else []


def instance(row: Mapping[str, Any], nice: str = "nice") -> dict[str, Any]:
    """One release instance from a row of the `instances` view, key for key."""
    persona = row["virtual_person_persona"]
    persona = json.loads(persona) if isinstance(persona, str) else persona
    return {
        "id": row["id"], "given_type": row["given_type"], "inferred_type": row["inferred_type"],
        "query": row["query"], "query_time": row["query_time"], "history": encode_history(list(row["history"])),
        "roles": {"human": row["human"], "virtual_person": row["virtual_person"]},
        "memory": {role: [{"fact": f} for f in row[key]]
                   for role, key in (("must", "must"), ("nice", nice), ("irr", "irr"))},
        "virtual_person_persona": {k: persona[k] for k in PERSONA_KEYS},
    }


class StratMemFormat:
    """`StratMemBench.json` (every memory) and `StratMemBench_test.json` (nice down-sampled)."""

    name = "stratmem-bench"
    description = (f"StratMem-Bench's JSON: `{FILE}` as the seed released it, and `{TEST_FILE}`, the "
                   "same instances with at most two nice memories each, drawn once with a fixed seed")

    def write(self, views: Mapping[str, list[dict[str, Any]]], folder: Path, language: str) -> None:
        rows = views["instances"]
        # The released file ends without a newline; ours too, so a round trip is byte for byte.
        write_json([instance(r) for r in rows], folder / FILE, final_newline=False)
        write_json([instance(r, nice="nice_test") for r in rows], folder / TEST_FILE, final_newline=False)

    def problems(self, folder: ReleaseFolder | Path) -> Iterator[str]:
        folder = ReleaseFolder.of(folder)
        problems = [p for name in (FILE, TEST_FILE) for p in model_problems(folder, name, StratMemFile)]
        yield from problems
        if not problems:  # both files have the release's shape: ids and memories are there to compare
            yield from split_problems(folder.read_json(FILE), folder.read_json(TEST_FILE))  # type: ignore[arg-type]


def split_problems(full: list[dict], test: list[dict]) -> Iterator[str]:
    """The test split is the full one with nice memories down-sampled to at most two."""
    if [i["id"] for i in full] != [i["id"] for i in test]:
        yield f"{TEST_FILE}: does not hold the same instances as {FILE}"
        return
    for a, b in zip(full, test, strict=True):
        nice = [f["fact"] for f in b["memory"]["nice"]]
        if len(nice) > 2 or not set(nice) <= {f["fact"] for f in a["memory"]["nice"]}:
            yield f"{TEST_FILE}: {b['id']}: nice must be at most two of the full instance's nice memories"
        if {k: v for k, v in a.items() if k != "memory"} != {k: v for k, v in b.items() if k != "memory"} or \
                a["memory"]["must"] != b["memory"]["must"] or a["memory"]["irr"] != b["memory"]["irr"]:
            yield f"{TEST_FILE}: {b['id']}: differs from {FILE} beyond its nice memories"
