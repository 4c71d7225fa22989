"""Mutators of structure: a required field dropped or one invented, a value the schema
constrains broken (both the schema's work, read from the stage's JSON schema), a field set to
a value that breaks the rule (a judge's flag against its score, a score off the scale), a
field given another item's value (one emotion scored twice).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants.base import Context, Mutant, Mutator, Path, Where, _key, _show, get, locate, put


@dataclass(frozen=True)
class Fields(Mutator):
    """A required field dropped (each top-level one, and one of a list item; with `every`,
    each of the list item's), or a field the schema does not have invented."""

    every: bool = False
    kind = "fields"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if not isinstance(answer, dict):
            return
        required = set(ctx.schema.get("required", []))
        for key in answer:
            if key in required:
                out = copy.deepcopy(answer)
                del out[key]
                yield Mutant(out, "drop_field", f"{key} dropped")
        for key, value in answer.items():
            if isinstance(value, list) and value and isinstance(value[0], dict):
                inner = _item_required(ctx.schema, key)
                for k in value[0]:
                    if k in inner:
                        out = copy.deepcopy(answer)
                        del out[key][0][k]
                        yield Mutant(out, "drop_field", f"{key}[0].{k} dropped")
                        if not self.every:
                            break
                break
        invented = "notes" if "notes" not in answer else "remarks"
        yield Mutant({**copy.deepcopy(answer), invented: "added by the model"}, "invent_field", f"{invented} invented")


def _item_required(schema: Mapping[str, Any], key: str) -> set[str]:
    prop = schema.get("properties", {}).get(key, {})
    return set(_resolved(schema, prop.get("items", {})).get("required", []))


def _resolved(schema: Mapping[str, Any], prop: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = str(prop.get("$ref", ""))
    return schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], {}) if ref else prop


# A value off a listed set as a model writes one (the listed values are English: a zh answer
# translates them), and a date told rather than written.
_OFF_LIST = {"en": "other", "zh": "其他"}
_PROSE_DATE = {"en": "last spring", "zh": "去年春天"}


def _constrained(answer: Mapping[str, Any], schema: Mapping[str, Any]) -> Iterator[tuple[Path, Mapping[str, Any]]]:
    """(path, property schema) of each top-level field, and of each field of a list's first item."""
    props = schema.get("properties", {})
    for key, value in answer.items():
        prop = _resolved(schema, props.get(key, {}))
        yield (key,), prop
        item = _resolved(schema, prop.get("items", {}))
        if isinstance(value, list) and value and isinstance(value[0], dict) and item.get("properties"):
            for k in value[0]:
                yield (key, 0, k), _resolved(schema, item["properties"].get(k, {}))


def _broken(prop: Mapping[str, Any], value: Any, language: str) -> Iterator[tuple[str, Any]]:
    """Values that break what `prop` asks of `value`, each with its label."""
    if "enum" in prop and _OFF_LIST[language] not in prop["enum"]:
        yield "off_list", _OFF_LIST[language]
    kind = prop.get("type")
    if kind == "string":
        if prop.get("minLength", 0) >= 1 and value != "":
            yield "empty", ""
        if prop.get("format") in ("date", "date-time"):
            yield "prose_date", _PROSE_DATE[language]
        elif "pattern" in prop:  # a near miss (seconds added: "2024-10-15 17:15:00") first, else words
            yield "off_pattern", next(c for c in (f"{value}:00", _PROSE_DATE[language], "?")
                                      if not re.search(prop["pattern"], c))
    elif kind in ("integer", "number") and isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in prop:
            yield "below_minimum", prop["minimum"] - 1
        if "maximum" in prop:
            yield "above_maximum", prop["maximum"] + 1
        if kind == "integer":
            yield "fractional", value + 0.5
    elif kind == "array" and prop.get("minItems", 0) >= 1 and value:
        yield "emptied", []


@dataclass(frozen=True)
class Values(Mutator):
    """A value the stage's schema constrains broken, one mutant per field and way (top-level
    fields and a list's first item): a text emptied, a listed value replaced by one off the
    list, a date or a patterned value told in words, a whole number past its bounds or made
    fractional, a required list emptied."""

    kind = "values"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if not isinstance(answer, dict):
            return
        for path, prop in _constrained(answer, ctx.schema):
            for label, value in _broken(prop, get(answer, path), ctx.language):
                yield Mutant(put(answer, path, value), f"bad_value:{label}", f"{_show(path)} = {value!r}")


@dataclass(frozen=True)
class Copy(Mutator):
    """A field given the value the same field has in another item (one emotion scored twice
    and another not at all); two mutants, from different pairs."""

    where: Where
    label: str = "copied_value"
    kind = "copy"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        paths = locate(answer, self.where, ctx.variables)
        values = [get(answer, p) for p in paths]
        pairs = [(i, j) for i in range(len(paths)) for j in range(len(paths)) if i != j and values[i] != values[j]]
        for i, j in ctx.rng(f"copy/{_key(self.where)}").sample(pairs, min(2, len(pairs))):
            yield Mutant(put(answer, paths[j], copy.deepcopy(values[i])), self.label,
                         f"{_show(paths[j])} = {_show(paths[i])}")



@dataclass(frozen=True)
class Set(Mutator):
    """A field set to `value` where `when` (of the answer) says that breaks the rule: a judge's
    flag turned against a high score, a score off the scale."""

    where: Where
    value: Any
    label: str = "set"
    when: Callable[[Any, Mapping[str, Any]], bool] | None = None
    # The value from the answer as written (a neighbour of the number it gives), instead of `value`;
    # None when this answer offers none (no mutant then).
    from_answer: Callable[[Any, Mapping[str, Any]], Any] | None = None
    kind = "set"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if self.when is not None and not self.when(answer, ctx.variables):
            return
        for path in locate(answer, self.where, ctx.variables)[:1]:
            value = (self.from_answer(answer, ctx.variables) if self.from_answer
                     else self.value(ctx.variables) if callable(self.value) else self.value)
            if self.from_answer and value is None:
                return
            if get(answer, path) != value:
                yield Mutant(put(answer, path, value), self.label, f"{_show(path)} = {value!r}")
