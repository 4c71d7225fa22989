"""What `memsynth query` lets through: one plain read, judged by DuckDB's own parser."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Iterator, Sequence
from typing import Any

import duckdb

from memsynth.core import duck
from memsynth.core.errors import MemsynthError

# The words a read may open with. Checked on DuckDB's tokens before anything is parsed:
# the parser itself runs some statements' side work (IMPORT DATABASE reads a file).
OPENING_WORDS = {"select", "with", "from", "values", "table", "describe", "summarize", "show", "explain", "("}
# Table and scalar functions that write files, change the catalog or run SQL (or name a
# table) given as text. Every DuckLake function is refused: they are maintenance calls, and
# the tables are there to read; so is every postgres one, which reach past the dataset.
WRITING_FUNCTIONS = {"checkpoint", "force_checkpoint", "query", "query_table"}
REFUSED_PREFIXES = ("ducklake_", "postgres_")
# DuckLake attaches the database its catalog is in under this name: on a PostgreSQL catalog,
# a whole database of other datasets' catalogs (and whatever else it holds).
METADATA_CATALOG = "__ducklake_metadata"
_WORD = re.compile(r"[A-Za-z_]+|\(")


def check_read_only(sql: str) -> None:
    """Refuse anything but a single SELECT, or an EXPLAIN (not ANALYZE) of one, calling
    no function that writes; each refusal is one line."""
    words = _words(sql)
    if not words:
        raise MemsynthError("give a query (the SQL is empty)")
    if words[0] not in OPENING_WORDS:
        raise MemsynthError(f"only read-only SELECT queries are allowed; refused a {words[0].upper()} statement")
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise MemsynthError(f"cannot parse query: {str(exc).splitlines()[0]}") from exc
    if len(statements) != 1:
        raise MemsynthError(f"give exactly one statement (got {len(statements)})")
    statement = statements[0]
    if statement.type == duckdb.StatementType.EXPLAIN:
        if len(words) > 1 and words[1] == "analyze":
            raise MemsynthError("EXPLAIN ANALYZE runs its statement: use EXPLAIN, or run the SELECT itself")
        inner = sql[_after_first_word(sql):]
        if _words(inner)[:1] == ["explain"]:
            raise MemsynthError("give one EXPLAIN, not nested ones")
        return check_read_only(inner)
    if statement.type != duckdb.StatementType.SELECT:
        raise MemsynthError(f"only read-only SELECT queries are allowed; refused a {statement.type.name} statement")
    tree = _serialized(sql)
    for name in _function_names(tree):
        if name in WRITING_FUNCTIONS or name.startswith(REFUSED_PREFIXES):
            raise MemsynthError(f"only read-only queries are allowed; refused the function {name}()")
    for catalog in _named(tree, "catalog_name"):
        if catalog.startswith(METADATA_CATALOG):
            raise MemsynthError(f"{catalog} is the catalog's own database, not the dataset: query the dataset's tables")


def run_sandboxed(con: duckdb.DuckDBPyConnection, sql: str, allowed: Sequence[str]
                  ) -> tuple[list[str], list[tuple[Any, ...]]]:
    """Run a checked read on `con` with only the `allowed` folders readable and external access
    and settings locked; a large sort spills to a folder of its own, removed after. Closes `con`."""
    return run_all_sandboxed(con, [sql], allowed)[0]


def run_all_sandboxed(con: duckdb.DuckDBPyConnection, sqls: Sequence[str], allowed: Sequence[str]
                      ) -> list[tuple[list[str], list[tuple[Any, ...]]]]:
    """`run_sandboxed` for several checked reads in turn, on one connection. Closes `con`."""
    spill = tempfile.mkdtemp(prefix="memsynth-query-")
    try:
        listed = ", ".join(f"'{duck.sql_str(a)}/'" for a in dict.fromkeys(allowed))
        con.execute(f"SET temp_directory = '{duck.sql_str(spill)}'")
        con.execute(f"SET allowed_directories = [{listed}]")
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        results = []
        for sql in sqls:
            try:
                cur = con.execute(sql)
                results.append(([d[0] for d in cur.description] if cur.description else [], cur.fetchall()))
            except duckdb.Error as exc:
                raise MemsynthError(f"query failed: {str(exc).splitlines()[0]}") from exc
        return results
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def _words(sql: str) -> list[str]:
    """The statement's tokens as lower-case words (comments skipped by DuckDB's tokenizer)."""
    out = []
    for position, _kind in duckdb.tokenize(sql):
        match = _WORD.match(sql, position)
        out.append(match.group(0).lower() if match else sql[position])
    return out


def _after_first_word(sql: str) -> int:
    position = duckdb.tokenize(sql)[0][0]
    return _WORD.match(sql, position).end()  # type: ignore[union-attr]


def _serialized(sql: str) -> dict[str, Any]:
    """The SELECT's syntax tree as DuckDB serializes it (it serializes nothing but SELECTs)."""
    with duck.connect() as con:
        # A literal, not a bound parameter: binding any Python value makes duckdb import
        # pandas to check its type, a fifth of a second of the command's start.
        text = con.execute(f"SELECT json_serialize_sql('{duck.sql_str(sql)}')").fetchone()[0]
    tree = json.loads(text)
    if tree.get("error"):
        raise MemsynthError(f"only read-only SELECT queries are allowed ({tree.get('error_message', 'not a SELECT')})")
    return tree


def _function_names(node: Any) -> Iterator[str]:
    return _named(node, "function_name")


def _named(node: Any, key: str) -> Iterator[str]:
    """Every value of `key` in the syntax tree, lower-cased."""
    if isinstance(node, dict):
        name = node.get(key)
        if isinstance(name, str):
            yield name.lower()
        for value in node.values():
            yield from _named(value, key)
    elif isinstance(node, list):
        for value in node:
            yield from _named(value, key)
