"""`memsynth check-answers`: judge answers a model wrote, without running a build."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import click
from rich.text import Text

from memsynth.cli.endpoint_options import endpoint_options
from memsynth.cli.output import WAREHOUSE_HELP, out
from memsynth.generation.endpoints import EndpointChoice


@click.command("check-answers")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="text: a line per answer and its problems; json: one object per answer")
@click.option("--show-repair", is_flag=True, help="text: also print the repair message a build would send back")
@click.option("--judge", is_flag=True,
              help="also audit each answer of an audited stage as a build would, with verdicts from the endpoint "
                   "(the flags below) or --verdicts, and print per rule the violations flagged and the acceptable "
                   "answers wrongly flagged")
@click.option("--verdicts", "verdicts_file", type=click.Path(dir_okay=False), metavar="FILE",
              help="the audit verdicts as JSON, {answer: {rule: {verdict: pass|violation, reason}}}, an answer named "
                   "by its key in --render-audits' index; implies --judge and calls no endpoint")
@click.option("--label-rules", "label_rules", type=click.Path(dir_okay=False), metavar="FILE",
              help="with --judge: the rule ids each violation's prose label names, as JSON {answer: [rule id, ...]}, "
                   "so each rule's row counts the violations labelled with it and the judge's recall is given on "
                   "the violations of audited rules apart from those of check-only rules")
@click.option("--render-audits", "render_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="write each audited answer's audit prompt to DIR (a new folder): messages, rules and schema, "
                   "without its label or the rule a mistake breaks; nothing else is done")
@endpoint_options(default_from="llm defaults (gpt-4o-mini on $OPENAI_BASE_URL)")
@click.option("--warehouse", help="where the judge's answers are cached: " + WAREHOUSE_HELP)
@click.option("--mutants", is_flag=True,
              help="instead: break every acceptable answer one rule at a time and print, per rule, how many of "
                   "those mutants the checks reject; what none rejects is the rule's judge work")
def check_answers(paths: tuple[str, ...], fmt: str, show_repair: bool, judge: bool, verdicts_file: str | None,
                  label_rules: str | None, render_dir: str | None, endpoint: EndpointChoice, warehouse: str | None,
                  mutants: bool) -> None:
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

    if render_dir:
        from memsynth.quality.audit_check import audit_cases, render_audits

        written = render_audits(audit_cases(paths), Path(render_dir))
        out.print(f"wrote {written} audit prompts to {render_dir} (index.json lists them)")
        return
    verdicts = check_paths(paths)
    if label_rules and not (judge or verdicts_file):
        raise click.UsageError("--label-rules scores a judge: give --judge or --verdicts with it")
    figures = (_judged(paths, verdicts, endpoint, verdicts_file, label_rules, warehouse)
               if judge or verdicts_file else None)
    if fmt == "json":
        answers = [v.to_json() for v in verdicts]
        click.echo(json.dumps(answers if figures is None else {"answers": answers, "judge": figures},
                              ensure_ascii=False, indent=2))
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
        if tally[("violation", True)] + tally[("violation", False)]:
            from memsynth.quality.label_quotes import claimed_by_checks

            claimed = claimed_by_checks(verdicts)
            if claimed["claimed"]:
                out.print(f"violations whose label quotes prompt lines only checks enforce: {claimed['rejected']}/"
                          f"{claimed['claimed']} rejected")
        if figures is not None:
            _print_figures(figures)
    if not all(v.passed for v in verdicts):
        raise SystemExit(1)


def _mutants(paths: tuple[str, ...], fmt: str) -> None:
    """The per-rule mutation table of the files' acceptable answers (memsynth.quality.mutants)."""
    from memsynth.quality.mutants.report import mutation_report

    report = mutation_report(paths)
    click.echo(json.dumps(report.to_json(), ensure_ascii=False, indent=2) if fmt == "json" else report.text())


def _judged(paths: tuple[str, ...], checked: list, endpoint: EndpointChoice, verdicts_file: str | None,
            label_rules: str | None, warehouse: str | None) -> dict:
    """The audit judge's figures on the answers, its verdicts from a file or the endpoint."""
    from memsynth.quality.audit_check import (
        audit_cases,
        judge_figures,
        judge_with_endpoint,
        read_label_rules,
        read_verdicts,
    )

    cases = audit_cases(paths)
    labelled = read_label_rules(Path(label_rules), cases) if label_rules else None
    if verdicts_file:
        given = read_verdicts(Path(verdicts_file), cases)
        judge = "verdicts file"
    else:
        from memsynth.cli.output import warehouse_root
        from memsynth.core.config import BuildConfig
        from memsynth.generation.endpoints import choose
        from memsynth.simulator.endpoint import endpoint_for

        config = choose(BuildConfig(dataset="check-answers"), endpoint)
        given = judge_with_endpoint(cases, config, endpoint_for(endpoint.llm), warehouse_root(warehouse))
        judge = "memsynth simulator" if endpoint.llm == "simulator" else config.llm.model
    return {"judge": judge, **judge_figures(cases, given, checked, labelled)}


def _print_figures(f: dict) -> None:
    from rich.table import Table

    # A rule id is what a reader greps for: never cut, the other columns wrap around it.
    table = Table()
    table.add_column("rule", no_wrap=True, min_width=max((len(r["rule"]) for r in f["rules"]), default=4))
    for header in ("audited in", "violations labelled: rule flagged / in scope", "any rule flagged / all",
                   "acceptable wrongly flagged"):
        table.add_column(header)
    for r in f["rules"]:
        table.add_row(r["rule"], ", ".join(r["stages"]) or "– (checks only)",
                      f"{r['labelled_flagged']}/{r['labelled_in_scope']}" if r["labelled_in_scope"] else "–",
                      f"{r['labelled_flagged_any']}/{r['labelled']}" if r["labelled"] else "–",
                      f"{r['acceptable_flagged']}/{r['acceptable']}" if r["stages"] else "–")
    out.print(f"audit judge ({f['judge']}) on {f['audited']} audited answers"
              + (f", {f['unjudged']} without a verdict" if f["unjudged"] else "") + ":")
    out.print(table)
    if f["labelled_rules"]:
        out.print(f"judge recall on violations of audited rules: the labelled rule flagged "
                  f"{f['in_scope_flagged_rule']}/{f['in_scope']}, any rule {f['in_scope_flagged']}/{f['in_scope']}")
        out.print(f"violations of check-only rules (the judge is not asked about them): {f['check_only']}, "
                  f"flagged anyway {f['check_only_flagged']}, rejected by the checks "
                  f"{f['check_only_rejected']}/{f['check_only']}"
                  + (f"; {f['unlabelled']} violations with no rule id in --label-rules" if f["unlabelled"] else ""))
    else:
        out.print("(per-rule violation figures need each violation's rule ids: --label-rules FILE)")
    out.print(f"violations flagged by any rule {f['violations_flagged']}/{f['violations']}; "
              f"by the checks or the judge {f['violations_caught_with_checks']}/{f['violations']}; "
              f"acceptable answers wrongly flagged {f['acceptable_flagged']}/{f['acceptable']}")
    if f["all_violations"]:  # the targets' figure: every mistake, whatever its stage
        out.print(f"every violation: rejected by the checks {f['all_rejected']}/{f['all_violations']}; by the checks "
                  f"or the judge {f['all_caught']}/{f['all_violations']} ({f['all_unaudited']} on stages no audit "
                  "reads)")
    for what, names in (("in-scope violations missed", f["missed"]), ("acceptable wrongly flagged", f["wrongly_flagged"])):
        if names:
            out.print(f"{what}: " + "; ".join(names))
