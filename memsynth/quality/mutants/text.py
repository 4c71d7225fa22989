"""Text primitives of the mutators: count and change sentences, words, times, people, voice.

The counts here are the mutators' own (a plain reading of the rule: sentences end at .!? or
。！？, an English word is a run between spaces, a Chinese one a character), never the checks'
code: a mutant is made to break the rule as a reader counts it, so a check that counts
differently shows up as a mutant it lets through.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import re

from memsynth.quality.mutants import lexicon as lx

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_EN_ABBREVIATIONS = re.compile(r"\b(Mr|Mrs|Ms|Dr|Prof|St|e\.g|i\.e|etc|vs|a\.m|p\.m|No)\.$", re.IGNORECASE)
_EN_END = re.compile(r"(?<=[.!?])[\"”’')]*\s+")
_ZH_END = re.compile(r"(?<=[。！？!?])(?![”’」』])")


def is_zh(text: str) -> bool:
    return bool(_CJK.search(text))


def split_sentences(text: str) -> list[str]:
    """Sentences as a reader counts them (an abbreviation's dot ends none)."""
    text = text.strip()
    if not text:
        return []
    if is_zh(text):
        parts = _ZH_END.split(text)
    else:
        parts, start = [], 0
        for m in _EN_END.finditer(text):
            piece = text[start:m.start()].rstrip("\"”’')")
            if _EN_ABBREVIATIONS.search(piece):
                continue
            parts.append(text[start:m.end()])
            start = m.end()
        parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def statements(text: str) -> list[str]:
    """Sentences, and ；-joined clauses of one sentence, each a statement."""
    return [c.strip() for s in split_sentences(text) for c in re.split(r"(?<=[；;])", s) if c.strip(" ；;")]


def size(text: str) -> int:
    """Words: space-separated in English; in Chinese each character, plus each Latin word or number."""
    if is_zh(text):
        return len(_CJK.findall(text)) + len(re.findall(r"[A-Za-z0-9]+", _CJK.sub(" ", text)))
    return len(text.split())


def joined(language: str, parts: list[str]) -> str:
    return ("" if language == "zh" else " ").join(parts)


def add_sentences(text: str, language: str, count: int, rng: random.Random) -> str:
    pool = list(lx.SENTENCES[language])
    rng.shuffle(pool)
    extra = [pool[i % len(pool)] for i in range(count)]
    body = text.strip()
    if not re.search(r"[.!?。！？…][\"”’')）」』]*$", body):  # a text with no end of its own gets one
        body += "。" if language == "zh" else "."
    return joined(language, [body, *extra])


def stretch(text: str, language: str, target: int) -> str:
    """`text` lengthened to `target` words (characters in Chinese) inside its last sentence."""
    body, end = _split_end(text)
    clause = lx.CLAUSE[language]
    out, extra = text, max(0, target - size(text))
    while size(out) < target:  # the filler's script can count differently from the text's
        extra += max(1, target - size(out))
        if language == "zh":
            out = f"{body}，{(clause * (extra // len(clause) + 1))[:extra]}{end or '。'}"
        else:
            words = clause.split()
            out = f"{body}, {' '.join(words[i % len(words)] for i in range(extra))}{end or '.'}"
    return out


def exceeding(limit: int, rng: random.Random) -> int:
    """A length 10-30 % past `limit` (at least one past it)."""
    return max(limit + 1, math.ceil(limit * rng.uniform(1.1, 1.3)))


def _split_end(text: str) -> tuple[str, str]:
    m = re.search(r"[.!?。！？…]+[\"”’')）」]*\s*$", text)
    return (text[:m.start()], m.group(0).strip()) if m else (text.rstrip(), "")


def paraphrase(text: str, language: str, rng: random.Random) -> str:
    """The same statement reworded: synonyms, the clauses reordered, a restating prefix."""
    out = text
    table = lx.SYNONYMS[language]
    if language == "zh":
        for word, other in table.items():
            if word in out:
                out = out.replace(word, other, 1)
    else:
        def swap(m: re.Match[str]) -> str:
            other = table.get(m.group(0).lower())
            if other is None:
                return m.group(0)
            return other[:1].upper() + other[1:] if m.group(0)[:1].isupper() else other
        out = re.sub(r"[A-Za-z]+", swap, out)
    clauses = re.split(r"(?<=[，,])\s*", out)
    if len(clauses) >= 2 and rng.random() < 0.7:  # reorder: "A, B" → "B, A"
        body, end = _split_end(clauses[-1])
        first = clauses[0].rstrip("，,")
        sep = "，" if language == "zh" else ", "
        out = f"{body}{sep}{sep.join(c.rstrip('，,') for c in clauses[1:-1] + [first])}{end}".replace(
            f"{sep}{sep}", sep)
    if out == text or rng.random() < 0.5:
        out = rng.choice(lx.RESTATE_PREFIX[language]) + (out if language == "zh" else out[:1].lower() + out[1:])
    return out


def soften(text: str, language: str, softener: str) -> str:
    """A rejection that agrees first: 'I see the logic, but no, …'."""
    if language == "zh":
        return softener + text.lstrip()
    return softener + text[:1].lower() + text[1:]


def join_alternative(text: str, language: str, joiner: str, other: str) -> str:
    """Two solutions offered as one."""
    body, end = _split_end(text)
    return f"{body}{joiner}{other}{end or ('。' if language == 'zh' else '.')}"


def replace_words(text: str, table: dict[str, str]) -> str:
    """Whole English words (or Chinese substrings) swapped by the table."""
    if any(_CJK.search(k) for k in table):
        for word, other in table.items():
            text = text.replace(word, other)
        return text
    pattern = re.compile(r"(?<![\w'’])(" + "|".join(map(re.escape, sorted(table, key=len, reverse=True))) + r")(?![\w'’])")
    return pattern.sub(lambda m: table[m.group(0)], text)


# Clock times and dates as people write them in prose.
_ZH_DIGITS = "零一二三四五六七八九十"


def zh_number(n: int) -> str:
    if n <= 10:
        return _ZH_DIGITS[n]
    if n < 20:
        return "十" + (_ZH_DIGITS[n % 10] if n % 10 else "")
    return _ZH_DIGITS[n // 10] + "十" + (_ZH_DIGITS[n % 10] if n % 10 else "")


def clock_forms(moment: dt.datetime, language: str) -> dict[str, str]:
    """A moment's clock time in the ways prose writes it: "17:15", "5:15 pm", "下午五点一刻"."""
    h, m = moment.hour, moment.minute
    if language == "zh":
        part = "凌晨" if h < 6 else "早上" if h < 9 else "上午" if h < 12 else "中午" if h < 13 else \
            "下午" if h < 18 else "晚上"
        hour12 = h if h <= 12 else h - 12
        minute = "" if m == 0 else "半" if m == 30 else "一刻" if m == 15 else f"{zh_number(m)}分"
        return {"24h": f"{h:02d}:{m:02d}", "spoken": f"{part}{zh_number(hour12)}点{minute}"}
    hour12 = h % 12 or 12
    suffix = "am" if h < 12 else "pm"
    return {"24h": f"{h:02d}:{m:02d}", "12h": f"{hour12}:{m:02d} {suffix}" if m else f"{hour12} {suffix}"}


def date_forms(day: dt.date, language: str) -> dict[str, str]:
    """A day as prose writes it: ISO, "16 October", "10月16日"."""
    if language == "zh":
        return {"iso": day.isoformat(), "prose": f"{day.month}月{day.day}日"}
    return {"iso": day.isoformat(), "prose": f"{day.day} {day.strftime('%B')}",
            "prose_us": f"{day.strftime('%B')} {day.day}"}


def moment_sentence(language: str, when: str, event: str) -> str:
    if language == "zh":
        return f"{when}，{event}。"
    return f"{when[:1].upper()}{when[1:]}, {event}."


# People: the forms by which a text can name someone.
def person_forms(name: str, language: str, relation: str = "") -> dict[str, str]:
    """Full name, surname + title, given name and kinship term, as far as `name` allows them."""
    name = name.strip()
    forms: dict[str, str] = {}
    kin = lx.KINSHIP[language].get(relation.strip().lower() if language == "en" else relation.strip())
    if kin:
        forms["kinship"] = kin
    if language == "zh" or is_zh(name):
        core = name
        title = next((t for t in sorted(lx.ZH_TITLES, key=len, reverse=True) if core.endswith(t) and len(core) > len(t)), "")
        core = core[: len(core) - len(title)] if title else core
        if not (1 <= len(core) <= 4 and all(_CJK.match(c) for c in core)):
            return forms
        surname = next((s for s in lx.ZH_COMPOUND_SURNAMES if core.startswith(s)), core[:1])
        given = core[len(surname):]
        if given:
            forms["full_name"] = core
            forms["given_name"] = given if len(given) >= 2 else f"小{given}"
        forms["surname_title"] = surname + (title or "老师")
        if title:
            forms["surname_title_other"] = "老" + surname
        return forms
    words = name.replace(".", "").split()
    title = words[0] if words and words[0] in lx.EN_TITLES else ""
    rest = [w for w in words[1:] if w[:1].isupper()] if title else [w for w in words if w[:1].isupper()]
    if len(rest) != len(words) - (1 if title else 0) or not rest:
        return forms  # not a name ("the ward manager")
    if len(rest) >= 2:
        forms["full_name"] = " ".join(rest)
        forms["given_name"] = rest[0]
    forms["surname_title"] = f"{title or 'Ms'} {rest[-1]}"
    return forms


_EN_NAME = re.compile(r"\b(?:(Mr|Mrs|Ms|Miss|Dr|Prof)\.? )?([A-Z][a-z'’-]+(?: [A-Z][a-z'’-]+)*)")
# A role, not a name: 护士长, 考核组, 居委会.
_ZH_ROLE = re.compile(r"(长|组|会|处|科|部|团|队|员|方|们)$")
_ZH_TITLED = re.compile(r"(主任|经理|老师|医生|院长|校长|教练|护士长|科长|处长)([\u4e00-\u9fff]{2,3})$")


def names_in(phrase: str, language: str) -> list[str]:
    """The people named in a phrase ("Mr Okafor's daughter" → "Mr Okafor"; "科室主任刘卫东" → "刘卫东主任")."""
    if language == "zh" or is_zh(phrase):
        out = []
        for part in re.split(r"[和与、及]", phrase):
            part = re.sub(r"(的)?(女儿|儿子|妻子|丈夫|家属|家人|孙子|孙女)$", "", part.strip()).removesuffix("的")
            if m := _ZH_TITLED.search(part):
                out.append(m.group(2) + m.group(1))
            elif (2 <= len(part) <= 5 and "的" not in part and all(_CJK.match(c) for c in part)
                  and not _ZH_ROLE.search(part)):
                out.append(part)
        return out
    found = []
    for m in _EN_NAME.finditer(phrase):
        name = re.sub(r"['’]s$", "", m.group(2))
        if name in ("The", "A", "An", "His", "Her", "Their", "My") or (not m.group(1) and " " not in name
                                                                       and m.start() == 0):
            continue
        found.append(f"{m.group(1)} {name}" if m.group(1) else name)
    return found


def mention(language: str, person: str, voice: str) -> str:
    """A sentence naming `person`, in the user's voice or the narrator's."""
    if language == "zh":
        return {"user": f"我又想起了{person}。", "ai": f"这是不是让你想起了{person}？",
                "narrator": f"她想起了{person}。"}[voice]
    return {"user": f"I keep thinking about {person}.", "ai": f"Does this remind you of {person}?",
            "narrator": f"She thinks of {person}."}[voice]
