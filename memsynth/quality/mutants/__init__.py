"""Mutants: good answers turned into answers that break one rule, to measure the checks.

    from memsynth.quality.mutants import Aim, Sentences, Longer, InsertPerson, ...
    AIMS = (Aim("scene-form", ("scene",), Sentences("scene", low=2, high=4)), ...)

A recipe declares its aims in `flows/<recipe>/mutants.py` (`AIMS`): each names a rule id of
the recipe's rules table, the stages it applies to and a mutator (mutators.py names them) saying where
in the answer it works and which bound it breaks. `python -m memsynth.quality.mutants PATH...`
runs them over the acceptable answers of answer files and prints, per rule, how many mutants
the rule's checks reject; the ones no check rejects are the rule's judge work.

Mutators: Sentences (add or drop sentences past a bound), Longer (10-30 % past a length), Merged
(two items of a list as one),
Count (items past a bound), Moved (a date or minute field past a bound), DayInWords (an ISO
day written "March 13, 2024" or 2024年3月13日), ProseMoment (prose
dated after an end: "17:15", "5:30 pm", "下午五点半", "10月16日"), Dated (a date put in a
text that must carry none), InsertPerson (full name,
surname + title, given name, kinship term), Duplicate / PairDuplicate (an item reworded
from another), Join (two solutions as one: or / alternatively / 或者 / 也可以), Listed (a list where one
item is asked for: 1. 2. 3., 方案一：, 一是…二是…, first/second, ；-joined), Soften (a
refusal that agrees first), Voice (person or voice switched), Fields (a field dropped or
invented), Values (a value the schema constrains broken: emptied, off its list, a date in
words, past its bounds), Copy (a field given another item's value), Rewrite (texts replaced: a
user who never gets to the point, a scene of another need), Swap (two values exchanged: a liked
choice and a disliked one), Append (text chosen from the answer itself: a memory the reply has
not used). The emotion-scoring stage every recipe shares has its aims in emotions.py.
The word tables (lexicon.py) are small and hand-made.
"""

from memsynth.quality.mutants.mutators import (
    Aim,
    Context,
    Copy,
    Count,
    Dated,
    DayInWords,
    DropOne,
    Duplicate,
    Fields,
    InsertPerson,
    InsertText,
    Join,
    Listed,
    Longer,
    Merged,
    Moved,
    Mutant,
    Mutator,
    PairDuplicate,
    ProseMoment,
    Replace,
    Reword,
    Sentences,
    Set,
    Soften,
    Values,
    Voice,
    get,
    locate,
)
from memsynth.quality.mutants.rewrite import Append, Rewrite, Swap, least_related
from memsynth.quality.mutants.run import (
    SCHEMA_RULE,
    Case,
    Outcome,
    RuleTally,
    Runner,
    corpus_cases,
    format_table,
    tally,
)

__all__ = [
    "SCHEMA_RULE", "Aim", "Append", "Case", "Context", "Copy", "Count", "Dated", "DayInWords", "DropOne", "Duplicate", "Fields", "InsertPerson",
    "InsertText", "Join", "Listed", "Longer", "Merged", "Moved", "Mutant", "Mutator", "Outcome", "PairDuplicate",
    "ProseMoment", "Replace", "Reword", "Rewrite", "Swap", "least_related", "RuleTally", "Runner", "Sentences", "Set", "Soften", "Values", "Voice",
    "corpus_cases", "format_table", "get", "locate", "tally"
]
