"""The quality commands: review, agreement, report, eval, annotate emotions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import click
from rich.table import Table as RichTable

from memsynth.cli.endpoint_options import endpoint_options
from memsynth.cli.output import WAREHOUSE_HELP, err, out, print_rows, warehouse_root
from memsynth.core.errors import MemsynthError
from memsynth.generation.endpoints import EndpointChoice


@click.command("review")
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
@click.option("--allow-host", "allow_hosts", multiple=True, metavar="NAME",
              help="also answer browsers that reach the app by this name (a proxy's, a DNS alias); any "
                   "other Host is refused, against DNS rebinding")
@click.option("--warehouse", help=WAREHOUSE_HELP)
def review_command(dataset: str, version: int | None, annotator: str, task: str | None, size: int, seed: int,
                   port: int, address: str, allow_hosts: tuple[str, ...], warehouse: str | None) -> None:
    """Judge a sample of a version's items in a local web app (Streamlit); every answer is
    saved as it is clicked. `memsynth agreement` compares the annotators afterwards."""
    import signal
    import subprocess

    from memsynth.build.children import tied
    from memsynth.quality.review.items import APP, APP_SETTINGS, ReviewSource
    from memsynth.warehouse.annotations import check_annotator

    check_annotator(annotator)
    root = warehouse_root(warehouse)
    source = ReviewSource(root, dataset, version)
    try:  # refuse a bad dataset, version or task here, in one line, not in the browser
        items = source.sample(source.task(task), size, seed)
    finally:
        source.close()
    settings = {"warehouse": str(root.resolve()), "dataset": dataset, "version": source.version,
                "annotator": annotator, "task": task, "size": size, "seed": seed}
    out.print(f"{dataset} version {source.version}: {len(items)} items for {annotator}; "
              f"open http://{'localhost' if address == '127.0.0.1' else address}:{port} (Ctrl+C stops the app)")
    from memsynth.quality.review.hosts import HOSTS, allowed_hosts

    # serve.py: the app behind a check of the Host header (memsynth/quality/review/serve.py)
    command = tied(["-m", "streamlit", "run", str(APP.with_name("serve.py")), "--server.headless", "true",
                    "--server.port", str(port), "--server.address", address, "--browser.gatherUsageStats", "false",
                    "--client.toolbarMode", "viewer"])
    app = subprocess.Popen(command, env={**os.environ, APP_SETTINGS: json.dumps(settings),
                                         HOSTS: json.dumps(allowed_hosts(address, allow_hosts))})
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


@click.command("agreement")
@click.option("--dataset", required=True, help="dataset whose judgments to compare")
@click.option("--version", "version", type=int,
              help="version whose LLM labels the annotators are compared with (default: latest)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
def agreement_command(dataset: str, version: int | None, warehouse: str | None, fmt: str) -> None:
    """Agreement per criterion: value shares, Cohen's κ per pair of annotators, Fleiss' κ
    (three or more), and κ between the LLM's labels and each annotator."""
    from memsynth.quality.review.agreement import dataset_agreement

    result = dataset_agreement(warehouse_root(warehouse), dataset, version)
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


