"""What every command shares: the consoles, the one-line error, tables that fit the terminal."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from memsynth.core.inputs import printable
from memsynth.core.secrets import mask

# No markup: names, SQL and messages are printed as they are ("[transport]", "^{0,63}$", a
# dataset called "[red]x"); styled words are `Text` pieces.
out = Console(highlight=False, soft_wrap=True, markup=False)
err = Console(stderr=True, highlight=False, soft_wrap=True, markup=False)


def error_line(message: object) -> Text:
    # One line that only shows, whatever names the message quotes (a newline, an escape sequence),
    # and no key an endpoint echoed into it.
    return Text.assemble(("error:", "bold red"), " ", printable(mask(str(message))))


WAREHOUSE_HELP = ("warehouse root (default: $MEMSYNTH_WAREHOUSE, then the config's `warehouse`, "
                  "then ./data/warehouse)")


def warehouse_root(flag: str | None) -> Path:
    from memsynth.warehouse.location import resolve_warehouse

    return resolve_warehouse(flag)


def print_rows(columns: list[str], rows: list[tuple[Any, ...]] | list[dict[str, Any]], fmt: str) -> None:
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
            print_blocks(columns, cells)  # too wide for the terminal: one record per block
            return
        table = RichTable(show_lines=False)
        for c in columns:  # a name is never cut; long values wrap
            table.add_column(c, min_width=len(c), overflow="fold")
        for row in cells:
            table.add_row(*row)
        out.print(table)


def print_blocks(columns: list[str], cells: list[list[str]]) -> None:
    """Rows as blocks of `name: value` lines, for tables wider than the terminal."""
    width = max(len(c) for c in columns)
    for n, row in enumerate(cells, start=1):
        out.print(Text(f"── row {n} of {len(cells)} ──", style="dim"))
        for c, value in zip(columns, row):
            out.print(Text.assemble((f"{c:>{width}}", "bold"), f"  {value}"))
