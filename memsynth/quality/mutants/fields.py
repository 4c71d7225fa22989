"""Mutators of structure: a required field dropped or one invented (the schema's work), a field
set to a value that breaks the rule (a judge's flag against its score, a score off the scale).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants.base import Context, Mutant, Mutator, Where, _show, get, locate, put


@dataclass(frozen=True)
class Fields(Mutator):
    """A required field dropped (each top-level one, and one of a list item), or a field the
    schema does not have invented."""

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
                        break
                break
        invented = "notes" if "notes" not in answer else "remarks"
        yield Mutant({**copy.deepcopy(answer), invented: "added by the model"}, "invent_field", f"{invented} invented")


def _item_required(schema: Mapping[str, Any], key: str) -> set[str]:
    prop = schema.get("properties", {}).get(key, {})
    ref = prop.get("items", {}).get("$ref", "")
    target = schema.get("$defs", {}).get(ref.rsplit("/", 1)[-1], prop.get("items", {}))
    return set(target.get("required", []))



@dataclass(frozen=True)
class Set(Mutator):
    """A field set to `value` where `when` (of the answer) says that breaks the rule: a judge's
    flag turned against a high score, a score off the scale."""

    where: Where
    value: Any
    label: str = "set"
    when: Callable[[Any, Mapping[str, Any]], bool] | None = None
    kind = "set"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        if self.when is not None and not self.when(answer, ctx.variables):
            return
        for path in locate(answer, self.where, ctx.variables)[:1]:
            value = self.value(ctx.variables) if callable(self.value) else self.value
            if get(answer, path) != value:
                yield Mutant(put(answer, path, value), self.label, f"{_show(path)} = {value!r}")