@click.command("report")
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

    from memsynth.quality.review.report import report_steps, write_report

    root = warehouse_root(warehouse)
    bar = Progress(TextColumn("[bold]report"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                   console=err, transient=True, disable=not err.is_terminal)
    with bar:
        task = bar.add_task("report", total=report_steps(root, dataset, version, compare))
        written = write_report(root, dataset, Path(out_path), version, compare, step=lambda: bar.advance(task))
    out.print(f"wrote {written}")


def _kappa(k: float | None) -> str:
    return "–" if k is None else f"{k:.3f}"


def _on_a_version(verb: str, model_help: str) -> Any:
    """The options of a command that calls models over one published version: the version,
    and the endpoint (by default the one the version was built with)."""
    def decorate(fn: Any) -> Any:
        fn = endpoint_options(default_from="the version's recorded llm block", model_help=model_help)(fn)
        for option in reversed([
                click.option("--dataset", required=True, help=f"dataset to {verb}"),
                click.option("--version", "version", type=int, help=f"version to {verb} (default: latest)")]):
            fn = option(fn)
        return fn
    return decorate


@click.command("eval")
@click.argument("task")
@_on_a_version("score", "model under test (default: the version's llm.model)")
@endpoint_options(prefix="judge-", dest="judge", simulator=False, default_from="the model under test's settings",
                  model_help="model that judges (default: the model under test); the --judge-* flags make the "
                             "judge an endpoint of its own, each defaulting to the model under test's")
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
@click.option("--audit-rate", type=click.FloatRange(0, 1), metavar="SHARE",
              help="share of the answers (the model under test's and the judge's) that an audit, by the judge "
                   "endpoint, reads against their prompts' rules (default: the version's quality.audit_rate; 0: "
                   "none); the share flagged per rule is reported under `audit`; an audit never re-asks")
@click.option("--out", type=click.Path(dir_okay=False), help="also write the markdown report here")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="scores as tables or JSON")
def eval_task(task: str, dataset: str, version: int | None, endpoint: EndpointChoice, judge: EndpointChoice,
              embedding_model: str, systems: str | None, ks: str, first_k: int, metric: str, limit: int | None,
              audit_rate: float | None, out: str | None, warehouse: str | None, fmt: str) -> None:
    """Score systems on a version with the seed's metrics: TASK is retrieval or response (enpmr),
    stratmem (stratmem), pal (pal). Scores go to the eval_runs and eval_scores tables
    (memsynth query sees them) and a markdown report."""
    from memsynth.quality.evaluation.run import EvalOptions, evaluate, score_table

    try:
        cutoffs = tuple(int(k) for k in ks.split(","))
    except ValueError:
        raise click.BadParameter(f"expected comma-separated whole numbers, got {ks!r}", param_hint="--k") from None
    options = EvalOptions(endpoint=endpoint, judge=judge, embedding_model=embedding_model,
                          ks=cutoffs, first_k=first_k, metric=metric, limit=limit, audit_rate=audit_rate,
                          systems=tuple(s.strip() for s in (systems or "").split(",") if s.strip()))
    run, report = evaluate(task, warehouse_root(warehouse), dataset, version, options)
    if out:
        Path(out).write_text(report, encoding="utf-8")
    if fmt == "json":
        click.echo(json.dumps({"run_id": run.run_id, "task": run.task, "version": run.version, "items": run.items,
                               "model": run.model, "judge_model": run.judge_model, "settings": run.settings,
                               "llm": run.llm, "scores": [s.__dict__ for s in run.scores]}, indent=2, default=str))
        return
    click.echo(f"{task} on {dataset} version {run.version}: {run.items} items, run {run.run_id}")
    header, rows = score_table(run.scores)
    # Metrics down, systems across: a dozen metrics fit a terminal's height better than its width.
    systems = [r[0] for r in rows]
    print_rows(["metric", *systems], [{"metric": m, **{s: r[i + 1] for s, r in zip(systems, rows)}}
                                       for i, m in enumerate(header[1:])], "table")
    audits = [a for a in run.scores if a.scope == "audit"]
    if audits:  # the judge's own error rate, as its audit judge read a sample
        click.echo("judge audited: " + "; ".join(f"{a.system.removeprefix('audit:')} {a.metric} "
                                                 f"{round((a.value or 0) * a.n)}/{a.n} flagged" for a in audits))
    click.echo(f"report: {out or run.report_path}")


@click.group()
def annotate() -> None:
    """Add annotations to a published version (publishing the next version)."""


@annotate.command("emotions")
@_on_a_version("annotate", "model to score with (default: the version's llm.model)")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--no-progress", is_flag=True, help="no live progress display")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary as text or JSON")
def annotate_emotions(dataset: str, version: int | None, endpoint: EndpointChoice, warehouse: str | None,
                      no_progress: bool, fmt: str) -> None:
    """Score every memory and benchmark query of a version on Plutchik's eight emotions
    (1-10, Emotional RAG) and publish the next version: the same rows plus `emotions`."""
    from memsynth.quality.annotate import annotate_version

    summary = annotate_version(warehouse_root(warehouse), dataset, version, endpoint=endpoint,
                               progress=not no_progress)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2, default=str))
        return
    click.echo(f"published {dataset} version {summary['version']} (version {summary['parent_version']} + emotions): "
               f"{summary['by_kind']['memory']:,} memories and {summary['by_kind']['query']:,} queries scored"
               + (f", {summary['failed']} failed" if summary["failed"] else "")
               + f"; {summary['llm']['requests']:,} requests in {summary['seconds']} s")
