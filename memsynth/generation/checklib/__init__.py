"""The check library: the rules recipes share, declared as data on a stage rather than written.

    from memsynth.generation import checklib as lib

    SCENE = Stage("mybench", "scene", Scene, checks=(
        lib.sentences("scene", min=2, max=4),
        lib.distinct("themes[].name"),
        lib.dates_within("items[].date", start=lib.var("window_start"), end=lib.var("reference_date")),
    ))

Each call returns a `Check` (a `LibraryCheck`, which also says its kind and parameters as
data) named `<kind>_<path>` unless given `name=`; each problem it finds is worded in the
build's language (en or zh) and states the bound it enforces, as the repair prompt hands it
back to the model. Paths and bounds: `memsynth.generation.checklib.paths`.
"""

from memsynth.generation.checklib.counts import (
    characters,
    items,
    one_item,
    one_question,
    questions,
    sentences,
    words,
)
from memsynth.generation.checklib.overlap import distinct, no_leak, no_mention, not_copied
from memsynth.generation.checklib.paths import LibraryCheck, Var, select, var
from memsynth.generation.checklib.timing import chronological, dates_within, times_within

__all__ = ["LibraryCheck", "Var", "characters", "chronological", "dates_within", "distinct", "items", "no_leak",
           "no_mention", "not_copied", "one_item", "one_question", "questions", "select", "sentences",
           "times_within", "var", "words"]
