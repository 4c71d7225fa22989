"""The `memsynth` command line."""

from __future__ import annotations

import csv
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

import click
from rich.table import Table as RichTable
from rich.text import Text

from memsynth.cli_answers import check_answers
from memsynth.cli_console import err, out
from memsynth.errors import MemsynthError
from memsynth.limits import MAX_PERSONAS


def _error_line(message: object) -> Text:
    return Text.assemble(("error:", "bold red"), " ", str(message))

WAREHOUSE_HELP = ("warehouse root (default: $MEMSYNTH_WAREHOUSE, then the config's `warehouse`, "
                  "then ./data/warehouse)")


def _warehouse(flag: str | None) -> Path:
    from memsynth.config import resolve_warehouse

    return resolve_warehouse(flag)


def _print_rows(columns: list[str], rows: list[tuple[Any, ...]] | list[dict[str, Any]], fmt: str) -> None:
    records = [r if isinstance(r, dict) else dict(zip(columns, r)) for r in rows]
    if fmt == "json":
        click.echo(json.dumps(records, ensure_ascii=False, indent=2, default=str))
    elif fmt == "csv":
        writer = csv.writer(sys.stdout)
        writer.writerow(columns)
        for r in records:
            writer.writerow([r.get(c) for c in columns])
    else:
        cells = [["" if r.get(c) is None else str(r.get(c)) for c in columns] for r in records]
        # Each column as wide as its name, and its values up to 40 characters, plus borders.
        needed = 1 + sum(3 + max(len(c), *(min(len(row[i]), 40) for row in cells)) if cells else 3 + len(c)
                         for i, c in enumerate(columns))
        if needed > out.width and len(columns) > 2:
            _print_blocks(columns, cells)  # too wide for the terminal: one record per block
            return
        table = RichTable(show_lines=False)
        for c in columns:  # a name is never cut; long values wrap
            table.add_column(c, min_width=len(c), overflow="fold")
        for row in cells:
            table.add_row(*row)
        out.print(table)


def _print_blocks(columns: list[str], cells: list[list[str]]) -> None:
    """Rows as blocks of `name: value` lines, for tables wider than the terminal."""
    width = max(len(c) for c in columns)
    for n, row in enumerate(cells, start=1):
        out.print(Text(f"── row {n} of {len(cells)} ──", style="dim"))
        for c, value in zip(columns, row):
            out.print(Text.assemble((f"{c:>{width}}", "bold"), f"  {value}"))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="memsynth")
def cli() -> None:
    """memsynth: synthesize memory-augmented, persona-grounded dialogue benchmarks.

    Build a dataset from a YAML config, query its versions with SQL, and run the
    built-in OpenAI-compatible simulator for dry runs and tests.
    """


@cli.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
@click.option("--llm", type=click.Choice(["openai", "simulator"]), default="openai", show_default=True,
              help="`openai`: the endpoint from config / $OPENAI_BASE_URL with the key in "
                   "$OPENAI_API_KEY (or llm.api_key_env); `simulator`: the built-in fake model "
                   "on a loopback port, for dry runs (its text is not real data).")
@click.option("--personas", type=click.IntRange(min=1, max=MAX_PERSONAS),
              help=f"number of personas, at most {MAX_PERSONAS:,} (overrides personas.count)")
@click.option("--concurrency", type=click.IntRange(min=1), help="max LLM requests in flight (overrides llm.concurrency)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--no-cache", is_flag=True, help="do not read the LLM cache (answers are still recorded in it)")
@click.option("--simulator-latency-ms", type=click.FloatRange(min=0), default=0.0,
              help="with --llm simulator: delay of each simulated answer")
@click.option("--no-progress", is_flag=True, help="no live progress display")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary format")
@click.option("--regenerate", "regenerate_ids", metavar="ID[,ID…]",
              help="publish the last version again except these personas, whose items are asked "
                   "anew from --from-stage on (only those calls are sent)")
@click.option("--regenerate-file", type=click.Path(dir_okay=False, exists=True),
              help="as --regenerate, with persona ids one per line in this file")
@click.option("--where", "where_sql", metavar="SQL",
              help="as --regenerate, for the persona ids in the first column of this query over the "
                   "last version (e.g. personas whose dialogues failed BLRI)")
@click.option("--from-stage", metavar="STAGE",
              help="regenerate from this stage of the chain on (default: the first; `memsynth recipes` "
                   "lists them)")
@click.option("--add-personas", type=click.IntRange(min=1, max=MAX_PERSONAS),
              help="grow the dataset by N personas; the existing ones' rows stay as they are")
@click.option("--estimate", is_flag=True,
              help="call no endpoint and publish nothing: print the calls, tokens and cost (online and "
                   "batch) the build would take, from a dry run of a few personas on the built-in simulator")
