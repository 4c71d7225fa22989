"""The mutation table of answer files: what `memsynth check-answers --mutants` prints.

Only acceptable answers that pass their stage as they stand are mutated: a mutant of an
answer the checks already reject would count as killed whatever it broke. Those are named
in the report instead, and the files are read and refused exactly as check-answers reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memsynth.quality.mutants.run import Case, Outcome, RuleTally, Runner, corpus_cases, format_table, tally

# What a mutator or a check raises on variables a file lacks (the rest is a bug, and says so).
_BAD_VARIABLES = (KeyError, TypeError, ValueError, AttributeError, IndexError)


@dataclass
class MutationReport:
    mutated: list[Case]
    refused: list[tuple[Case, list[str]]]  # acceptable answers rejected as they stand: not mutated
    rows: dict[tuple[str, str], RuleTally]

    def to_json(self) -> dict[str, Any]:
        return {"mutated": len(self.mutated),
                "refused": [{"id": c.id, "file": c.file, "problems": p} for c, p in self.refused],
                "rules": [row.to_json() for row in self.rows.values()]}

    def text(self, survivors: bool = False) -> str:
        lines = [f"{len(self.mutated)} acceptable answers mutated"]
        for case, problems in self.refused:
            lines.append(f"not mutated, rejected as it stands: {case.recipe}.{case.stage} {case.id}: {problems[0]}")
        lines.append(format_table(self.rows))
        if survivors:
            lines += [f"  {row.recipe}/{row.rule}: {o.case.id} {o.mutant.mutator}: {o.mutant.note}"
                      for row in self.rows.values() for o in row.survivors]
        return "\n".join(lines)


def mutation_report(paths: Iterable[str | Path]) -> MutationReport:
    """Mutate every acceptable answer of the files (folders searched for *.json) and tally per rule."""
    from memsynth.quality.answer_check import AnswerFileError, check_paths

    paths = list(paths)
    check_paths(paths)  # refuses what check-answers refuses (a stage whose prompt the variables cannot render)
    cases = corpus_cases(paths)
    if not cases:
        raise AnswerFileError("no acceptable answer to mutate: mutants are made from answers labelled "
                              "\"acceptable\" (an object or a list, not a string)")
    runner = Runner()
    mutated: list[Case] = []
    refused: list[tuple[Case, list[str]]] = []
    outcomes: list[Outcome] = []
    for case in cases:
        try:
            runner.stage(case.recipe, case.stage)
        except AnswerFileError as exc:  # an unknown recipe or stage: say which file names it
            raise AnswerFileError(f"{case.file}: {exc}") from None
        try:
            problems = runner.problems(case, case.answer)
            mine = [] if problems else list(runner.outcomes([case]))
        except _BAD_VARIABLES as exc:
            raise AnswerFileError(f"{case.file}: stage {case.recipe}.{case.stage} cannot take these variables "
                                  f"({type(exc).__name__}: {exc})") from exc
        if problems:
            refused.append((case, problems))
        else:
            mutated.append(case)
            outcomes += mine
    return MutationReport(mutated, refused, tally(runner, outcomes))
