"""The build's language in every text an answer writes: the shared `language` rule of every
prompt ("Write every text value in English." / "所有文本内容一律使用简体中文书写…").

Every stage runs it (`Stage` adds it as the check `in_language`): it reads each string the answer writes, whatever the
field, so a new stage needs no declaration. What it does not read, because it carries no
language of its own: a value of a listed set (`Literal` fields: "good", "must"), and a value
copied from the stage's inputs (a name, a quote of the sessions, an id), which is in whatever
language its source was.

What counts as another language, measured on the released data and the strong model's
answers (tests/test_language_check.py):
- English: two or more CJK characters (han, kana, hangul) in one value;
- Chinese: a value with no CJK character and three or more English words (a sentence in
  English), or one made only of lower-case English words, one of them of three letters or more
  ("male", "full time": a word the answer should have written in Chinese; "PPT", "iPhone",
  "sleep_quality" and numbers are not such words); a lower-case English word of three letters or more inside a Chinese value (mixed in:
  "case report", "leak", "pace"; capitalised "App", "PPT", "Excel", "NSAID" are not counted, as
  Chinese writing uses them, nor a few loanwords it keeps in lower case, "livehouse", nor an
  account's name, "账号sunliwei", nor a file's extension after its dot, "调查.xlsx", nor a unit
  after its number, "92bpm": of PAL-Set's and StratMem-Bench's 25,800 released Chinese texts, 24
  hold a lower-case word, and every one of them is such an extension or unit; of the acceptable
  answers of the shared corpus and 23 held-out rounds, two hold one, an account's name (r21) and
  "livehouse" (r23)); traditional characters where simplified are asked
  (`hanzidentifier`, from CC-CEDICT's character sets).
"""

from __future__ import annotations

import re
import types
import typing
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

NAME = "in_language"
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_LATIN_WORD = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)?")
EN_CJK_CHARS = 2  # an English value with this many CJK characters is not English
ZH_ENGLISH_WORDS = 3  # a Chinese value with no CJK and this many English words is English
# Loanwords Chinese writing keeps in lower-case Latin letters, with no Chinese word of its own in
# common use ("周末去livehouse看演出"; held-out r23): not mixing.
ZH_LOANWORDS = frozenset({"livehouse", "vlog", "cosplay", "citywalk"})
# What names an account in a log or a form: the word after it is the account's name.
_ACCOUNT_LABEL = re.compile(r"(?<![A-Za-z])(?:账号|帐号|账户|用户名|登录名|昵称|工号|邮箱|ID)[：:]?\s?$", re.IGNORECASE)


def _token_at(text: str, start: int, end: int) -> str:
    """The run of name characters (letters, digits, _ @ . -) around text[start:end]."""
    while start > 0 and re.match(r"[\w@.\-]", text[start - 1]) and text[start - 1].isascii():
        start -= 1
    while end < len(text) and re.match(r"[\w@.\-]", text[end]) and text[end].isascii():
        end += 1
    return text[start:end]


ZH_MIXED_WORDS = 1  # lower-case English words (3+ letters) mixed into a Chinese value
# A whole value of plain lower-case English words ("male", "full time"): a field the answer
# left in English. Identifiers (snake_case), capitalised names and numbers do not match.
_PLAIN_ENGLISH = re.compile(r"[a-z]+(?:['’-][a-z]+)*(?: [a-z]+(?:['’-][a-z]+)*)*")
# A chat turn's speaker, the format's own word in every dialogue prompt (a recipe's `role` field
# may be a plain `str`, whose listed values the check cannot see).
_ROLES = frozenset({"user", "assistant", "ai", "system"})