@click.option("-v", "--verbose", is_flag=True, help="show Prefect's flow and task logs")
def build(config_path: str, llm: str, personas: int | None, concurrency: int | None,
          warehouse: str | None, no_cache: bool, simulator_latency_ms: float, no_progress: bool,
          fmt: str, regenerate_ids: str | None, regenerate_file: str | None, where_sql: str | None,
          from_stage: str | None, add_personas: int | None, estimate: bool, verbose: bool) -> None:
    """Build CONFIG and publish it as the dataset's next version."""
    if add_personas and personas:
        raise click.UsageError("give --personas or --add-personas, not both")
    ids = [i.strip() for i in (regenerate_ids or "").split(",") if i.strip()]
    if regenerate_file:
        ids += [line.strip() for line in Path(regenerate_file).read_text(encoding="utf-8").splitlines()
                if line.strip()]
    if from_stage and not (ids or where_sql):
        raise click.UsageError("--from-stage needs --regenerate, --regenerate-file or --where")
    if verbose:  # memsynth sets WARNING by default (memsynth/__init__.py)
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
        logging.getLogger("EventsWorker").setLevel(logging.NOTSET)
    from memsynth.config import load_config

    config = load_config(config_path)  # a bad config is one line before Prefect is imported
    if from_stage:  # as early: a mistyped stage should not wait for Prefect's server
        from flows.registry import recipe_class

        names = [s.name for s in recipe_class(config.recipe).all_stages()]
        if from_stage not in names:
            raise MemsynthError(f"--from-stage {from_stage!r}: not a stage of {config.recipe} ({', '.join(names)})")
    if not estimate:  # another recipe's dataset, unknown ids, a bad --where, no version yet: said before Prefect
        from flows.registry import recipe_class
        from memsynth.config import resolve_warehouse
        from memsynth.regenerate import RegenerationRequest, derive

        derive(resolve_warehouse(warehouse, config), config.dataset, recipe_class(config.recipe)(config.recipe_options),
               RegenerationRequest(persona_ids=ids, where=where_sql, from_stage=from_stage,
                                   add_personas=add_personas or 0))
    if estimate:
        from memsynth.estimate import estimate_build

        _print_estimate(estimate_build(config, personas=personas, warehouse=warehouse,
                                       progress=not no_progress and fmt == "text"), fmt)
        return
    from memsynth.prefect_api import start_early

    start_early()  # Prefect's server starts while the next import (about 2 s) runs
    from memsynth.build import BuildOptions, run_build
    from memsynth.regenerate import RegenerationRequest

    summary = run_build(config, BuildOptions(
        llm=llm, personas=personas, concurrency=concurrency, warehouse=warehouse,
        no_cache=no_cache, progress=not no_progress and fmt == "text",
        simulator_latency_ms=simulator_latency_ms, regeneration=RegenerationRequest(
            persona_ids=ids, where=where_sql, from_stage=from_stage, add_personas=add_personas or 0)))
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    _print_summary(summary)


@cli.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
@click.option("--cron", help='build on this cron schedule, e.g. "0 3 * * 1" (Mondays 03:00, the server\'s time zone)')
@click.option("--interval", type=click.FloatRange(min=1), help="build every this many seconds")
@click.option("--name", help="deployment name (default: the dataset's name)")
@click.option("--llm", type=click.Choice(["openai", "simulator"]), default="openai", show_default=True,
              help="as for `build`")
