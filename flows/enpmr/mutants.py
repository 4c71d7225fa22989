"""enpmr's mutants: each rule of rules.py broken on purpose in good answers
(memsynth.quality.mutants; `python -m memsynth.quality.mutants` prints the table)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from flows.enpmr.evaluation import STAGES as EVAL_STAGES
from flows.enpmr.options import REPLY_LIMIT
from flows.enpmr.stages import STAGES
from memsynth.quality.mutants import (
    SCHEMA_RULE,
    Aim,
    Count,
    Duplicate,
    Fields,
    InsertPerson,
    InsertText,
    Longer,
    Moved,
    Replace,
    Sentences,
    Set,
)
from memsynth.quality.mutants.text import names_in

MEMORIES = ("relationship", "power", "goal", "highlight")
# A memory's people, as memory_text (flows/enpmr/plan.py) writes them.
_RELATION = {"en": re.compile(r"^During '.*?', (.+?) \(the user's (.+?), "),
             "zh": re.compile(r"期间，(.+?)（用户的(.+?)，")}
_RECOGNISED = {"en": re.compile(r"recognised by (.+?): "), "zh": re.compile(r"得到(.+?)的认可")}


def people_of(text: str, language: str) -> list[tuple[str, str]]:
    """(name, relation to the user) of the people a memory's text names."""
    if m := _RELATION[language].search(text):
        return [(m.group(1), m.group(2))]
    if m := _RECOGNISED[language].search(text):
        return [(name, "") for name in names_in(m.group(1), language)]
    return []


def _target_people(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    return people_of(str(v["target"]["text"]), language)


def _negative_people(v: Mapping[str, Any], language: str) -> list[tuple[str, str]]:
    return [p for n in v.get("negatives", []) for p in people_of(str(n), language)]


def _turns(role: str, before_memory_turn: bool = False):
    def where(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        end = answer.get("memory_turn", 1) - 1 if before_memory_turn else len(answer.get("turns", []))
        return [("turns", i, "content") for i, t in enumerate(answer.get("turns", [])[:end]) if t["role"] == role]
    return where


def _memory_turn(answer: Any, v: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    k = answer.get("memory_turn", 0)
    return [("turns", k - 1, "content")] if 1 <= k <= len(answer.get("turns", [])) else []


def _form(v: Mapping[str, Any], language: str) -> list[str]:
    """The persona's attributes as a form rather than prose."""
    if language == "zh":
        return [f"职业：{v['occupation']}。年龄：{v['age_band']}。地区：{v['region']}。"]
    return [f"Occupation: {v['occupation']}. Age: {v['age_band']}. Region: {v['region']}."]


def _quoted_title(v: Mapping[str, Any], language: str) -> list[str]:
    """The memory's title said word for word, when it is long enough to be a title, not a phrase."""
    name = str(v["memory"]["name"])
    if (len(name) < 8) if language == "zh" else (len(name.split()) < 5):
        return []
    return [f"就是那次“{name}”。"] if language == "zh" else [f'That was "{name}".']


def _high_score(answer: Any, v: Mapping[str, Any]) -> bool:
    return answer.get("score", 0) > 3


_GENERIC = {"en": ("Whatever happens, you'll get through this, you always do.",),
            "zh": ("不管怎样，你一定能撑过去的，你一直都可以。",)}

AIMS = (
    Aim("persona-prose", ("persona",), InsertText("description", _form, "attribute_form")),
    Aim("distinct-memories", ("profile",), Duplicate("preferences")),
    Aim("life-themes", ("life_themes",), Count("themes", low=lambda v: v["min_themes"])),
    Aim("life-themes", ("life_themes",), Moved("themes[*].start_date", after=lambda v: v["reference_date"],
                                               before=lambda v: v["window_start"])),
    Aim("life-themes", ("life_themes",), Duplicate("themes", keys=("theme", "description"))),
    Aim("memory-counts", MEMORIES, Count("items", low=lambda v: v["min_items"])),
    Aim("memory-dates", MEMORIES, Moved("items[*].date", after=lambda v: v["reference_date"],
                                        before=lambda v: str(v["theme"]["start_date"]))),
    Aim("distinct-memories", ("power", "goal", "highlight", "preferences"),
        Duplicate("items", keys=("name", "description"))),
    Aim("distinct-memories", ("relationship",), Duplicate("items", keys=("characteristic",), times=1)),
    Aim("preferences", ("preferences",), Count("items", low=lambda v: v["min_items"])),
    Aim("preferences", ("preferences",), Moved("items[*].date", after=lambda v: v["reference_date"],
                                               before=lambda v: v["window_start"])),
    Aim("session-form", ("memory_session",), Count("turns", low=lambda v: v["min_turns"],
                                                   high=lambda v: v["max_turns"])),
    Aim("session-quotes-no-title", ("memory_session",), InsertText(_turns("user"), _quoted_title, "quote_title")),
    Aim("scene-form", ("scene",), Sentences("scene", low=2, high=4)),
    Aim("scene-form", ("scene",), InsertPerson("scene", _target_people, voice="narrator")),
    Aim("dialogue-form", ("support_dialogue",), Count("turns", low=lambda v: v["min_turns"],
                                                      high=lambda v: v["max_turns"])),
    Aim("user-never-mentions", ("support_dialogue",), InsertPerson(_turns("user"), _target_people, voice="user")),
    Aim("no-early-recall", ("support_dialogue",), InsertPerson(_turns("ai", True), _target_people, voice="ai")),
    Aim("recall-grounded", ("support_dialogue",), Replace(_memory_turn, {"en": r"^[\s\S]+$", "zh": r"^[\s\S]+$"},
                                                          _GENERIC, "generic_recall")),
    Aim("recall-length", ("support_dialogue",), Longer(_memory_turn, lambda v: v["recall_limit"])),
    Aim("no-negatives", ("support_dialogue",), InsertPerson(_memory_turn, _negative_people, voice="ai")),
    Aim("judges-consistent", ("faithfulness",), Set("uses_negatives", True, "flag_against_score", _high_score)),
    Aim("judges-consistent", ("faithfulness",), Set("grounded_in_target", False, "flag_against_score", _high_score)),
    Aim("judges-consistent", ("scenario_consistency",), Set("fits_a_negative", True, "flag_against_score",
                                                            _high_score)),
    Aim("judges-consistent", ("scenario_consistency",), Set("expresses_need", False, "flag_against_score",
                                                            _high_score)),
    Aim("blri", ("blri",), Count("scores", low=12, high=12)),
    Aim("blri", ("blri",), Set("scores[0]", 0, "off_scale")),
    Aim("eval-reply", ("eval_respond",), Longer("response", lambda v: REPLY_LIMIT[v["language"]])),
    Aim("eval-reply", ("eval_respond",), Set("memory", lambda v: len(v["memories"]) + 1, "unlisted_memory")),
    Aim("eval-grades", ("eval_judge",), Set("empathy", 6, "off_scale")),
    Aim(SCHEMA_RULE, tuple(s.name for s in (*STAGES, *EVAL_STAGES)), Fields()),
)
