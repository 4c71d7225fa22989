"""Mutants of a stated age: the person made older than their band allows ("roughly the age")."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memsynth.quality.mutants.base import Context, Mutant, Mutator, put
from memsynth.quality.textrules.ages import band, restate_ages, stated_ages

# Past the band's top by more than a decade's part: "early forties" must not meet "35-39".
_OLDER_BY = 12
_SAID = {"en": " They are {age}.", "zh": "今年{age}岁。"}


@dataclass(frozen=True)
class AgeOutside(Mutator):
    """Every age `field` states made `_OLDER_BY` years past the band of the variable `band_of`, in
    the text's own form; a text that states none gets a sentence that does."""

    field: str
    band_of: str = "age_band"
    kind = "age_outside"

    def __call__(self, answer: Any, ctx: Context) -> Iterator[Mutant]:
        text = answer.get(self.field) if isinstance(answer, dict) else None
        wanted = band(str(ctx.variables.get(self.band_of, "")))
        if not isinstance(text, str) or wanted is None:
            return
        age = wanted[1] + _OLDER_BY
        if stated_ages(text):
            yield Mutant(put(answer, (self.field,), restate_ages(text, age)), "age_outside:restated",
                         f"{self.field}: every stated age made {age}")
            return
        said = _SAID.get(ctx.language, _SAID["en"]).format(age=age)
        yield Mutant(put(answer, (self.field,), text.rstrip() + said), "age_outside:added",
                     f"{self.field}: '{said.strip()}' added")
