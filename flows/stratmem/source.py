"""Where a stratmem build's sessions come from: LoCoMo conversations, or a memsynth dataset.

Either way a source is a list of conversations, each a dated sequence of sessions between
two speakers with, per session, its turns and its notes (LoCoMo's `observation`,
`event_summary` and `session_summary`; a memory's own text in an enpmr dataset; the
experience behind a pal session).
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path

from memsynth.core.errors import ConfigError
from memsynth.core.inputs import loads_json

LOCOMO_TIME = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class Session:
    index: int  # 1-based, as LoCoMo numbers them
    at: dt.datetime
    turns: tuple[tuple[str, str], ...]  # (speaker, text)
    notes: tuple[str, ...]

    @property
    def time_text(self) -> str:
        return locomo_time(self.at)


@dataclass(frozen=True)
class Conversation:
    source_id: str
    speakers: tuple[str, str]
    sessions: tuple[Session, ...]
    # Who may play the virtual character: either speaker of a LoCoMo conversation; the
    # assistant of a dataset's sessions (the persona is the user asking).
    characters: tuple[str, ...]

    def describe(self) -> str:
        return (f"{self.speakers[0]} and {self.speakers[1]}: {len(self.sessions)} sessions, "
                f"{self.sessions[0].at:%Y-%m-%d} to {self.sessions[-1].at:%Y-%m-%d} ({self.source_id})")


def locomo_time(at: dt.datetime) -> str:
    """A time as LoCoMo writes it: `1:14 pm on 25 May, 2023`."""
    return f"{at.hour % 12 or 12}:{at.minute:02d} {'am' if at.hour < 12 else 'pm'} on {at.day} {at:%B}, {at.year}"


def parse_locomo_time(text: str) -> dt.datetime | None:
    """The time a LoCoMo time string names; None when it is not in that form."""
    try:
        return _time(text)
    except ValueError:
        return None


# Where LoCoMo is released (CC BY-NC 4.0), for the one line a missing source file gets.
LOCOMO_URL = "https://github.com/snap-research/locomo"


def spoken_time(at: dt.datetime | None, text: str, language: str) -> str:
    """A time as a prompt in `language` says it: LoCoMo's form in en, 2024年3月17日 19:40 in zh
    (from `at`, else parsed from `text`; text as it is when it cannot be read)."""
    if language != "zh":
        return text
    at = at or parse_locomo_time(text)
    return f"{at.year}年{at.month}月{at.day}日 {at:%H:%M}" if at else text


def read_locomo(path: Path) -> list[Conversation]:
    """Every conversation of a LoCoMo-format file, sessions in order."""
    try:
        samples = loads_json(path.read_bytes(), f"recipe_options.source: {path}")
    except FileNotFoundError:
        raise ConfigError(f"recipe_options.source: {path} does not exist (LoCoMo's release is "
                          f"data/locomo10.json of {LOCOMO_URL}; download it there or point the config at it)") from None
    if not isinstance(samples, list):
        raise ConfigError(f"recipe_options.source: {path} should hold a list of conversations")
    return [_conversation(path, i, s) for i, s in enumerate(samples)]


def _conversation(path: Path, position: int, sample: dict) -> Conversation:
    try:
        talk = sample["conversation"]
        speakers = (talk["speaker_a"], talk["speaker_b"])
        numbers = sorted(int(m.group(1)) for k in talk if (m := re.fullmatch(r"session_(\d+)", k)))
        sessions = []
        for n in numbers:
            if not talk[f"session_{n}"]:
                continue
            turns = tuple((t["speaker"], _turn_text(t)) for t in talk[f"session_{n}"])
            sessions.append(Session(n, _time(talk[f"session_{n}_date_time"]), turns, _notes(sample, n)))
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"recipe_options.source: conversation {position + 1} of {path} is not in "
                          f"LoCoMo's format ({type(exc).__name__}: {exc})") from None
    return Conversation(str(sample.get("sample_id") or f"conversation-{position + 1}"), speakers,
                        tuple(sessions), speakers)


def _time(text: str) -> dt.datetime:
    return dt.datetime.strptime(text.strip(), LOCOMO_TIME)


def _turn_text(turn: dict) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):  # LoCoMo's shared photos: keep what the photo showed
        text += f" [shares a photo of {turn['blip_caption']}]"
    return text


def _notes(sample: dict, n: int) -> tuple[str, ...]:
    notes: list[str] = []
    for facts in (sample.get("observation") or {}).get(f"session_{n}_observation", {}).values():
        notes += [f[0] if isinstance(f, list) else str(f) for f in facts]
    events = (sample.get("event_summary") or {}).get(f"events_session_{n}", {})
    for speaker, items in events.items():
        if speaker != "date" and isinstance(items, list):
            notes += [str(i) for i in items]
    summary = (sample.get("session_summary") or {}).get(f"session_{n}_summary")
    if summary:
        notes.append(str(summary))
    return tuple(notes)


def parse_dataset_source(spec: str) -> tuple[str, int | None]:
    name, _, version = spec.partition("@")
    if version and not version.isdigit():
        raise ConfigError(f"recipe_options.source: dataset:{spec}: the version is a number (NAME@3)")
    return name, int(version) if version else None


def read_dataset(warehouse: Path, spec: str, assistant: str) -> list[Conversation]:
    """A memsynth enpmr or pal version's personas as conversations with an assistant."""
    from memsynth.warehouse.catalog import run_query

    name, version = parse_dataset_source(spec)
    recipe = run_query(warehouse, name, "SELECT recipe FROM versions ORDER BY version DESC LIMIT 1")[1][0][0]
    if recipe not in _DATASET_SQL:
        raise ConfigError(f"recipe_options.source: dataset {name} was built by recipe {recipe}; "
                          "stratmem reads enpmr and pal datasets")
    rows = run_query(warehouse, name, _DATASET_SQL[recipe], version=version)[1]
    by_persona: dict[str, list[tuple]] = {}
    for row in rows:
        by_persona.setdefault(row[0], []).append(row)
    out = []
    for persona_id, sessions in by_persona.items():
        user = sessions[0][1]
        out.append(Conversation(
            f"{name}/{persona_id}", (user, assistant),
            tuple(Session(i + 1, _at(at), tuple((user if t["role"] == "user" else assistant, t["content"])
                                               for t in turns), (note,) if note else ())
                  for i, (_, _, at, turns, note) in enumerate(sessions)),
            (assistant,)))
    return out


def _at(value: dt.date | dt.datetime) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    return dt.datetime.combine(value, dt.time(19, 30))  # an enpmr memory has a day, not a time


# One row per session: persona, the user's name, when, the turns, a note.
_DATASET_SQL = {
    "enpmr": """
        SELECT m.persona_id, p.name, m.date, list({'role': s.role, 'content': s.content} ORDER BY s.turn_index),
            m.text
        FROM memories m JOIN profiles p USING (persona_id) JOIN memory_sessions s USING (memory_id)
        GROUP BY m.persona_id, p.name, m.memory_id, m.date, m.text
        ORDER BY m.persona_id, m.date, m.memory_id""",
    "pal": """
        SELECT s.persona_id, p.name, s.end_time, list({'role': t.speaker, 'content': t.content}
            ORDER BY t.turn_index, t.speaker = 'assistant'), e.text
        FROM situations s JOIN pal_profiles p USING (persona_id) JOIN dialogue_turns t USING (situation_id)
        LEFT JOIN experiences e USING (situation_id)
        WHERE s.has_dialogue
        GROUP BY s.persona_id, p.name, s.situation_id, s.end_time, e.text
        ORDER BY s.persona_id, s.end_time, s.situation_id""",
}
