"""The answer to a stage no recipe taught the simulator: built from the stage's output schema
and its variables alone, so a new recipe builds on the simulator with no `simulated.py`.

What a stage's checks commonly ask, read from structure, never from the prompt's wording:
- counts: an array named `items` holds as many as a variable `items`, `n_items`,
  `items_count`, `num_items` or `item_count` says (a top-level array also `count`), or one per
  id the variables list for its objects' `*_id` field; always inside minItems/maxItems;
- ids: a `*_id` string is one the variables hold under that key (or in a `*_ids` list), a
  `*_ids` array distinct ones of them;
- dates: inside the variables' window (`start_date`… `end_date`, else up to `reference_date`),
  and the items of an array in date order;
- text in the variables' `language`, distinct across the answer, inside min/maxLength;
- mentions: a variable `mentions` ({field: [text, ...]}) puts each text into a value of a
  string field so named (a fact a turn must reveal, say), first come first served;
- numbers inside their (exclusive) bounds and multipleOf; enums and Literals from their
  values, an array of them without repeats while it can.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping
from typing import Any

from memsynth.simulator.text import TextMaker

DEFAULT_END = dt.date(2024, 6, 1)
WINDOW_DAYS = 1500
_STARTS = ("start_date", "from_date", "window_start", "since", "start")
_ENDS = ("end_date", "to_date", "window_end", "until", "end", "question_date", "reference_date")
_LONG_TEXT = {"content", "text", "description", "details", "summary", "scene", "story", "message",
              "utterance", "reply", "answer", "body", "narrative", "explanation", "reason"}
_NAMES = {"name", "person", "speaker", "friend", "partner"}
_SHORT = {"title", "topic", "theme", "occupation", "education", "label", "category", "hobby", "skill"}
_TRIES = 25


def _date(value: Any) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value)[:10])
    except ValueError:
        return None


def _pools(variables: Any, pools: dict[str, list[Any]]) -> dict[str, list[Any]]:
    """Every scalar the variables hold, by the key it is under (a `*_ids` list's under `*_id`)."""
    if isinstance(variables, Mapping):
        for key, value in variables.items():
            if isinstance(value, str | int) and not isinstance(value, bool):
                pools.setdefault(str(key), []).append(value)
            elif isinstance(value, list) and all(isinstance(v, str | int) for v in value):
                for name in {str(key), str(key).removesuffix("s")}:
                    pools.setdefault(name, []).extend(value)
            else:
                _pools(value, pools)
    elif isinstance(variables, list):
        for value in variables:
            _pools(value, pools)
    return pools


class GenericAnswer:
    """One answer to one stage, drawn from `text`'s generator."""

    def __init__(self, text: TextMaker, variables: Mapping[str, Any]):
        self.text = text
        self.rng = text.rng
        self.variables = variables
        self.pools = {k: list(dict.fromkeys(v)) for k, v in _pools(variables, {}).items()}
        self.end = next((d for k in _ENDS if (d := _date(variables.get(k))) is not None), DEFAULT_END)
        self.start = next((d for k in _STARTS if (d := _date(variables.get(k))) is not None),
                          self.end - dt.timedelta(days=WINDOW_DAYS))
        if self.start > self.end:
            self.start, self.end = self.end, self.start
        self.used: set[str] = set()
        wanted = variables.get("mentions")
        self.mentions = {str(k): [str(t) for t in (v if isinstance(v, list) else [v])]
                         for k, v in wanted.items()} if isinstance(wanted, Mapping) else {}

    def generate(self, schema: Mapping[str, Any]) -> Any:
        self.defs = schema.get("$defs", {})
        return self._value(schema, "", 0)

    # -- nodes ---------------------------------------------------------------------------

    def _resolve(self, node: Mapping[str, Any]) -> Mapping[str, Any]:
        while "$ref" in node:
            node = self.defs[node["$ref"].rsplit("/", 1)[-1]]
        if "allOf" in node and len(node["allOf"]) == 1:
            return {**self._resolve(node["allOf"][0]), **{k: v for k, v in node.items() if k != "allOf"}}
        return node

    def _value(self, node: Mapping[str, Any], field: str, depth: int, slot: Any = None) -> Any:
        node = self._resolve(node)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self.rng.choice(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if self._resolve(o).get("type") != "null"] or node[key]
                return self._value(options[0], field, depth, slot)
        kind = node.get("type", "object" if "properties" in node else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object":
            return self._object(node, depth, slot)
        if kind == "array":
            return self._array(node, field, depth)
        if kind == "integer":
            return self._integer(node, field)
        if kind == "number":
            return self._number(node)
        if kind == "boolean":
            return self.rng.random() < 0.5
        if slot is not None:
            return slot
        return self._string(node, field)

    def _object(self, node: Mapping[str, Any], depth: int, slot: Any) -> dict[str, Any]:
        key = self._id_key(node)
        return {name: self._value(sub, name, depth + 1, slot if name == key else None)
                for name, sub in node.get("properties", {}).items()}

    def _id_key(self, node: Mapping[str, Any]) -> str | None:
        """The `*_id` property of an object whose values the variables list, if any."""
        for name, sub in node.get("properties", {}).items():
            sub = self._resolve(sub)
            if name.endswith("_id") and "enum" not in sub and self._id_pool(name):
                return name
        return None

    def _id_pool(self, field: str) -> list[Any]:
        return self.pools.get(field) or self.pools.get(field + "s") or []

    def _array(self, node: Mapping[str, Any], field: str, depth: int) -> list[Any]:
        low = int(node.get("minItems", 1))
        high = int(node.get("maxItems", max(low, 1) + 2))
        item = self._resolve(node.get("items", {}))
        key = self._id_key(item) if item.get("type", "object") == "object" and "properties" in item else None
        slots: list[Any] = list(self._id_pool(key)) if key else []
        if field.endswith("_ids") and item.get("type") in ("string", "integer", None) and "enum" not in item:
            slots = list(self._id_pool(field[:-1]))
            self.rng.shuffle(slots)
        count = self._count(field, depth)
        if count is None:
            count = len(slots) if slots else self.rng.randint(low, max(low, min(high, low + 2)))
        count = max(low, min(high, count))
        choices = list(item.get("enum", []))
        self.rng.shuffle(choices)
        out: list[Any] = []
        for i in range(count):
            if slots and (key or field.endswith("_ids")):
                value = slots[i % len(slots)] if key is None else self._value(item, field, depth, slots[i % len(slots)])
            elif choices:
                value = choices[i % len(choices)]
            else:
                value = self._value(item, field, depth)
                for _ in range(_TRIES):
                    if value not in out:
                        break
                    value = self._value(item, field, depth)
            out.append(value)
        return self._in_date_order(out)

    def _count(self, field: str, depth: int) -> int | None:
        singular = field.removesuffix("s")
        names = [field, f"n_{field}", f"num_{field}", f"{field}_count", f"number_of_{field}",
                 f"{singular}_count", f"n_{singular}"]
        if depth == 0 or depth == 1:
            names.append("count")
        for name in names:
            value = self.variables.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def _in_date_order(self, items: list[Any]) -> list[Any]:
        if items and all(isinstance(i, str) and _date(i) for i in items):
            return sorted(items)
        if items and all(isinstance(i, dict) for i in items):
            key = next((k for k, v in items[0].items() if isinstance(v, str) and self._is_date_field(k)
                        and _date(v)), None)
            if key is not None and all(_date(i.get(key)) for i in items):
                return sorted(items, key=lambda i: i[key])
        return items

    def _integer(self, node: Mapping[str, Any], field: str) -> int:
        low = node.get("minimum", node["exclusiveMinimum"] + 1 if "exclusiveMinimum" in node else None)
        high = node.get("maximum", node["exclusiveMaximum"] - 1 if "exclusiveMaximum" in node else None)
        low = math.ceil(low) if low is not None else (max(0, high - 60) if high is not None else 1)
        high = math.floor(high) if high is not None else low + 60
        echoed = self.variables.get(field)
        if isinstance(echoed, int) and not isinstance(echoed, bool) and low <= echoed <= high:
            return echoed
        if field == "age" and max(low, 22) <= min(high, 70):
            low, high = max(low, 22), min(high, 70)
        step = int(node.get("multipleOf", 1)) or 1
        first = -(-low // step) * step
        return self.rng.choice(range(first, high + 1, step)) if first <= high else first

    def _number(self, node: Mapping[str, Any]) -> float:
        low = float(node.get("minimum", node.get("exclusiveMinimum", 0)))
        high = float(node.get("maximum", node.get("exclusiveMaximum", low + 10)))
        value = round(self.rng.uniform(low, high), 2)
        if "exclusiveMinimum" in node and value <= low or "exclusiveMaximum" in node and value >= high:
            value = (low + high) / 2
        return value

    # -- text ------------------------------------------------------------------------------

    @staticmethod
    def _is_date_field(field: str) -> bool:
        return field == "date" or field.endswith("_date") or field in ("when", "day")

    def _string(self, node: Mapping[str, Any], field: str) -> str:
        if node.get("format") == "date" or self._is_date_field(field):
            return self._day().isoformat()
        if node.get("format") == "date-time" or field.endswith("_at") or field == "timestamp":
            return f"{self._day().isoformat()}T{self.rng.randint(7, 21):02d}:{self.rng.randint(0, 59):02d}:00"
        if field.endswith("_id"):
            pool = self._id_pool(field)
            if pool:
                return str(self.rng.choice(pool))
            value = f"{field[:-3]}-{self.rng.randrange(10**6):06d}"
        else:
            value = self._text(field)
        for _ in range(_TRIES):
            if value not in self.used:
                break
            value = f"{field[:-3]}-{self.rng.randrange(10**6):06d}" if field.endswith("_id") else self._text(field)
        self.used.add(value)
        pending = self.mentions.get(field)
        if pending and not field.endswith("_id"):
            mention = pending.pop(0)
            value = (f"{mention}，{value}" if self.text.language == "zh" else f"{mention}: {value}")
        return self._fit(value, node)

    def _day(self) -> dt.date:
        return self.text.date_between(self.start, self.end)

    def _text(self, field: str) -> str:
        t = self.text
        base = field.lower()
        if base in _NAMES or base.endswith("_name"):
            return t.person_name()
        if base == "gender":
            return self.rng.choice(["女", "男"] if t.language == "zh" else ["female", "male"])
        if "question" in base or base == "query":
            return self._question()
        if base in _SHORT:
            return t.phrase()
        if base in _LONG_TEXT or base.endswith("_text"):
            return t.paragraph(2)
        return t.sentence()

    def _question(self) -> str:
        sentence = self.text.sentence()
        if self.text.language == "zh":
            return sentence.rstrip("。") + "，你怎么看？"
        return "How did it go when " + sentence[0].lower() + sentence[1:].rstrip(".") + "?"

    def _fit(self, value: str, node: Mapping[str, Any]) -> str:
        joiner = "" if self.text.language == "zh" else " "
        while len(value) < node.get("minLength", 0):
            value += joiner + self.text.sentence()
        limit = node.get("maxLength")
        if limit is not None and len(value) > limit:
            cut = value[:limit]
            ends = [cut.rfind(mark) for mark in ("。", ".", "？", "?", "！", "!")]
            end = max(ends)
            value = cut[:end + 1] if end + 1 >= max(node.get("minLength", 0), 1) else cut.rstrip()
            value = value or cut
        return value
