"""`memsynth catalog`: where a warehouse keeps its DuckLake catalogs."""

from __future__ import annotations

import json

import click

from memsynth.cli.output import WAREHOUSE_HELP, out, print_rows, warehouse_root


@click.group()
def catalog() -> None:
    """The warehouse's catalogs: a file per dataset, or one PostgreSQL database."""


@catalog.command("move")
@click.option("--warehouse", help=WAREHOUSE_HELP)
@click.option("--to", "url", required=True, metavar="postgres://USER@HOST:PORT/DB",
              help="the database to keep every dataset's catalog in, a schema each (the password "
                   "comes from PGPASSWORD or a service file)")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="what was moved, as a table or JSON")
def move(warehouse: str | None, url: str, fmt: str) -> None:
    """Copy every dataset's catalog file, its whole history, into a PostgreSQL database and
    use that from now on. The data files stay where they are; the old catalog files stay
    beside, renamed `catalog.ducklake.moved`."""
    from memsynth.warehouse.catalog_move import move_catalogs

    root = warehouse_root(warehouse)
    moved = move_catalogs(root, url)
    if fmt == "json":
        click.echo(json.dumps(moved, indent=2))
        return
    print_rows(["dataset", "snapshots"], moved, "table")
    out.print(f"{len(moved)} catalogs moved to {url}; every command on {root} reads them there")
