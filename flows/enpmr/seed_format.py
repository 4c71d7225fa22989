"""ENPMR-Bench's release layout, written from an enpmr release's views and checked by models.

ENPMR-Bench published no data we could obtain; the models follow its documented layout
(../shared/reference-data/README.md) and the field names and MM/DD/YYYY dates of the
paper's generation prompts.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, StringConstraints, model_validator

from flows.enpmr.options import NEEDS
from memsynth.release.files import write_json
from memsynth.release.folder import ReleaseFolder
from memsynth.release.verify import model_problems
from schemas.enpmr import Goal, Highlight, Power, Preference, Relationship

FILE = "enpmr_bench.json"
DATE = r"^\d{2}/\d{2}/\d{4}$"
THEMED = ("relationship", "power", "goal", "highlight")
# Each category's fields in the seed's order (its prompt's JSON), name first and date last.
FIELDS = {model.__name__.lower(): [f for f in model.model_fields if f not in ("name", "date")]
          for model in (Relationship, Power, Goal, Highlight, Preference)}
ROLES = {"user": "User", "ai": "AI", "assistant": "AI"}

Text = Annotated[str, StringConstraints(min_length=1)]
Date = Annotated[str, StringConstraints(pattern=DATE)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)


class Utterance(_Strict):
    role: Literal["User", "AI"]
    content: Text


class LifeTheme(_Strict):
    theme: Text
    description: Text
    date: Date


class MemoryEntry(_Strict):
    date: Date
    type: Literal["relationship", "power", "goal", "highlight", "preference"]
    big_event: str | None
    event: Text
    dialog: list[Utterance]


class DialogRecord(_Strict):
    Scene: Text
    Dialogue: list[Utterance] = Field(min_length=2)
    Memory_Turn: list[int] = Field(alias="Memory Turn", min_length=1, max_length=1)
    big_event: str | None
    type: Literal["relationship", "power", "goal", "highlight", "preference"]
    memory: Text
    need: Literal[tuple(NEEDS["en"])]  # type: ignore[valid-type]
    negatives: list[Text] = Field(min_length=2, max_length=3)

    @model_validator(mode="after")
    def _turn(self) -> DialogRecord:
        if not 1 <= self.Memory_Turn[0] <= len(self.Dialogue):
            raise ValueError(f"Memory Turn {self.Memory_Turn[0]} is not a turn of the dialogue")
        return self


class PersonaRecord(_Strict):
    id: Text
    name: Text
    age: int
    gender: Text
    occupation: Text
    education: Text
    personality: list[str]
    habits: list[str]
    social: list[str]
    emotional_pattern: list[str]
    goals: list[str]
    communication_style: list[str]
    preferences: list[str]
    preference: list[dict[str, str]]
    big_event: list[LifeTheme] = Field(min_length=1)
    relationship: dict[str, list[dict[str, str]]]
    power: dict[str, list[dict[str, str]]]
    goal: dict[str, list[dict[str, str]]]
    highlight: dict[str, list[dict[str, str]]]
    memory_bank: list[MemoryEntry]
    dialog: list[DialogRecord]

    @model_validator(mode="after")
    def _links(self) -> PersonaRecord:
        themes = {t.theme for t in self.big_event}
        for category in THEMED:
            for theme, items in getattr(self, category).items():
                if theme not in themes:
                    raise ValueError(f"{category} is grouped under {theme!r}, which is not a big_event")
                for item in items:
                    if list(item) != ["name", *FIELDS[category], "date"]:
                        raise ValueError(f"a {category} item has keys {list(item)}")
        dates = [_date(m.date) for m in self.memory_bank]
        if dates != sorted(dates):
            raise ValueError("memory_bank is not in date order")
        events = {m.event for m in self.memory_bank}
        for d in self.dialog:
            if d.memory not in events or not set(d.negatives) <= events:
                raise ValueError("a dialog's memory or negative is not in the memory_bank")
        return self


PersonaRecords = RootModel[list[PersonaRecord]]


def _date(text: str) -> dt.date:
    return dt.datetime.strptime(text, "%m/%d/%Y").date()


def _us(date: dt.date) -> str:
    return date.strftime("%m/%d/%Y")


def _turns(turns: list[Mapping[str, Any]] | None) -> list[dict[str, str]]:
    return [{"role": ROLES.get(t["role"].lower(), t["role"]), "content": t["content"]} for t in turns or []]


def _item(memory: Mapping[str, Any]) -> dict[str, str]:
    attributes = json.loads(memory["attributes"])
    return {"name": memory["name"], **{f: attributes[f] for f in FIELDS[memory["category"]]},
            "date": _us(memory["date"])}


class EnpmrBenchFormat:
    """`enpmr_bench.json`: a list of persona records, as ENPMR-Bench documents its release."""

    name = "enpmr-bench"
    description = ("ENPMR-Bench's layout: `enpmr_bench.json`, a list of persona records (profile, "
                   "`preference`, `big_event`, memories grouped by life theme, `memory_bank`, `dialog`)")

    def write(self, views: Mapping[str, list[dict[str, Any]]], folder: Path, language: str) -> None:
        banks = {row["persona_id"]: row["sessions"] for row in views["memory_bank"]}
        dialogues: dict[str, list[dict[str, Any]]] = {}
        for d in views["dialogues"]:
            dialogues.setdefault(d["persona_id"], []).append(d)
        records = []
        for profile in views["profiles"]:
            pid = profile["persona_id"]
            memories = banks.get(pid) or []
            record: dict[str, Any] = {"id": pid, **{k: profile[k] for k in PersonaRecord.model_fields
                                                    if k in profile and k != "persona_id"}}
            record["preference"] = [_item(m) for m in memories if m["category"] == "preference"]
            record["big_event"] = [{"theme": t["theme"], "description": t["description"],
                                    "date": _us(t["start_date"])} for t in profile["life_themes"] or []]
            for category in THEMED:
                grouped: dict[str, list[dict[str, str]]] = {t["theme"]: [] for t in record["big_event"]}
                for m in memories:
                    if m["category"] == category:
                        grouped.setdefault(m["theme"], []).append(_item(m))
                record[category] = {theme: items for theme, items in grouped.items() if items}
            record["memory_bank"] = [{"date": _us(m["date"]), "type": m["category"], "big_event": m["theme"],
                                      "event": m["text"], "dialog": _turns(m["session"])} for m in memories]
            record["dialog"] = [{
                "Scene": d["scene"], "Dialogue": _turns(d["turns"]), "Memory Turn": [d["memory_turn"]],
                "big_event": d["target_memory"]["theme"], "type": d["target_memory"]["category"],
                "memory": d["target_memory"]["text"], "need": d["need"],
                "negatives": [n["text"] for n in d["negatives"] or []],
            } for d in dialogues.get(pid, [])]
            records.append(record)
        write_json(records, folder / FILE)

    def problems(self, folder: ReleaseFolder | Path) -> Iterator[str]:
        yield from model_problems(folder, FILE, PersonaRecords)