@click.option("--personas", type=click.IntRange(min=1, max=MAX_PERSONAS),
              help=f"number of personas, at most {MAX_PERSONAS:,} (overrides personas.count)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
def serve(config_path: str, cron: str | None, interval: float | None, name: str | None, llm: str,
          personas: int | None, warehouse: str | None) -> None:
    """Serve CONFIG's build as a Prefect deployment (on the server in $PREFECT_API_URL) and run
    it on schedule, or when triggered from the UI or API, until interrupted. One run at a time:
    a run due while one is under way waits for it."""
    if cron and interval:
        raise click.UsageError("give --cron or --interval, not both")
    from memsynth.schedule import serve as serve_config

    serve_config(config_path, cron=cron, interval=interval, name=name, llm=llm, personas=personas,
                 warehouse=warehouse)


def _print_estimate(e: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(e, indent=2))
        return
    table = RichTable("stage", "calls", "prompt tokens", "of them cached", "completion tokens")
    for s in [*e["stages"], {**e, "stage": "total"}]:
        table.add_row(s["stage"], f"{s['calls']:,}", f"{s['prompt_tokens']:,}", f"{s['cached_prompt_tokens']:,}",
                      f"{s['completion_tokens']:,}")
    out.print(f"estimate for {e['dataset']}: {e['personas']} personas, scaled from a dry run of "
              f"{e['dry_run_personas']} on the simulator ({e['dry_run_seconds']}s)")
    out.print(table)
    cost = e["cost_usd"]
    out.print(f"model {e['model']}: " + (f"${cost['online']:,.2f} online, ${cost['batch']:,.2f} in batch mode"
                                         if cost else "no price in llm.prices, so no cost"))
    if e["personas_to_write"]:
        out.print(f"plus writing {e['personas_to_write']} new personas first (not in these figures)")


def _print_summary(s: dict[str, Any]) -> None:
    llm = s["llm"]
    out.print(Text.assemble(("published", "bold green"), f" {s['dataset']} version {s['version']} "
                            f"(snapshot {s['snapshot_id']}) in {s['seconds']}s · {s['personas']} personas, "
                            f"{s['shards']} shards · model {s['model']}"))
    if s.get("personas_note"):
        out.print(f"note: {s['personas_note']}")
    rows = RichTable("table", "rows")
    for name, n in sorted(s["row_counts"].items()):
        rows.add_row(name, str(n))
    out.print(rows)
    stages = RichTable("stage", "items", "ok", "repaired", "flagged", "dropped")
    for name, c in s["stages"].items():
        stages.add_row(name, *(str(c.get(k, 0)) for k in ("items", "ok", "repaired", "flagged", "dropped")))
    out.print(stages)
    if s.get("checks"):
        checks = RichTable("check", "passed", "total", "pass rate")
        for name, c in s["checks"].items():
            rate = "" if c["pass_rate"] is None else f"{c['pass_rate']:.0%}"
            checks.add_row(name, str(c.get("passed", 0)), str(c.get("total", 0)), rate)
        out.print(checks)
    if s.get("statistics"):
        seed = s.get("seed_figures") or {}
        figures = RichTable("figure", "this build", "seed")
        for name, value in s["statistics"].items():
            figures.add_row(name, str(value), "" if seed.get(name) is None else str(seed[name]))
        out.print(figures)
    if s.get("persona_synthesis"):
        p = s["persona_synthesis"]
        out.print(f"personas written: {p['kept']} kept of {p['generated']} generated "
                  f"({p['exact_duplicates']} exact and {p['near_duplicates']} near duplicates "
                  f"dropped, {p['failed']} failed)")
    cost = f"${llm['estimated_cost_usd']:.4f}" + ("" if llm["priced"] else " (some models unpriced)")
    out.print(f"LLM: {llm['calls']} calls, {llm['cache_hits']} from cache, {llm['requests']} requests "
              f"sent ({llm['retries']} retries), {llm['prompt_tokens']:,} prompt + "
              f"{llm['completion_tokens']:,} completion tokens, estimated cost {cost}")
    out.print(f"failed items: {s['failed_items']} of {s['items']}")


@cli.command()
@click.argument("name", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def recipes(name: str | None, fmt: str) -> None:
    """List the recipes a config may name; with NAME, its stage chain, the seed's rules and
    what enforces each (a check, a judge criterion, or the prompt alone and why), its tables
    and options (defaults and what each means)."""
    from flows.registry import names, recipe_class

    described = [recipe_class(n).describe() for n in ([name] if name else names())]
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


@cli.group()
def datasets() -> None:
    """Datasets in the warehouse."""


@datasets.command("list")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def datasets_list(warehouse: str | None, fmt: str) -> None:
    """List datasets with their latest version."""
    from memsynth.warehouse.catalog import list_datasets

    rows = list_datasets(_warehouse(warehouse))
    _print_rows(["dataset", "versions", "latest_version", "recipe", "created_at", "path"], rows, fmt)


@cli.command()
@click.argument("dataset")
@click.option("--show", "show", type=int, metavar="N",
              help="print version N whole: its options, and the text of every template (with its "
                   "includes) and JSON schema it used, each with its hash")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def versions(dataset: str, show: int | None, warehouse: str | None, fmt: str) -> None:
    """List the published versions of DATASET, or show one with --show N."""
    from memsynth.warehouse.catalog import list_versions

    if show is not None:
        _show_version(_warehouse(warehouse), dataset, show, fmt)
        return
    rows = list_versions(_warehouse(warehouse), dataset)
    if not rows:
        raise MemsynthError(f"dataset {dataset!r} has no published version yet")
    if fmt == "json":
        _print_rows([], rows, "json")
        return
    brief = [{"version": r["version"], "snapshot_id": r["snapshot_id"], "created_at": r["created_at"],
              "model": r["model"], "rows": sum(r["row_counts"].values()),
              "llm_calls": r["llm_calls"], "cache_hits": r["llm_cache_hits"],
              "cost_usd": r["estimated_cost_usd"], "config_hash": r["config_hash"],
              "derived": _derived(r.get("derivation") or {})} for r in rows]
    _print_rows(list(brief[0]) if brief else ["version"], brief, "table")


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
    from memsynth.warehouse.catalog import version_artifacts

    row, artifacts = version_artifacts(root, dataset, version)
    for a in artifacts:
        a["content"] = None if a["content"] is None else json.loads(a["content"])
    if fmt == "json":
        click.echo(json.dumps({"version": row["version"], "recipe": row["recipe"], "config": row["config"],
                               "config_hash": row["config_hash"], "artifacts": artifacts},
                              ensure_ascii=False, indent=2, default=str))
        return
    out.print(Text.assemble((f"{dataset} version {row['version']}", "bold"),
                            f" · recipe {row['recipe']} · model {row['model']} · config {row['config_hash']}"
                            f" · built {row['created_at']}"))
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


@cli.command()
@click.argument("sql")
@click.option("--dataset", required=True, help="dataset to query")
@click.option("--version", "version", type=int, help="version to query (default: latest)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "csv", "json"]), default="table", show_default=True)
def query(sql: str, dataset: str, version: int | None, warehouse: str | None, fmt: str) -> None:
    """Run a read-only SQL query over a dataset's tables at one version."""
    from memsynth.warehouse.catalog import run_query

    columns, rows, _ = run_query(_warehouse(warehouse), dataset, sql, version)
    _print_rows(columns, rows, fmt)


@cli.command("review")
@click.option("--dataset", required=True, help="dataset whose items to judge")
@click.option("--version", "version", type=int, help="version to draw items from (default: latest)")
@click.option("--annotator", required=True,
              help="your name; your judgments go to your own file and never touch anyone else's")
@click.option("--task", help="the recipe's review task (enpmr: dialogues, pal: sessions, stratmem: pools; "
                             "default: the recipe's first)")
@click.option("--sample", "size", type=click.IntRange(min=1), default=20, show_default=True,
              help="items to judge, stratified (enpmr by need, pal by user, stratmem by instance type)")
@click.option("--seed", type=int, default=0, show_default=True,
              help="sampling seed: annotators with the same task, sample and seed see the same items")
@click.option("--port", type=click.IntRange(1, 65535), default=8501, show_default=True, help="port for the app")
@click.option("--address", default="127.0.0.1", show_default=True,
              help="address to serve on; 0.0.0.0 lets annotators on other machines in")
@click.option("--warehouse", help=WAREHOUSE_HELP)
def review_command(dataset: str, version: int | None, annotator: str, task: str | None, size: int, seed: int,
                   port: int, address: str, warehouse: str | None) -> None:
    """Judge a sample of a version's items in a local web app (Streamlit); every answer is
    saved as it is clicked. `memsynth agreement` compares the annotators afterwards."""
    import signal
    import subprocess

    from memsynth.children import tied
    from memsynth.review.annotations import check_annotator
    from memsynth.review.items import APP, APP_SETTINGS, ReviewSource

    check_annotator(annotator)
    root = _warehouse(warehouse)
    source = ReviewSource(root, dataset, version)
    try:  # refuse a bad dataset, version or task here, in one line, not in the browser
        items = source.sample(source.task(task), size, seed)
    finally:
        source.close()
    settings = {"warehouse": str(root.resolve()), "dataset": dataset, "version": source.version,
                "annotator": annotator, "task": task, "size": size, "seed": seed}
    out.print(f"{dataset} version {source.version}: {len(items)} items for {annotator}; "
              f"open http://{'localhost' if address == '127.0.0.1' else address}:{port} (Ctrl+C stops the app)")
    command = tied(["-m", "streamlit", "run", str(APP), "--server.headless", "true",
                    "--server.port", str(port), "--server.address", address, "--browser.gatherUsageStats", "false",
                    "--client.toolbarMode", "viewer"])
    app = subprocess.Popen(command, env={**os.environ, APP_SETTINGS: json.dumps(settings)})
    # SIGTERM stops the app too (kill -9 of memsynth kills it through `tied`).
    signal.signal(signal.SIGTERM, lambda *_: app.terminate())
    try:
        code = app.wait()
    except KeyboardInterrupt:
        app.terminate()
        app.wait()
        code = 0
    if code and code != -signal.SIGTERM:
        raise SystemExit(code)


@cli.command("agreement")
@click.option("--dataset", required=True, help="dataset whose judgments to compare")
@click.option("--version", "version", type=int,
              help="version whose LLM labels the annotators are compared with (default: latest)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def agreement_command(dataset: str, version: int | None, warehouse: str | None, fmt: str) -> None:
    """Agreement per criterion: value shares, Cohen's κ per pair of annotators, Fleiss' κ
    (three or more), and κ between the LLM's labels and each annotator."""
    from memsynth.review.agreement import dataset_agreement

    result = dataset_agreement(_warehouse(warehouse), dataset, version)
    if not result["criteria"]:  # an error in either format: the exit code says the same thing
        raise MemsynthError(f"no judgments recorded for {dataset} yet")
    if fmt == "json":
        click.echo(json.dumps(result, ensure_ascii=False, indent=2))
        return
    table = RichTable("criterion", "items", "annotators", "shares", "Cohen's κ", "Fleiss' κ", "LLM judge κ")
    for c in result["criteria"]:
        table.add_row(c["criterion"], str(c["items"]), ", ".join(c["annotators"]),
                      " ".join(f"{v} {share:.0%}" for v, share in c["shares"].items()),
                      " ".join(f"{pair} {_kappa(k)}" for pair, k in c["cohen"].items()) or "–",
                      _kappa(c["fleiss"]) + (f" ({c['fleiss_items']} items)" if c["fleiss"] is not None else ""),
                      " ".join(f"{name} {_kappa(j['kappa'])} ({j['items']})" for name, j in c["judge"].items()) or "–")
    out.print(f"{dataset} version {result['version']} ({result['recipe']}): {result['judgments']} judgments")
    out.print(table)


@cli.command("report")
@click.option("--dataset", required=True, help="dataset to report on")
@click.option("--version", "version", type=int, help="version to report on (default: latest)")
@click.option("--compare", type=int, help="another version of the dataset, shown beside it in every figure")
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="the HTML file to write (one self-contained page, plots embedded)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
def report_command(dataset: str, version: int | None, compare: int | None, out_path: str,
                   warehouse: str | None) -> None:
    """A quality report of a version as one HTML page: calls, repairs, drops, tokens, cost and
    time per stage, the recipe's own figures, the diversity of the generated text and the
    personas' attribute coverage."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from memsynth.review.report import report_steps, write_report

    root = _warehouse(warehouse)
    bar = Progress(TextColumn("[bold]report"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err, transient=True, disable=not err.is_terminal)
    with bar:
        task = bar.add_task("report", total=report_steps(root, dataset, version, compare))
        written = write_report(root, dataset, Path(out_path), version, compare, step=lambda: bar.advance(task))
    out.print(f"wrote {written}")


def _kappa(k: float | None) -> str:
    return "–" if k is None else f"{k:.3f}"


@cli.group()
def release() -> None:
    """Export a dataset version as a benchmark release; check and compare releases."""


@release.command("create")
@click.option("--dataset", required=True, help="dataset to release")
@click.option("--version", "version", type=int, help="version to release (default: latest)")
@click.option("--tag", required=True, help="release tag, vMAJOR.MINOR.PATCH (e.g. v1.0.0)")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False),
              help="folder to write <dataset>-<tag>/ into (created if missing)")
@click.option("--splits", help="splits by persona as name=proportion,… summing to 1 [default: test=1]")
@click.option("--split-seed", type=int, help="seed of the persona split (default: the build's seed)")
@click.option("--license", "license_id", default="cc-by-4.0", show_default=True,
              help="license id written to the dataset card")
@click.option("--shard-rows", type=click.IntRange(min=1), default=50_000, show_default=True,
              help="most rows per Parquet file")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary as text or JSON")
def release_create(dataset: str, version: int | None, tag: str, out_dir: str, splits: str | None,
                   split_seed: int | None, license_id: str, shard_rows: int, warehouse: str | None,
                   fmt: str) -> None:
    """Write a release: Parquet configs for `datasets`, JSONL twins, the seed's own file
    format, a dataset card with plots, manifest.json and SHA256SUMS."""
    from memsynth.release.create import create_release
    from memsynth.release.splits import parse_splits

    step = (lambda msg: err.print(Text(f"{msg}…", style="dim"))) if fmt == "text" else None
    summary = create_release(_warehouse(warehouse), dataset, version, tag, Path(out_dir), parse_splits(splits),
                             split_seed, license_id, shard_rows, on_step=step)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    out.print(f"released {dataset} version {summary['version']} as {summary['path']} ({summary['files']} files)")
    for view, by_split in summary["rows"].items():
        out.print(f"  {view}: " + ", ".join(f"{split} {n:,}" for split, n in by_split.items()))


@release.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
def release_verify(folder: str) -> None:
    """Check a release folder: checksums, row counts, Parquet schemas, the seed-format files
    and the card's configs. Prints one line per problem and exits 1 if there is any."""
    from memsynth.release.verify import verify_release

    problems = verify_release(Path(folder))
    for problem in problems:
        err.print(f"{folder}/{problem}")
    if problems:
        raise MemsynthError(f"{len(problems)} problem(s) in {folder}")
    out.print(f"{folder}: OK")


@release.command("diff")
@click.argument("folders", nargs=-1, type=click.Path(file_okay=False))
@click.option("--dataset", help="compare two versions of this dataset instead of two folders")
@click.option("--from", "from_version", type=int, help="the older version (with --dataset)")
@click.option("--to", "to_version", type=int, help="the newer version (with --dataset)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def release_diff(folders: tuple[str, ...], dataset: str | None, from_version: int | None,
                 to_version: int | None, warehouse: str | None, fmt: str) -> None:
    """Rows added, removed and changed per config, by id: `diff A B` for two release
    folders, or `diff --dataset D --from N --to M` for two versions in the warehouse."""
    from memsynth.release.diff import diff_tables, format_diff, release_tables, version_tables

    if dataset:
        if folders or from_version is None or to_version is None:
            raise click.UsageError("with --dataset give --from N and --to M, and no folders")
        root = _warehouse(warehouse)
        old, new = version_tables(root, dataset, from_version), version_tables(root, dataset, to_version)
    elif len(folders) == 2:
        old, new = release_tables(Path(folders[0])), release_tables(Path(folders[1]))
    else:
        raise click.UsageError("give two release folders, or --dataset D --from N --to M")
    diff = diff_tables(old, new)
    if fmt == "json":
        click.echo(json.dumps(diff, indent=2, ensure_ascii=False))
    else:
        out.print(format_diff(diff))


_CACHE_DIR_HELP = "cache folder (default: <warehouse>/_cache)"
_REWRITE_HELP = "summary as text or JSON"


@cli.group()
def cache() -> None:
    """The LLM response cache."""


@cache.command("stats")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--cache-dir", type=click.Path(file_okay=False), help=_CACHE_DIR_HELP)
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
def cache_stats_cmd(warehouse: str | None, cache_dir: str | None, fmt: str) -> None:
    """Entries, size and tokens in the LLM cache, per stage and model."""
    from memsynth.llm.cache import cache_stats

    stats = cache_stats(_cache_dir(warehouse, cache_dir))
    if fmt == "json":
        click.echo(json.dumps(stats, indent=2))
        return
    out.print(f"{stats['directory']}: {stats['entries']} entries in {stats['files']} files, "
              f"{stats['bytes'] / 1e6:.1f} MB")
    _print_rows(["stage", "entries", "distinct_keys", "prompt_tokens", "completion_tokens"],
                [{"stage": k, **v} for k, v in stats["by_stage"].items()], "table")


def _cache_dir(warehouse: str | None, cache_dir: str | None) -> Path:
    from memsynth.llm.cache import CACHE_DIR_NAME

    return Path(cache_dir) if cache_dir else _warehouse(warehouse) / CACHE_DIR_NAME


def _local_cache_dir(warehouse: str | None, cache_dir: str | None) -> Path:
    """The cache folder to rewrite: never an s3:// warehouse's, whose logs other machines
    share through the bucket and would bring back."""
    from memsynth.warehouse.objectstore import store_of

    if not cache_dir and store_of(_warehouse(warehouse)) is not None:
        raise MemsynthError("compact and gc rewrite a local cache; an s3:// warehouse's cache is "
                            "shared through its bucket, where logs are only ever added")
    return _cache_dir(warehouse, cache_dir)


def _rewrite_cache(run: Any, directory: Path, progress: bool, fmt: str) -> None:
    """Run a cache rewrite with a progress bar over the logs' bytes, then print its figures."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    total = sum(p.stat().st_size for p in directory.glob("*.jsonl")) if directory.is_dir() else 0
    with Progress("{task.description}", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                  disable=not progress or fmt == "json", transient=True) as bar:
        task = bar.add_task("rewriting the cache", total=total)
        summary = run(advance=lambda n: bar.advance(task, n))
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    out.print(f"{summary['directory']}: {summary['entries_before']:,} → {summary['entries_after']:,} entries, "
              f"{summary['files_before']} → {summary['files_after']} files, "
              f"{summary['bytes_before'] / 1e6:.1f} → {summary['bytes_after'] / 1e6:.1f} MB")


@cache.command("compact")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--cache-dir", type=click.Path(file_okay=False), help=_CACHE_DIR_HELP)
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help=_REWRITE_HELP)
def cache_compact_cmd(warehouse: str | None, cache_dir: str | None, no_progress: bool, fmt: str) -> None:
    """Rewrite the cache's logs into one, each key once (torn, damaged and duplicate lines
    dropped), and rebuild its index. Refused while a build or eval holds the cache."""
    from memsynth.llm.maintenance import compact

    directory = _local_cache_dir(warehouse, cache_dir)
    _rewrite_cache(lambda **kw: compact(directory, **kw), directory, not no_progress, fmt)


@cache.command("gc")
@click.option("--keep-versions", type=int, required=True,
              help="keep the entries the newest N versions of each dataset in the warehouse used; drop the rest")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--cache-dir", type=click.Path(file_okay=False), help=_CACHE_DIR_HELP)
@click.option("--no-progress", is_flag=True, help="no progress bar")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help=_REWRITE_HELP)
def cache_gc_cmd(keep_versions: int, warehouse: str | None, cache_dir: str | None, no_progress: bool,
                 fmt: str) -> None:
    """Drop the cached answers no kept version used, then compact. Answers only an
    unpublished build or a `memsynth eval` run used are dropped too: a re-run pays for them."""
    from memsynth.llm.maintenance import gc

    root = _warehouse(warehouse)
    directory = _local_cache_dir(warehouse, cache_dir)
    _rewrite_cache(lambda **kw: gc(directory, root, keep_versions, **kw), directory, not no_progress, fmt)


@cli.group()
def personas() -> None:
    """Persona descriptions that builds draw from."""


@personas.command("import")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--warehouse", help=WAREHOUSE_HELP)
def personas_import(file: str, warehouse: str | None) -> None:
    """Add the personas in FILE (JSONL, one {"persona": "..."} per line) to the pool."""
    from memsynth.personas import import_personas

    read, new, stored = import_personas(Path(file), _warehouse(warehouse))
    click.echo(f"read {read} personas, {new} new" + (f", stored in {stored}" if new else ""))


@cli.command("import")
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
    from flows.registry import importer

    summary = importer(recipe)(Path(file), _warehouse(warehouse), dataset)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    click.echo(f"published {summary['dataset']} version {summary['version']}: "
               + ", ".join(f"{n:,} {t}" for t, n in summary["row_counts"].items() if n))
    _print_rows(["figure", "value"], [{"figure": k, "value": v} for k, v in summary["statistics"].items()], "table")


def _on_a_version(verb: str, model_help: str) -> Any:
    """The options of a command that calls models over one published version."""
    def decorate(fn: Any) -> Any:
        for option in reversed([
                click.option("--dataset", required=True, help=f"dataset to {verb}"),
                click.option("--version", "version", type=int, help=f"version to {verb} (default: latest)"),
                click.option("--llm", type=click.Choice(["openai", "simulator"]), default="openai", show_default=True,
                             help="the version's configured endpoint, or memsynth's built-in simulator"),
                click.option("--model", help=model_help)]):
            fn = option(fn)
        return fn
    return decorate


@cli.command("eval")
@click.argument("task")
@_on_a_version("score", "model under test (default: the version's llm.model)")
@click.option("--judge-model", help="model that judges (default: the model under test)")
@click.option("--embedding-model", default="text-embedding-3-large", show_default=True,
              help="model of the /v1/embeddings endpoint (dense and Emotional RAG retrieval)")
@click.option("--systems", metavar="NAME[,NAME…]",
              help="retrievers or generation settings to score (default: all the task has)")
@click.option("--k", "ks", default="1,3,5,10", show_default=True, metavar="K[,K…]", help="cut-offs of ranking metrics")
@click.option("--first-k", type=click.IntRange(min=1), default=20, show_default=True,
              help="Emotional RAG's first pass of a sequential strategy (S-S, S-E)")
@click.option("--distance", "metric", type=click.Choice(["euclidean", "cosine"]), default="euclidean",
              show_default=True, help="semantic distance of dense and Emotional RAG retrieval")
@click.option("--limit", type=click.IntRange(min=1), help="score only the first N items")
@click.option("--out", type=click.Path(dir_okay=False), help="also write the markdown report here")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="scores as tables or JSON")
def eval_task(task: str, dataset: str, version: int | None, llm: str, model: str | None, judge_model: str | None,
              embedding_model: str, systems: str | None, ks: str, first_k: int, metric: str, limit: int | None,
              out: str | None, warehouse: str | None, fmt: str) -> None:
    """Score systems on a version with the seed's metrics: TASK is retrieval or response (enpmr),
    stratmem (stratmem), pal (pal). Scores go to the eval_runs and eval_scores tables
    (memsynth query sees them) and a markdown report."""
    from memsynth.evaluation.run import EvalOptions, evaluate, score_table

    try:
        cutoffs = tuple(int(k) for k in ks.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated whole numbers, got {ks!r}", param_hint="--k") from None
    options = EvalOptions(llm=llm, model=model, judge_model=judge_model, embedding_model=embedding_model,
                          ks=cutoffs, first_k=first_k, metric=metric, limit=limit,
                          systems=tuple(s.strip() for s in (systems or "").split(",") if s.strip()))
    run, report = evaluate(task, _warehouse(warehouse), dataset, version, options)
    if out:
        Path(out).write_text(report, encoding="utf-8")
    if fmt == "json":
        click.echo(json.dumps({"run_id": run.run_id, "task": run.task, "version": run.version, "items": run.items,
                               "scores": [s.__dict__ for s in run.scores]}, indent=2, default=str))
        return
    click.echo(f"{task} on {dataset} version {run.version}: {run.items} items, run {run.run_id}")
    header, rows = score_table(run.scores)
    # Metrics down, systems across: a dozen metrics fit a terminal's height better than its width.
    systems = [r[0] for r in rows]
    _print_rows(["metric", *systems], [{"metric": m, **{s: r[i + 1] for s, r in zip(systems, rows)}}
                                       for i, m in enumerate(header[1:])], "table")
    click.echo(f"report: {out or run.report_path}")


@cli.group()
def annotate() -> None:
    """Add annotations to a published version (publishing the next version)."""


@annotate.command("emotions")
@_on_a_version("annotate", "model to score with (default: the version's llm.model)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--no-progress", is_flag=True, help="no live progress display")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary as text or JSON")
def annotate_emotions(dataset: str, version: int | None, llm: str, model: str | None, warehouse: str | None,
                      no_progress: bool, fmt: str) -> None:
    """Score every memory and benchmark query of a version on Plutchik's eight emotions
    (1-10, Emotional RAG) and publish the next version: the same rows plus `emotions`."""
    from memsynth.emotions.annotate import annotate_version

    summary = annotate_version(_warehouse(warehouse), dataset, version, llm=llm, model=model,
                               progress=not no_progress)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    click.echo(f"published {dataset} version {summary['version']} (version {summary['parent_version']} + emotions): "
               f"{summary['by_kind']['memory']:,} memories and {summary['by_kind']['query']:,} queries scored"
               + (f", {summary['failed']} failed" if summary["failed"] else "")
               + f"; {summary['llm']['requests']:,} requests in {summary['seconds']} s")


@cli.group()
def simulator() -> None:
    """The built-in OpenAI-compatible simulator (for dry runs, tests and benchmarks)."""


@simulator.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="port to listen on (0: any free port)")
@click.option("--latency-ms", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="delay before each answer")
@click.option("--rate-429", type=click.FloatRange(0, 1), default=0.0, help="share of requests answered 429")
@click.option("--rate-500", type=click.FloatRange(0, 1), default=0.0, help="share answered 500")
@click.option("--rate-dropped", type=click.FloatRange(0, 1), default=0.0,
              help="share whose connection is closed without an answer")
@click.option("--rate-malformed", type=click.FloatRange(0, 1), default=0.0,
              help="share answered 200 with a body cut in half (not a readable completion)")
@click.option("--rate-truncated", type=click.FloatRange(0, 1), default=0.0,
              help="share whose content is cut in half, with finish_reason=length")
@click.option("--rate-slow", type=click.FloatRange(0, 1), default=0.0,
              help="share answered --slow-ms late")
@click.option("--slow-ms", type=click.FloatRange(min=0), default=2000.0, show_default=True,
              help="extra delay of a slow answer")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the fault draws")
@click.option("--upstream", help="act as a fault-injecting proxy in front of this OpenAI-compatible /v1 URL")
@click.option("--batch-delay-s", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="how long a batch takes from creation to completed")
@click.option("--batch-failed-rate", type=click.FloatRange(0, 1), default=0.0,
              help="share of batch lines written to the error file instead of answered")
@click.option("--profile", type=click.Choice(["openai", "llamacpp"]), default="openai", show_default=True,
              help="which server to behave as: `llamacpp` answers a json_schema response_format with "
                   "llama-cpp-python's HTTP 500")
def simulator_serve(host: str, port: int, latency_ms: float, rate_429: float, rate_500: float,
                    rate_dropped: float, rate_malformed: float, rate_truncated: float,
                    rate_slow: float, slow_ms: float, seed: int, upstream: str | None,
                    batch_delay_s: float, batch_failed_rate: float, profile: str) -> None:
    """Serve POST /v1/chat/completions, the Files and Batch API (/v1/files, /v1/batches),
    GET /v1/models and GET /stats until interrupted."""
    import asyncio

    from memsynth.simulator.batches import BatchFaults
    from memsynth.simulator.server import Faults, Simulator, serve_forever

    if rate_429 + rate_500 + rate_dropped > 1 or rate_malformed + rate_truncated + rate_slow > 1:
        raise MemsynthError("--rate-429, --rate-500 and --rate-dropped must add up to at most 1, "
                            "and so must --rate-malformed, --rate-truncated and --rate-slow")
    sim = Simulator(latency_ms=latency_ms, upstream=upstream, faults=Faults(
        rate_429=rate_429, rate_500=rate_500, rate_dropped=rate_dropped,
        rate_malformed=rate_malformed, rate_truncated=rate_truncated, rate_slow=rate_slow,
        slow_ms=slow_ms, seed=seed),
        batch_faults=BatchFaults(delay_s=batch_delay_s, failed_line_rate=batch_failed_rate, seed=seed),
        profile=profile)
    try:
        asyncio.run(serve_forever(sim, host, port))
    except OSError as exc:
        raise MemsynthError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc


cli.add_command(check_answers)


def main() -> None:
    """Entry point: one error line and a non-zero exit for anything the user can fix."""
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        err.print("aborted")
        sys.exit(130)
    except click.UsageError as exc:  # a mistyped command line: one line, and exit 2 as Unix tools do
        where = exc.ctx.command_path if exc.ctx else "memsynth"
        err.print(_error_line(f"{exc.format_message()} (see `{where} --help`)"))
        sys.exit(2)
    except click.ClickException as exc:
        err.print(_error_line(exc.format_message()))
        sys.exit(exc.exit_code)
    except MemsynthError as exc:
        err.print(_error_line(exc))
        sys.exit(getattr(exc, "exit_code", 1))  # 130/143 for a build stopped by a signal
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except OSError as exc:  # a file where a folder should be, no permission, a full disk
        err.print(_error_line(_os_error(exc)))
        sys.exit(1)
    except BaseException as exc:  # a memsynth error wrapped by Prefect, for instance
        cause = _memsynth_cause(exc)
        if cause is None:
            raise
        err.print(_error_line(cause))
        sys.exit(1)


def _os_error(exc: OSError) -> str:
    """'<path>: <what the system said>', without the errno."""
    where = " → ".join(str(f) for f in (exc.filename, exc.filename2) if f is not None)
    return f"{where}: {exc.strerror or exc}" if where else str(exc.strerror or exc)


def _memsynth_cause(exc: BaseException) -> MemsynthError | None:
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, MemsynthError):
            return exc
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
        seen += 1
    return None


if __name__ == "__main__":
    main()
