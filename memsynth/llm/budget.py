"""How many tokens a stage's answer may need: its budget, the max_tokens it is first sent with.

A stage sent the build's whole limit (4096 by default) pays that limit for every answer a
model runs on with: a small model under a JSON grammar can emit whitespace inside an object
until it is stopped. The budget is what the answer needs with room to spare, from the
bounds of its JSON schema (list lengths × string lengths), or declared by the recipe where
the schema has no bound; an answer cut off at it is asked again with more, up to the
ceiling, as any cut-off answer is.
"""

from __future__ import annotations

import math
from typing import Any

# Room to spare: twice what the largest answer the schema allows is estimated to take.
ROOM = 2.0
STEP = 256  # budgets are rounded up to this, and never below it
MAX_DEPTH = 32  # a schema nested deeper (or recursive) is unbounded

_FIXED = {"integer": 4, "number": 8, "boolean": 2, "null": 2}
_FORMATS = {"date": 6, "date-time": 12, "time": 6, "email": 16, "uuid": 20}


def estimate_tokens(text: str) -> float:
    """Tokens `text` takes, erring high: a CJK (or other wide) character one, anything else a third."""
    wide = sum(1 for ch in text if ord(ch) > 0x2E7F)
    return (len(text) - wide) / 3 + wide


def schema_budget(schema: dict[str, Any] | None) -> int | None:
    """The budget an answer of `schema` needs (rounded up to STEP), or None when the schema
    bounds no length: a string without maxLength, a list without maxItems, free keys."""
    if schema is None:
        return None
    tokens = _tokens(schema, schema.get("$defs") or schema.get("definitions") or {}, 0)
    if tokens is None:
        return None
    return round_budget(tokens * ROOM)


def round_budget(tokens: float) -> int:
    return max(STEP, math.ceil(tokens / STEP) * STEP)


def _tokens(node: Any, defs: dict[str, Any], depth: int) -> float | None:
    """The most tokens a JSON value of `node` takes (keys, quotes and punctuation included)."""
    if depth > MAX_DEPTH or not isinstance(node, dict):
        return None
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref.rsplit("/", 1)[-1])
        return _tokens(target, defs, depth + 1)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in node:
            options = [_tokens(o, defs, depth + 1) for o in node[key]]
            return None if not options or None in options else max(o for o in options if o is not None)
    if "enum" in node or "const" in node:
        values = node.get("enum") or [node.get("const")]
        return max(estimate_tokens(str(v)) for v in values) + 2
    kind = node.get("type")
    if isinstance(kind, list):  # ["string", "null"]: the larger
        options = [_tokens({**node, "type": k}, defs, depth + 1) for k in kind]
        return None if None in options else max(o for o in options if o is not None)
    if kind in _FIXED:
        return _FIXED[kind]
    if kind == "string":
        if node.get("format") in _FORMATS:
            return _FORMATS[node["format"]]
        most = node.get("maxLength")
        return None if most is None else most + 2  # a character a token at worst (CJK), and quotes
    if kind == "array":
        most = node.get("maxItems")
        item = _tokens(node.get("items") or {}, defs, depth + 1)
        return None if most is None or item is None else most * (item + 1) + 2
    if kind == "object" or "properties" in node:
        if node.get("additionalProperties") not in (None, False):
            return None
        total = 2.0
        for name, prop in (node.get("properties") or {}).items():
            value = _tokens(prop, defs, depth + 1)
            if value is None:
                return None
            total += estimate_tokens(name) + 3 + value  # "name": value,
        return total
    return None
