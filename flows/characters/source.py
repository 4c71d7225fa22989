"""Role-playing files as scenes, and scenes as memory units and queries.

Two shapes are read:
- CharacterEval's: a JSON list of `{id, role, context}`, the context one "speaker：text" line
  per turn, ending with the line the role is to answer;
- a role's scenes (InCharacter's characters, as ChatHaruhi keeps them): a JSON object
  `{role: [scene, …]}`, a scene being such lines, as one string or a list of strings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError

from memsynth.core.errors import ConfigError
from memsynth.core.inputs import loads_json
from schemas.characters import FragmentRow, QueryRow

# "speaker：text" or "speaker: text"; a name is short and holds no colon.
LINE = re.compile(r"^\s*([^:：\n]{1,40}?)\s*[:：]\s*(.*?)\s*$")
QUOTES = (("「", "」"), ("“", "”"), ('"', '"'))


class CharacterEvalItem(BaseModel):
    model_config = ConfigDict(extra="allow")  # novel_name and the like are kept out of our rows
    id: int | str
    role: str = Field(min_length=1)
    context: str = Field(min_length=1)


class CharacterEvalFile(RootModel[list[CharacterEvalItem]]):
    pass


class ScenesFile(RootModel[dict[str, list[str | list[str]]]]):
    pass


@dataclass(frozen=True)
class Scene:
    scene_id: str
    role: str
    lines: tuple[tuple[str, str], ...]  # (speaker, text)


def lines_of(text: str | list[str]) -> tuple[tuple[str, str], ...]:
    """A scene's (speaker, text) turns; a line with no speaker continues the turn before it."""
    out: list[list[str]] = []
    for raw in text.splitlines() if isinstance(text, str) else text:
        match = LINE.match(raw)
        if match and match.group(2):
            out.append([match.group(1), _unquoted(match.group(2))])
        elif raw.strip() and out:  # (a line before any speaker is stage text: dropped)
            out[-1][1] = _joined(out[-1][1], raw.strip())
    return tuple((speaker, said) for speaker, said in out if said)


def _joined(before: str, after: str) -> str:
    # Chinese runs on without a space; other scripts get one.
    return before + after if _cjk(before[-1:]) or _cjk(after[:1]) else f"{before} {after}"


def _cjk(char: str) -> bool:
    return "\u3000" <= char <= "\u9fff" or "\uff00" <= char <= "\uffef"


def _unquoted(text: str) -> str:
    for left, right in QUOTES:
        if len(text) >= 2 and text.startswith(left) and text.endswith(right):
            return text[1:-1].strip()
    return text


def read_scenes(path: Path) -> list[Scene]:
    """The file's scenes in file order (one line on a file of neither shape)."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    data = loads_json(raw, str(path))
    model: Any = CharacterEvalFile if isinstance(data, list) else ScenesFile
    try:
        parsed = model.model_validate(data).root
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise ConfigError(f"{path} is not a CharacterEval list or a {{role: [scene, ...]}} object: "
                          f"{where}: {error['msg']}") from None
    if isinstance(parsed, list):
        scenes = [Scene(str(item.id), item.role.strip(), lines_of(item.context)) for item in parsed]
    else:
        scenes = [Scene(f"{role}#{i}", role.strip(), lines_of(scene))
                  for role, role_scenes in parsed.items() for i, scene in enumerate(role_scenes)]
    if not any(scene.lines for scene in scenes):
        raise ConfigError(f"{path}: no \"speaker: text\" lines in any scene")
    return scenes


def memory_units(scenes: list[Scene]) -> tuple[list[FragmentRow], list[QueryRow]]:
    """Each role's question–answer pairs (a line by another speaker, then the role's), one
    fragment per distinct pair, and each scene's last line as a query when someone other than
    the role says it."""
    fragments: dict[tuple[str, str, str, str], FragmentRow] = {}
    counts: dict[str, int] = {}
    queries: list[QueryRow] = []
    for scene in scenes:
        role, lines = scene.role, scene.lines
        for (asker, question), (speaker, answer) in zip(lines, lines[1:]):
            if speaker != role or asker == role:
                continue
            key = (role, asker, question, answer)
            if key in fragments:
                if scene.scene_id not in fragments[key].scenes:
                    fragments[key].scenes.append(scene.scene_id)
                continue
            n = counts[role] = counts.get(role, 0) + 1
            fragments[key] = FragmentRow(
                fragment_id=f"{role}#{n}", persona_id=role, role=role, ordinal=len(fragments), asker=asker,
                question=question, answer=answer, text=f"{asker}：{question}\n{role}：{answer}",
                scenes=[scene.scene_id])
        if lines and lines[-1][0] != role:
            queries.append(QueryRow(
                query_id=scene.scene_id, persona_id=role, role=role, ordinal=len(queries), scene=scene.scene_id,
                speaker=lines[-1][0], query=lines[-1][1], context=[f"{s}：{t}" for s, t in lines[:-1]]))
    return list(fragments.values()), queries


def language_of(scenes: list[Scene]) -> str:
    """zh when most letters of the scenes are CJK ideographs, else en."""
    text = "".join(t for scene in scenes for _, t in scene.lines)
    letters = [c for c in text if c.isalpha()]
    cjk = sum(1 for c in letters if _cjk(c))
    return "zh" if letters and cjk / len(letters) > 0.3 else "en"
