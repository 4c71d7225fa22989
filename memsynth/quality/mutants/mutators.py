"""The shared mutators, by job: base.py (context, mutant, aim, paths), sizes.py (sentences,
lengths, counts), moments.py (dates and clock times), wording.py (people, paraphrases, joins,
softeners, voice, inserted text) and fields.py (fields dropped, invented or set). This module
names them all in one place, as the recipes' and the check library's imports have them."""

from memsynth.quality.mutants.base import (
    CHECK_RULE,
    Aim,
    Bound,
    Context,
    Mutant,
    Mutator,
    Path,
    People,
    Swaps,
    Texts,
    Where,
    _bound,
    _key,
    _pick,
    _show,
    _texts,
    get,
    locate,
    parse_path,
    put,
)
from memsynth.quality.mutants.fields import Copy, Fields, Set, Values
from memsynth.quality.mutants.moments import Dated, DayInWords, Moved, ProseMoment
from memsynth.quality.mutants.sizes import Count, DropOne, Longer, Merged, Sentences
from memsynth.quality.mutants.wording import (
    Duplicate,
    InsertPerson,
    InsertText,
    Join,
    Listed,
    PairDuplicate,
    Replace,
    Reword,
    Soften,
    Voice,
)

__all__ = [
    "CHECK_RULE", "Aim", "Bound", "Context", "Copy", "Count", "DropOne", "Duplicate", "Fields", "InsertPerson", "InsertText",
    "Dated", "DayInWords", "Join", "Listed", "Longer", "Merged", "Moved", "Mutant", "Mutator", "PairDuplicate", "Path", "People", "ProseMoment", "Replace",
    "Reword", "Sentences", "Set", "Soften", "Swaps", "Texts", "Values", "Voice", "Where", "_bound", "_key", "_pick", "_show",
    "_texts", "get", "locate", "parse_path", "put",
]
