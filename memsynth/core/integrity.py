"""Referential integrity: what a dropped item takes along, and the check before publishing.

Tables declare their references (`Table.refs`). A shard holds whole personas, and no
reference crosses personas, so each shard is made whole on its own before it is staged;
publish then checks every reference over the whole version and refuses a dangling one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from memsynth.core.records import StageFailureRow
from memsynth.core.tables import Ref, Table

STAGE = "integrity"

# (column, missing value, referenced table.key) of a row's first broken reference
Broken = tuple[str, Any, str]


def cascade(tables: Sequence[Table], rows: dict[str, list[BaseModel]]) -> list[StageFailureRow]:
    """Remove, in place, every row whose reference is broken, until none is; say why each left.

    A memory whose session was dropped leaves the bank, and then the dialogues that used it
    as target or negative leave too, with their checks and benchmark rows.
    """
    present: dict[tuple[str, str], set[Any]] = {}
    names = {t.name for t in tables}  # a reference beyond these is publish's to report

    def keys(table: str, key: str) -> set[Any]:
        if (table, key) not in present:
            present[table, key] = {getattr(r, key) for r in rows.get(table, [])}
        return present[table, key]

    failures: list[StageFailureRow] = []
    changed = True
    while changed:
        changed = False
        for table in tables:
            refs = [r for r in table.refs if r.table in names]
            if not refs or not rows.get(table.name):
                continue
            kept, gone = [], []
            for row in rows[table.name]:
                broken = _broken(row, refs, keys)
                (gone if broken else kept).append((row, broken))
            if gone:
                rows[table.name] = [row for row, _ in kept]
                present = {k: v for k, v in present.items() if k[0] != table.name}
                failures += _records(table, gone)
                changed = True
    return failures


def _broken(row: BaseModel, refs: Sequence[Ref], keys: Callable[[str, str], set[Any]]) -> Broken | None:
    for ref in refs:
        if ref.when is not None and getattr(row, ref.when[0]) != ref.when[1]:
            continue
        value = getattr(row, ref.column)
        for v in value if isinstance(value, list) else [value]:
            if v is not None and v not in keys(ref.table, ref.key):
                return ref.column, v, f"{ref.table}.{ref.key}"
    return None


def _records(table: Table, gone: list[tuple[BaseModel, Broken | None]]) -> list[StageFailureRow]:
    """One record per keyed row; rows without a key (turns, ranks) grouped by what they lost."""
    grouped: dict[tuple[str, str | None], list[str]] = {}
    for row, broken in gone:
        column, value, target = broken  # type: ignore[misc]
        reason = f"[{STAGE}] {column} {value!r} is not in {target}"
        item = (f"{table.name}/{getattr(row, table.key)}" if table.key
                else f"{table.name}/{column}={value}")
        grouped.setdefault((item, getattr(row, "persona_id", None)), [reason])
    return [StageFailureRow(stage=STAGE, item_key=item, persona_id=pid, action="dropped", problems=problems)
            for (item, pid), problems in grouped.items()]


def dangling(con: duckdb.DuckDBPyConnection, tables: Sequence[Table], schema: str = "lake") -> list[str]:
    """One line per reference that names a missing row, over the tables as `schema` holds them."""
    names = {t.name for t in tables}
    problems = []
    for table in tables:
        for ref in table.refs:
            if ref.table not in names:
                problems.append(f"{table.name}.{ref.column} refers to {ref.table}, which this build "
                                "does not write")
                continue
            is_list = pa.types.is_list(table.schema.field(ref.column).type)
            value = f'unnest("{ref.column}")' if is_list else f'"{ref.column}"'
            where = f'WHERE "{ref.when[0]}" = ?' if ref.when else ""
            count, example = con.execute(
                f'SELECT count(*), any_value(v) FROM (SELECT {value} AS v FROM {schema}."{table.name}" {where}) s '
                f'ANTI JOIN {schema}."{ref.table}" t ON s.v = t."{ref.key}" WHERE s.v IS NOT NULL',
                [ref.when[1]] if ref.when else []).fetchone()
            if count:
                problems.append(f"{count} {ref.column} value(s) of {table.name} name no row of "
                                f"{ref.table}.{ref.key} (e.g. {example!r})")
    return problems
