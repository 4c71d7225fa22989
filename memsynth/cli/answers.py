"""`memsynth check-answers`: judge answers a model wrote, without running a build."""

from __future__ import annotations

import json
from collections import Counter

import click
from rich.text import Text

from memsynth.cli.output import out


@click.command("check-answers")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a line per answer and its problems; json: one object per answer")
@click.option("--show-repair", is_flag=True, help="text: also print the repair message a build would send back")
@click.option("--mutants", is_flag=True,
              help="instead: break every acceptable answer one rule at a time and print, per rule, how many of "
                   "those mutants the checks reject; what none rejects is the rule's judge work")
def check_answers(paths: tuple[str, ...], fmt: str, show_repair: bool, mutants: bool) -> None:
    """Run answers through their stage's JSON extraction, schema and checks, as a build does.

    PATH is an answer file, or a folder searched for *.json. A file holds one stage's
    variables and its answers: {"recipe": "enpmr", "stage": "support_dialogue", "language":
    "zh", "variables": {...}, "answers": [{"id": "a1", "answer": {...}, "label":
    "acceptable"}]}; `label` (acceptable or violation) is optional. Problems are worded in
    the answer's language, as the repair prompt would word them.

    Exit status: 0 every answer passed, 1 some answer was rejected, 2 a file could not be
    read or names a stage that cannot take its variables.

    With --mutants (docs/rules-and-mutants.md), exit 0 once the table is printed.
    """
    if mutants:
        _mutants(paths, fmt)
        return
    from memsynth.quality.answer_check import check_paths

    verdicts = check_paths(paths)
    if fmt == "json":
        click.echo(json.dumps([v.to_json() for v in verdicts], ensure_ascii=False, indent=2))
    else:
        for v in verdicts:
            status = ("passed", "green") if v.passed else ("rejected", "red")
            label = f" (labelled {v.label})" if v.label else ""
            out.print(Text.assemble(f"{v.recipe}.{v.stage} [{v.language}] {v.id}: ", status, label))
            for problem in v.problems:
                out.print(f"  - {problem}")
            if show_repair and v.repair:
                out.print("  repair message:")
                for line in v.repair.splitlines():
                    out.print(f"    {line}")
        tally = Counter((v.label, v.passed) for v in verdicts)
        passed = sum(v.passed for v in verdicts)
        line = f"{len(verdicts)} answers: {passed} passed, {len(verdicts) - passed} rejected"
        if tally[("acceptable", True)] + tally[("acceptable", False)]:
            line += (f"; acceptable passed {tally[('acceptable', True)]}/"
                     f"{tally[('acceptable', True)] + tally[('acceptable', False)]}")
        if tally[("violation", True)] + tally[("violation", False)]:
            line += (f"; violations rejected {tally[('violation', False)]}/"
                     f"{tally[('violation', True)] + tally[('violation', False)]}")
        out.print(line)
    if not all(v.passed for v in verdicts):
        raise SystemExit(1)


def _mutants(paths: tuple[str, ...], fmt: str) -> None:
    """The per-rule mutation table of the files' acceptable answers (memsynth.quality.mutants)."""
    from memsynth.quality.mutants.report import mutation_report

    report = mutation_report(paths)
    click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2) if fmt == "json" else report.text())
