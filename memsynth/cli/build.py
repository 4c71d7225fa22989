"""`memsynth build` and `memsynth serve`: a dataset's next version, now or on a schedule."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import click
from rich.table import Table as RichTable
from rich.text import Text

from memsynth.cli.endpoint_options import endpoint_options
from memsynth.cli.output import WAREHOUSE_HELP, out
from memsynth.core.errors import MemsynthError
from memsynth.core.limits import MAX_PERSONAS
from memsynth.generation.endpoints import EndpointChoice


@click.command()
@click.argument("config_path", metavar="CONFIG", type=click.Path(dir_okay=False))
@endpoint_options(model_help="the model, as the endpoint names it (overrides llm.model and $MEMSYNTH_MODEL; "
                             "--estimate prices the build at it)")
@click.option("--personas", type=click.IntRange(min=1, max=MAX_PERSONAS),
              help=f"number of personas, at most {MAX_PERSONAS:,} (overrides personas.count)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--catalog", metavar="postgres://USER@HOST:PORT/DB",
              help="keep the warehouse's catalogs in this PostgreSQL database, so many machines can "
                   "publish at once (default: $MEMSYNTH_CATALOG, the config's `catalog`, else a file per "
                   "dataset); the password comes from PGPASSWORD or a service file")
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
@click.option("--publish-unchanged", is_flag=True,
              help="publish a new version even when nothing changed: by default a build whose config, "
                   "prompts, schemas, code, model and every table's rows equal the latest version's "
                   "publishes nothing and says which version is current")
@click.option("-v", "--verbose", is_flag=True, help="show Prefect's flow and task logs")
def build(config_path: str, endpoint: EndpointChoice, personas: int | None,
          warehouse: str | None, catalog: str | None, no_cache: bool, simulator_latency_ms: float, no_progress: bool,
          fmt: str, regenerate_ids: str | None, regenerate_file: str | None, where_sql: str | None,
          from_stage: str | None, add_personas: int | None, estimate: bool, publish_unchanged: bool,
          verbose: bool) -> None:
    """Build CONFIG and publish it as the dataset's next version; when nothing changed (same
    config, prompts, schemas, code, model and rows as the latest version), publish nothing."""
    if add_personas and personas:
        raise click.UsageError("give --personas or --add-personas, not both")
    from memsynth.build.interrupt import raise_on_sigterm

    raise_on_sigterm()  # one line and 143 from here on, as the build itself answers SIGTERM
    ids = [i.strip() for i in (regenerate_ids or "").split(",") if i.strip()]
    if regenerate_file:
        ids += [line.strip() for line in Path(regenerate_file).read_text(encoding="utf-8").splitlines()
                if line.strip()]
    if from_stage and not (ids or where_sql):
        raise click.UsageError("--from-stage needs --regenerate, --regenerate-file or --where")
    if verbose:  # memsynth sets WARNING by default (memsynth/__init__.py)
        os.environ["PREFECT_LOGGING_LEVEL"] = "INFO"
        logging.getLogger("EventsWorker").setLevel(logging.NOTSET)
        os.environ["PREFECT_INTERNAL_LOGGING_LEVEL"] = "ERROR"  # Prefect's own default
    from memsynth.generation.endpoints import choose
    from memsynth.generation.registry import load_config

    # A bad config, or a bad endpoint setting, is one line before Prefect is imported.
    config = choose(load_config(config_path), endpoint)
    if from_stage:  # as early: a mistyped stage should not wait for Prefect's server
        from memsynth.generation.registry import recipe_class

        names = [s.name for s in recipe_class(config.recipe).all_stages()]
        if from_stage not in names:
            raise MemsynthError(f"--from-stage {from_stage!r}: not a stage of {config.recipe} ({', '.join(names)})")
    if not estimate:  # another recipe's dataset, unknown ids, a bad --where, no version yet: said before Prefect
        from memsynth.build.regenerate import RegenerationRequest, derive
        from memsynth.generation.registry import recipe_class
        from memsynth.warehouse.location import resolve_warehouse

        derive(resolve_warehouse(warehouse, config, catalog=catalog), config.dataset, recipe_class(config.recipe)(config.recipe_options),
               RegenerationRequest(persona_ids=ids, where=where_sql, from_stage=from_stage,
                                   add_personas=add_personas or 0))
    if estimate:
        from memsynth.build.estimate import estimate_build

        _print_estimate(estimate_build(config, personas=personas, warehouse=warehouse, model=endpoint.model,
                                       progress=not no_progress and fmt == "text"), fmt)
        return
    from memsynth.build.prefect_api import start_early

    start_early()  # Prefect's server starts while the build's first requests go
    from memsynth.build.regenerate import RegenerationRequest
    from memsynth.build.run import BuildOptions, run_build

    summary = run_build(config, BuildOptions(
        llm=endpoint.llm, personas=personas, model=endpoint.model, warehouse=warehouse, catalog=catalog,
        no_cache=no_cache, progress=not no_progress and fmt == "text",
        simulator_latency_ms=simulator_latency_ms, regeneration=RegenerationRequest(
            persona_ids=ids, where=where_sql, from_stage=from_stage, add_personas=add_personas or 0),
        publish_unchanged=publish_unchanged))
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    _print_summary(summary)


@click.command()
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
    from memsynth.build.schedule import serve as serve_config

    serve_config(config_path, cron=cron, interval=interval, name=name, llm=llm, personas=personas,
                 warehouse=warehouse)


def _print_estimate(e: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(e, indent=2))
        return
    several = len(e["models"]) > 1
    table = RichTable("stage", *(["model"] if several else []), "calls", "prompt tokens", "of them cached",
                      "completion tokens")
    for s in [*e["stages"], {**e, "stage": "total", "model": ""}]:
        table.add_row(s["stage"], *([s["model"]] if several else []), f"{s['calls']:,}", f"{s['prompt_tokens']:,}",
                      f"{s['cached_prompt_tokens']:,}", f"{s['completion_tokens']:,}")
    out.print(f"estimate for {e['dataset']}: {e['personas']} personas, scaled from a dry run of "
              f"{e['dry_run_personas']} on the simulator ({e['dry_run_seconds']}s)")
    out.print(table)
    cost = e["cost_usd"]
    out.print(f"model {', '.join(e['models']) if several else e['model']}: " + (f"${cost['online']:,.2f} online, ${cost['batch']:,.2f} in batch mode"
                                         if cost else "a model without a price in llm.prices, so no cost"))
    if e["personas_to_write"]:
        out.print(f"plus writing {e['personas_to_write']} new personas first (not in these figures)")


def _print_summary(s: dict[str, Any]) -> None:
    llm = s["llm"]
    if s.get("unchanged"):
        out.print(f"nothing changed: {s['dataset']} version {s['version']} is current, nothing was published "
                  f"(--publish-unchanged publishes it again) · {s['seconds']}s · model {s['model']}")
    else:
        _print_published(s)
    _print_details(s, llm)


def _print_published(s: dict[str, Any]) -> None:
    out.print(Text.assemble(("published", "bold green"), f" {s['dataset']} version {s['version']} "
                            f"(snapshot {s['snapshot_id']}) in {s['seconds']}s · {s['personas']} personas, "
                            f"{s['shards']} shards · model {s['model']}"))


def _print_details(s: dict[str, Any], llm: dict[str, Any]) -> None:
    if s.get("personas_note"):
        out.print(f"note: {s['personas_note']}")
    if s.get("carried"):
        out.print(f"note: {s['carried']}")
    rows = RichTable("table", "rows")
    for name, n in sorted(s["row_counts"].items()):
        rows.add_row(name, str(n))
    out.print(rows)
    stages = RichTable("stage", "items", "ok", "repaired", "flagged", "dropped", "runaways", "budget",
                       "largest answer")
    for name, c in s["stages"].items():
        stages.add_row(name, *(str(c.get(k, 0)) for k in ("items", "ok", "repaired", "flagged", "dropped", "runaways")),
                       "limit" if c.get("budget") is None else str(c["budget"]), str(c.get("largest_answer", 0)))
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
    lost = (f" ({s['lost_items']} never asked by the {s['lost_personas']} personas that lost their chain)"
            if s.get("lost_items") else "")
    out.print(f"failed items: {s['failed_items']} of {s['items']}{lost}")