def _texts(value: Any, annotation: Any = None, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of every string the answer writes, skipping `Literal` fields."""
    if isinstance(value, BaseModel):
        fields = type(value).model_fields
        for name, info in fields.items():
            yield from _texts(getattr(value, name), info.annotation, f"{path}.{name}" if path else name)
    elif isinstance(value, str):
        if not _listed(annotation):
            yield path, value
    elif isinstance(value, list | tuple):
        inner = _item_annotation(annotation)
        for i, item in enumerate(value):
            yield from _texts(item, inner, f"{path}[{i}]")
    elif isinstance(value, dict):
        inner = _item_annotation(annotation, mapping=True)
        for key, item in value.items():
            yield from _texts(item, inner, f"{path}.{key}" if path else str(key))


def _listed(annotation: Any) -> bool:
    """A `Literal[...]` (optional, or annotated): its values are the prompt's listed words."""
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        return True
    if origin is typing.Annotated:
        return _listed(typing.get_args(annotation)[0])
    if origin in (typing.Union, types.UnionType):
        return any(_listed(a) for a in typing.get_args(annotation) if a is not type(None))
    return False


def _item_annotation(annotation: Any, mapping: bool = False) -> Any:
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if not args:
        return None
    if typing.get_origin(annotation) in (typing.Union, types.UnionType, typing.Annotated):
        return _item_annotation(args[0], mapping)  # Optional[list[X]], Annotated[list[X], ...]
    return args[-1] if mapping else args[0]


def _inputs(variables: Mapping[str, Any]) -> list[str]:
    out: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, Mapping):
            for x in v.values():
                walk(x)
        elif isinstance(v, list | tuple):
            for x in v:
                walk(x)
        elif isinstance(v, BaseModel):
            walk(v.model_dump(mode="json"))

    walk(variables)
    return out


def _copied(text: str, inputs: list[str]) -> bool:
    probe = text.strip()
    return bool(probe) and any(probe in source for source in inputs)


@lru_cache(maxsize=4096)
def off_language(text: str, language: str) -> tuple[str, str] | None:
    """Why `text` is not in `language` ("en" or "zh"), as (en, zh) wording; None when it is."""
    cjk = len(CJK.findall(text))
    if language == "en":
        if cjk >= EN_CJK_CHARS:
            return ("is written in Chinese (or another CJK script), not English", "用了中日韩文字，不是英文")
        return None
    if language != "zh":
        return None
    words = _LATIN_WORD.findall(text)
    if not cjk:
        plain = (_PLAIN_ENGLISH.fullmatch(text.strip()) and any(len(w) >= 3 for w in words)
                 and text.strip() not in _ROLES)
        if len(words) >= ZH_ENGLISH_WORDS or plain:
            return ("is written in English, not Chinese", "是用英文写的，不是中文")
        return None
    # A word right after a dot is a file's extension ("调查.xlsx"), one right after a number its
    # unit ("92bpm", "5 km"), one in an account's name or address ("账号sunliwei", "sun_lw@qq.com"):
    # part of a name or a measure, not English.
    mixed = [m.group(0) for m in _LATIN_WORD.finditer(text)
             if m.group(0).islower() and len(m.group(0)) >= 3 and m.group(0) not in ZH_LOANWORDS
             and not re.search(r"(\.|\d\s?)$", text[max(0, m.start() - 2):m.start()])
             and not _ACCOUNT_LABEL.search(text[max(0, m.start() - 5):m.start()])
             and not re.search(r"[@_\d]", _token_at(text, m.start(), m.end()))]
    if len(mixed) >= ZH_MIXED_WORDS:
        shown = "、".join(dict.fromkeys(mixed[:4]))
        return (f"mixes English words into the Chinese ({shown})", f"中文里夹杂了英文单词（{shown}）")
    import hanzidentifier  # CC-CEDICT's simplified and traditional character sets

    if hanzidentifier.identify(text) in (hanzidentifier.TRADITIONAL, hanzidentifier.MIXED):
        shown = "".join(dict.fromkeys(c for c in text if CJK.match(c) and not hanzidentifier.is_simplified(c)))[:6]
        return (f"uses traditional characters ({shown}); write simplified Chinese",
                f"用了繁体字（{shown}），请一律用简体中文")
    return None


def in_language(output: Any, variables: Mapping[str, Any]) -> Iterator[str]:
    language = str(variables.get("language", "en"))
    if language not in ("en", "zh"):
        return
    inputs: list[str] | None = None
    for path, text in _texts(output):
        why = off_language(text, language)
        if why is None:
            continue
        if inputs is None:
            inputs = _inputs(variables)
        if _copied(text, inputs):
            continue  # a name or quote taken from the stage's inputs keeps its source's language
        yield say(variables, f"{path} {why[0]}: write every text value in English",
                  f"{path} {why[1]}：所有文本内容一律使用简体中文书写")


def say(variables: Mapping[str, Any], en: str, zh: str) -> str:
    return zh if variables.get("language") == "zh" else en  # as stagedef.say (which imports this module)
