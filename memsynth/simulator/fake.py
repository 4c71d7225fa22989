"""Generate a JSON value that satisfies a (pydantic-produced) JSON Schema."""

from __future__ import annotations

import datetime as dt
from typing import Any

from memsynth.simulator.text import TextMaker

DEFAULT_DATE = dt.date(2024, 6, 1)


class SchemaFaker:
    """Walks a JSON Schema and fills it with plausible values, guided by field names."""

    def __init__(self, text: TextMaker, *, today: dt.date = DEFAULT_DATE):
        self.text = text
        self.rng = text.rng
        self.today = today

    def generate(self, schema: dict[str, Any]) -> Any:
        return self._value(schema, schema.get("$defs", {}), "")

    def _value(self, node: dict[str, Any], defs: dict[str, Any], field: str) -> Any:
        if "$ref" in node:
            return self._value(defs[node["$ref"].rsplit("/", 1)[-1]], defs, field)
        if "const" in node:
            return node["const"]
        if "enum" in node:
            return self.rng.choice(node["enum"])
        for key in ("anyOf", "oneOf"):
            if key in node:
                options = [o for o in node[key] if o.get("type") != "null"] or node[key]
                return self._value(options[0], defs, field)
        if "allOf" in node:
            return self._value(node["allOf"][0], defs, field)
        kind = node.get("type", "object" if "properties" in node else "string")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "string")
        if kind == "object":
            return {name: self._value(sub, defs, name)
                    for name, sub in node.get("properties", {}).items()}
        if kind == "array":
            low = node.get("minItems", 1)
            high = node.get("maxItems", max(low, 1) + 2)
            count = self.rng.randint(low, max(low, min(high, low + 2)))
            return [self._value(node.get("items", {}), defs, field) for _ in range(count)]
        if kind == "integer":
            low = int(node.get("minimum", node.get("exclusiveMinimum", 0) + 1 if "exclusiveMinimum" in node else 1))
            high = int(node.get("maximum", low + 60))
            if field == "age":
                low, high = max(low, 22), min(high, 70)
            return self.rng.randint(low, max(low, high))
        if kind == "number":
            low = float(node.get("minimum", 0))
            high = float(node.get("maximum", low + 10))
            return round(self.rng.uniform(low, high), 2)
        if kind == "boolean":
            return self.rng.random() < 0.5
        return self._string(node, field)

    def _string(self, node: dict[str, Any], field: str) -> str:
        if node.get("format") == "date" or field.endswith("date"):
            return (self.today - dt.timedelta(days=self.rng.randint(30, 1500))).isoformat()
        if node.get("format") == "date-time":
            return f"{self.today.isoformat()}T{self.rng.randint(7, 21):02d}:{self.rng.randint(0, 59):02d}:00"
        t = self.text
        if field == "name" or field.endswith("_name"):
            value = t.person_name()
        elif field in ("gender",):
            value = self.rng.choice(["女", "男"] if t.language == "zh" else ["female", "male", "non-binary"])
        elif field in ("description", "text", "content", "details", "scene", "summary"):
            value = t.paragraph(2)
        elif field in ("theme", "title", "occupation", "education"):
            value = t.phrase()
        else:
            value = t.sentence()
        low = node.get("minLength", 0)
        while len(value) < low:
            value += " " + t.sentence()
        if "maxLength" in node:
            value = value[: node["maxLength"]]
        return value
