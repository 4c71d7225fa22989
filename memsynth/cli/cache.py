"""`memsynth cache`: stats, compact and gc of the LLM response cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from memsynth.cli.output import WAREHOUSE_HELP, out, print_rows, warehouse_root
from memsynth.core.errors import MemsynthError

_CACHE_DIR_HELP = "cache folder (default: <warehouse>/_cache)"
_REWRITE_HELP = "summary as text or JSON"


@click.group()
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
    print_rows(["stage", "entries", "distinct_keys", "prompt_tokens", "completion_tokens"],
                [{"stage": k, **v} for k, v in stats["by_stage"].items()], "table")


def _cache_dir(warehouse: str | None, cache_dir: str | None) -> Path:
    from memsynth.llm.cache import CACHE_DIR_NAME

    return Path(cache_dir) if cache_dir else warehouse_root(warehouse) / CACHE_DIR_NAME


def _local_cache_dir(warehouse: str | None, cache_dir: str | None) -> Path:
    """The cache folder to rewrite: never an s3:// warehouse's, whose logs other machines
    share through the bucket and would bring back."""
    from memsynth.warehouse.location import location_of

    if not cache_dir and location_of(warehouse_root(warehouse)).shares_cache:
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

    root = warehouse_root(warehouse)
    directory = _local_cache_dir(warehouse, cache_dir)
    _rewrite_cache(lambda **kw: gc(directory, root, keep_versions, **kw), directory, not no_progress, fmt)
