"""`memsynth release`: create, verify and diff benchmark releases."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.text import Text

from memsynth.cli.output import WAREHOUSE_HELP, err, out, warehouse_root
from memsynth.core.errors import MemsynthError
from memsynth.core.inputs import printable


@click.group()
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
@click.option("--accept-violation-rate", is_flag=True,
              help="release even when a gold-label rule's audited violation rate may be over "
                   "quality.max_violation_rate (its 95 % upper bound is); the card then says so")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="summary as text or JSON")
def release_create(dataset: str, version: int | None, tag: str, out_dir: str, splits: str | None,
                   split_seed: int | None, license_id: str, shard_rows: int, accept_violation_rate: bool,
                   warehouse: str | None, fmt: str) -> None:
    """Write a release: Parquet configs for `datasets`, JSONL twins, the seed's own file
    format, a dataset card with plots, manifest.json and SHA256SUMS."""
    from memsynth.release.create import create_release
    from memsynth.release.splits import parse_splits

    step = (lambda msg: err.print(Text(f"{msg}…", style="dim"))) if fmt == "text" else None
    summary = create_release(warehouse_root(warehouse), dataset, version, tag, Path(out_dir), parse_splits(splits),
                             split_seed, license_id, shard_rows, on_step=step,
                             accept_violation_rate=accept_violation_rate)
    if fmt == "json":
        click.echo(json.dumps(summary, indent=2))
        return
    out.print(f"released {dataset} version {summary['version']} as {summary['path']} ({summary['files']} files)")
    for view, by_split in summary["rows"].items():
        out.print(f"  {view}: " + ", ".join(f"{split} {n:,}" for split, n in by_split.items()))
    for r in summary["error_rates"]["rules"]:
        out.print(f"  {r['rule']} ({r['stage']}): {r['violations']}/{r['n']} audited items flagged, "
                  f"95 % interval {r['low']:.1%}–{r['high']:.1%}")


@release.command("verify")
@click.argument("folder", type=click.Path(file_okay=False))
def release_verify(folder: str) -> None:
    """Check a release folder: checksums, row counts, Parquet schemas, the seed-format files
    and the card's configs. Prints one line per problem and exits 1 if there is any."""
    from memsynth.release.verify import verify_release

    problems = verify_release(Path(folder))
    for problem in problems:  # names in a release are escaped: none can forge a line or drive the terminal
        err.print(printable(f"{folder}/{problem}"))
    if problems:
        raise MemsynthError(f"{len(problems)} problem(s) in {folder}")
    out.print(printable(f"{folder}: OK"))


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
        root = warehouse_root(warehouse)
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

