"""The data commands: recipes, datasets, versions, runs, query, import, personas import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from rich.table import Table as RichTable
from rich.text import Text

from memsynth.cli.output import WAREHOUSE_HELP, out, print_rows, warehouse_root
from memsynth.core.errors import MemsynthError


def _with_audits(recipe: dict[str, Any]) -> dict[str, Any]:
    """A described recipe whose rules also name the audit judge that reads them, where its
    audit plan lists them: on every item of a gold stage, else on a sample."""
    from memsynth.generation.registry import audit_plan, audit_rules

    plan = audit_plan(recipe["name"])
    if plan is None:
        return recipe
    stages_of: dict[str, list[str]] = {}
    for stage, ids in audit_rules(recipe["name"]).items():
        for rule_id in ids:
            stages_of.setdefault(rule_id, []).append(stage)
    for rule in recipe["rules"]:
        stages = stages_of.get(rule["id"])
        if not stages:
            continue
        gold = [s for s in stages if s in plan.gold]
        sample = [s for s in stages if s not in plan.gold]
        audit = "audit judge on " + ", ".join(
            [f"{', '.join(gold)} (every item)"] * bool(gold) + [f"{', '.join(sample)} (a sample, quality.audit_rate)"]
            * bool(sample))
        rule["audited_in"] = stages
        # An audited rule is no longer the prompt's alone: the reason it has no check stays in
        # `prompt_only`, the line says who reads it.
        rule["enforced_by"] = audit if not (rule["checks"] or rule["judges"] or rule["built_in"]) \
            else f"{rule['enforced_by']}; {audit}"
    return recipe


@click.command()
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def recipes(name: str | None, fmt: str) -> None:
    """List the recipes a config may name; with NAME, its stage chain, the seed's rules and
    what enforces each (a check, a judge criterion, or the prompt alone and why), its tables
    and options (defaults and what each means)."""
    from memsynth.generation.registry import names, recipe_class

    described = [_with_audits(recipe_class(n).describe()) for n in ([name] if name else names())]
    if fmt == "json":
        click.echo(json.dumps(described if name is None else described[0], ensure_ascii=False, indent=2))
        return
    if name is None:
        table = RichTable("recipe", "stages", "tables", "description")
        for r in described:
            table.add_row(r["name"], " → ".join(s["name"] for s in r["stages"]),
                          ", ".join(t["name"] for t in r["tables"]), r["description"])
        out.print(table)
        return
    r = described[0]
    out.print(Text.assemble((r["name"], "bold"), f" — {r['description']}"))
    stages = RichTable("stage", "template", "checks", "on failure")
    for s in r["stages"]:
        note = " (writes personas when the pool is short)" if s["writes_personas"] else ""
        checks = ", ".join(s["checks"]) + (f"; then judged by {s['judge']}" if s["judge"] else "")
        stages.add_row(s["name"] + note, s["template"], checks, s["policy"])
    out.print(stages)
    tables = RichTable("table", "columns")
    for t in r["tables"]:
        tables.add_row(t["name"], ", ".join(t["columns"]))
    out.print(tables)
    if r["rules"]:
        rules = RichTable("rule", "what it asks", "enforced by", "from")
        for rule in r["rules"]:
            rules.add_row(rule["id"], rule["rule"], rule["enforced_by"], rule["source"])
        out.print(rules)
    options = RichTable("option", "type", "default", "description")
    for o in r["options"]:
        options.add_row(o["name"], o["type"], json.dumps(o["default"], ensure_ascii=False), o["description"])
    out.print(options)


@click.group()
def datasets() -> None:
    """Datasets in the warehouse."""


@datasets.command("list")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def datasets_list(warehouse: str | None, fmt: str) -> None:
    """List datasets with their latest version."""
    from memsynth.warehouse.catalog import list_datasets

    rows = list_datasets(warehouse_root(warehouse))
    print_rows(["dataset", "versions", "latest_version", "recipe", "created_at", "path"], rows, fmt)


@click.command()
@click.argument("dataset")
@click.option("--show", "show", type=int, metavar="N",
              help="print version N whole: its options, and the text of every template (with its "
                   "includes) and JSON schema it used, each with its hash")
@click.option("--verify", is_flag=True,
              help="check that the store still has every data file each version lists; exit 1 naming "
                   "the versions that lost one (a bucket emptied or restored from an older backup)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def versions(dataset: str, show: int | None, verify: bool, warehouse: str | None, fmt: str) -> None:
    """List the published versions of DATASET, or show one with --show N."""
    from memsynth.warehouse.catalog import list_versions

    if show is not None:
        _show_version(warehouse_root(warehouse), dataset, show, fmt)
        return
    if verify:
        _verify_versions(warehouse_root(warehouse), dataset, fmt)
        return
    rows = list_versions(warehouse_root(warehouse), dataset)
    if not rows:
        raise MemsynthError(f"dataset {dataset!r} has no published version yet")
    if fmt == "json":
        print_rows([], rows, "json")
        return
    brief = [{"version": r["version"], "snapshot_id": r["snapshot_id"], "created_at": r["created_at"],
              "model": r["model"], "rows": sum(r["row_counts"].values()),
              "llm_calls": r["llm_calls"], "cache_hits": r["llm_cache_hits"],
              "cost_usd": r["estimated_cost_usd"], "config_hash": r["config_hash"],
              "derived": _derived(r.get("derivation") or {})} for r in rows]
    print_rows(list(brief[0]) if brief else ["version"], brief, "table")


def _verify_versions(root: Path, dataset: str, fmt: str) -> None:
    """Every version, and the data files it lists that the store lacks; exit 1 if any."""
    from memsynth.warehouse.catalog import verify_versions

    checked = verify_versions(root, dataset)
    if fmt == "json":
        print_rows([], checked, "json")
    else:
        print_rows(["version", "files", "missing", "first_missing"],
                   [{"version": c["version"] or f"? (snapshot {c['snapshot']})", "files": c["files"], "missing": len(c["missing"]),
                     "first_missing": (c["missing"] or [""])[0]} for c in checked], "table")
    lost = [c["version"] or f"snapshot {c['snapshot']}" for c in checked if c["missing"]]
    if lost:
        raise MemsynthError(f"{len(lost)} version(s) of {dataset} list data files the store does not have: "
                            + ", ".join(map(str, lost)))


def _derived(d: dict[str, Any]) -> str:
    """What a version was derived from, in a few words."""
    parts = [f"v{d['parent_version']}"] if d.get("parent_version") else []
    if d.get("regenerated"):
        ids = d["regenerated"]
        parts.append(f"{len(ids)} regenerated from {d['from_stage']} ({', '.join(ids[:3])}"
                     + (", …" if len(ids) > 3 else "") + ")")
    if d.get("added_personas"):
        parts.append(f"{d['added_personas']} personas added")
    return " + ".join(parts)


def _show_version(root: Path, dataset: str, version: int, fmt: str) -> None:
    from memsynth.warehouse.catalog import stage_models, version_artifacts

    row, artifacts = version_artifacts(root, dataset, version)
    models = stage_models(root, dataset, row["version"])
    for a in artifacts:
        a["content"] = None if a["content"] is None else json.loads(a["content"])
    if fmt == "json":
        click.echo(json.dumps({"version": row["version"], "recipe": row["recipe"], "config": row["config"],
                               "config_hash": row["config_hash"], "stage_models": models, "artifacts": artifacts},
                              ensure_ascii=False, indent=2, default=str))
        return
    out.print(Text.assemble((f"{dataset} version {row['version']}", "bold"),
                            f" · recipe {row['recipe']} · model {row['model']} · config {row['config_hash']}"
                            f" · built {row['created_at']}"))
    if len({m for names in models.values() for m in names}) > 1:  # a model per stage: say which
        for stage, names in models.items():
            out.print(f"  {stage}: {', '.join(names)}")
    for a in artifacts:
        out.print(Text.assemble("\n", (f"── {a['kind']} {a['name']} · {a['hash']}", "bold cyan")))
        if a["content"] is None:
            out.print("(not stored: this version was published before memsynth kept its texts)")
        elif a["kind"] == "template":
            for name, text in a["content"].items():
                out.print(Text(f"── file {name}", style="dim"))
                out.print(text.rstrip("\n"))
        else:
            out.print(json.dumps(a["content"], ensure_ascii=False, indent=2))


@click.command()
@click.argument("dataset")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def runs(dataset: str, warehouse: str | None, fmt: str) -> None:
    """List the builds of DATASET that published nothing (failed or stopped), oldest first.

    Each kept what it staged: read it with `memsynth query --dataset DATASET --run ID SQL`.
    """
    from memsynth.warehouse.runs import list_runs

    kept = list_runs(warehouse_root(warehouse), dataset)
    if fmt == "json":
        print_rows([], kept, "json")
        return
    if not kept:
        out.print(f"no failed or stopped build of {dataset!r} is kept")
        return
    brief = [{"run": r["run"], "ended_at": r["ended_at"][:19], "requests": r["llm"]["requests"],
              "error": r["error"]} for r in kept]
    print_rows(list(brief[0]), brief, "table")


@click.command()
@click.argument("sql")
@click.option("--dataset", required=True, help="dataset to query")
@click.option("--version", "version", type=int, help="version to query (default: latest)")
@click.option("--run", "run", metavar="ID",
              help="query what a build that published nothing staged instead (memsynth runs DATASET)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=300, show_default=True,
              metavar="SECONDS", help="stop the query after this long")
@click.option("--memory-limit", default="2GB", show_default=True, metavar="SIZE",
              help="memory the query may use before it spills to disk (DuckDB sizes: 500MB, 4GB)")
@click.option("--spill-limit", default="4GB", show_default=True, metavar="SIZE",
              help="disk a large sort or join may spill to, in a folder removed afterwards")
def query(sql: str, dataset: str, version: int | None, run: str | None, warehouse: str | None, fmt: str,
          timeout_s: float, memory_limit: str, spill_limit: str) -> None:
    """Run a read-only SQL query over a dataset's tables at one version, or over a failed run's.

    The query runs in a connection that holds that version's data files and nothing else: no
    catalog, no other version or dataset, no file or network beyond those files, settings locked.
    """
    from memsynth.warehouse.sandbox import QueryLimits

    limits = QueryLimits(timeout_s, _size(memory_limit, "--memory-limit"), _size(spill_limit, "--spill-limit"))
    if run is not None:
        if version is not None:
            raise click.UsageError("--run and --version name different things: give one")
        from memsynth.warehouse.runs import query_run

        columns, rows = query_run(warehouse_root(warehouse), dataset, run, sql, limits)
    else:
        from memsynth.warehouse.catalog import run_query

        columns, rows, _ = run_query(warehouse_root(warehouse), dataset, sql, version, limits)
    print_rows(columns, rows, fmt)


def _size(value: str, flag: str) -> str:
    """A DuckDB size ("500MB", "4 GB", "2GiB"), checked here so a typo is a usage error."""
    import re

    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)\s*", value, re.I):
        raise click.UsageError(f"{flag} {value!r}: give a size such as 500MB or 4GB")
    return value.strip()


@click.group()
def personas() -> None:
    """Persona descriptions that builds draw from."""


@personas.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--warehouse", help=WAREHOUSE_HELP)
def personas_import(file: str, warehouse: str | None) -> None:
    """Add the personas in FILE (JSONL, one {"persona": "..."} per line) to the pool."""
    from memsynth.generation.personas import import_personas

    read, new, stored = import_personas(Path(file), warehouse_root(warehouse))
    click.echo(f"read {read} personas, {new} new" + (f", stored in {stored}" if new else ""))


@click.command("import")
@click.argument("recipe", metavar="RECIPE")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--dataset", required=True, help="dataset to publish the file's items into, as its next version")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary as text or JSON")
def import_release(recipe: str, file: str, dataset: str, warehouse: str | None, fmt: str) -> None:
    """Load a seed benchmark's released FILE as a version of DATASET, so it can be queried,
    compared with builds and released again (stratmem: StratMemBench.json; characters: a
    CharacterEval test file, or a {role: [scene, ...]} object of a role's dialogue scenes)."""
    from memsynth.generation.registry import importer

    summary = importer(recipe)(Path(file), warehouse_root(warehouse), dataset)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    click.echo(f"published {summary['dataset']} version {summary['version']}: "
               + ", ".join(f"{n:,} {t}" for t, n in summary["row_counts"].items() if n))
    print_rows(["figure", "value"], [{"figure": k, "value": v} for k, v in summary["statistics"].items()], "table")
