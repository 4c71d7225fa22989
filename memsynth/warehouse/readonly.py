"""The screen in front of `memsynth query`: one plain read, judged by DuckDB's own parser.

The screen is the second line of defence, not the first: user SQL runs in a connection that
holds nothing but the version's data files (`sandbox.py`), so a form the screen misses still
finds nothing to write and nothing outside to read. The screen makes refusals one clear line.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

import duckdb

from memsynth.core.errors import MemsynthError

# The words a read may open with. Checked on DuckDB's tokens before anything is parsed:
# the parser itself runs some statements' side work (IMPORT DATABASE reads a file).
OPENING_WORDS = {"select", "with", "from", "values", "table", "describe", "summarize", "show", "explain", "("}
# Table and scalar functions that write files, change the catalog or run SQL (or name a
# table) given as text. Every DuckLake function is refused: they are maintenance calls, and
# the tables are there to read; so is every postgres one, which reach past the dataset, and
# every json_*serialized_sql one, which runs a query the screen never sees.
WRITING_FUNCTIONS = {"checkpoint", "force_checkpoint", "query", "query_table"}
REFUSED_PREFIXES = ("ducklake_", "postgres_", "json_execute_serialized_sql", "json_deserialize_sql")
# DuckLake attaches the database its catalog is in under this name: on a PostgreSQL catalog,
# a whole database of other datasets' catalogs (and whatever else it holds).
METADATA_CATALOG = "__ducklake_metadata"
MAX_QUERY_CHARS = 1_000_000
_WORD = re.compile(r"\w+|\(")
# Keys of DuckDB's serialized syntax tree, read off its JSON text: a deeply nested query
# (a 500-term sum) nests its JSON deeper than Python's parser or a recursive walk can go.
_KEY = {key: re.compile(rf'"{key}":"((?:[^"\\]|\\.)*)"') for key in ("function_name", "catalog_name", "schema_name")}
_ERROR = re.compile(r'^\{"error":true.*?"error_message":"((?:[^"\\]|\\.)*)"', re.S)


def check_text(sql: str) -> None:
    """Refuse text DuckDB cannot be handed as it is: empty, too long, NUL, a lone surrogate."""
    if len(sql) > MAX_QUERY_CHARS:
        raise MemsynthError(f"the query is {len(sql):,} characters; at most {MAX_QUERY_CHARS:,} are read")
    for i, ch in enumerate(sql):
        if ch == "\0":
            raise MemsynthError(f"the query holds a NUL character (at character {i + 1})")
        if "\ud800" <= ch <= "\udfff":
            # A command line's undecodable bytes arrive as lone surrogates.
            raise MemsynthError(f"the query is not valid UTF-8 text (at character {i + 1})")
    if not sql.strip():
        raise MemsynthError("give a query (the SQL is empty)")


def screen_opening(sql: str) -> list[str]:
    """Check what can be seen before any parse: the text, and the word the statement opens
    with. Returns the statement's words."""
    check_text(sql)
    words = _words(sql)
    if not words:
        raise MemsynthError("give a query (the SQL holds only comments)")
    if words[0] not in OPENING_WORDS:
        raise MemsynthError(f"only read-only SELECT queries are allowed; refused a {_shown(words[0]).upper()} statement")
    return words


def check_read_only(sql: str, con: duckdb.DuckDBPyConnection | None = None) -> None:
    """Refuse anything but a single SELECT, or an EXPLAIN (not ANALYZE) of one, calling no
    function that writes; each refusal is one line. `con` parses: a connection that can reach
    no file (the parser runs some statements' side work); by default, one made for it."""
    if con is None:
        with parsing_connection() as own:
            return check_read_only(sql, own)
    words = screen_opening(sql)
    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise MemsynthError(f"cannot parse query: {first_line(exc)}") from exc
    if len(statements) != 1:
        raise MemsynthError(f"give exactly one statement (got {len(statements)})")
    statement = statements[0]
    if statement.type == duckdb.StatementType.EXPLAIN:
        if len(words) > 1 and words[1] == "analyze":
            raise MemsynthError("EXPLAIN ANALYZE runs its statement: use EXPLAIN, or run the SELECT itself")
        inner = sql[_after_first_word(sql):]
        if _words(inner)[:1] == ["explain"]:
            raise MemsynthError("give one EXPLAIN, not nested ones")
        return check_read_only(inner, con)
    if statement.type != duckdb.StatementType.SELECT:
        raise MemsynthError(f"only read-only SELECT queries are allowed; refused a {statement.type.name} statement")
    tree = _serialized(sql, con)
    for name in _named(tree, "function_name"):
        if name in WRITING_FUNCTIONS or name.startswith(REFUSED_PREFIXES):
            raise MemsynthError(f"only read-only queries are allowed; refused the function {_shown(name)}()")
    for key in ("catalog_name", "schema_name"):
        for name in _named(tree, key):
            if name.startswith(METADATA_CATALOG):
                raise MemsynthError(f"{_shown(name)} is the catalog's own database, not the dataset: "
                                    "query the dataset's tables")


def parsing_connection() -> duckdb.DuckDBPyConnection:
    """An empty connection that can read no file, load nothing and change no setting."""
    con = duckdb.connect(config={"autoload_known_extensions": False, "autoinstall_known_extensions": False})
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con


def _words(sql: str) -> list[str]:
    """The statement's tokens as lower-case words (comments skipped by DuckDB's tokenizer).

    DuckDB gives each token's offset in the UTF-8 bytes; the text is indexed by character.
    """
    chars = _char_at_byte(sql)
    out = []
    for offset, _kind in duckdb.tokenize(sql):
        position = chars[offset] if offset < len(chars) else len(sql)
        match = _WORD.match(sql, position)
        out.append(match.group(0).lower() if match else sql[position:position + 1])
    return out


def _char_at_byte(sql: str) -> list[int]:
    chars: list[int] = []
    for i, ch in enumerate(sql):
        chars.extend([i] * len(ch.encode("utf-8")))
    return chars


def _after_first_word(sql: str) -> int:
    position = _char_at_byte(sql)[duckdb.tokenize(sql)[0][0]]
    return _WORD.match(sql, position).end()  # type: ignore[union-attr]


def _serialized(sql: str, con: duckdb.DuckDBPyConnection) -> str:
    """The SELECT's syntax tree as DuckDB serializes it (it serializes nothing but SELECTs)."""
    # A literal, not a bound parameter: binding any Python value makes duckdb import
    # pandas to check its type, a fifth of a second of the command's start.
    quoted = sql.replace("'", "''")
    try:
        text = con.execute(f"SELECT json_serialize_sql('{quoted}')").fetchone()[0]
    except duckdb.Error as exc:
        raise MemsynthError(f"cannot parse query: {first_line(exc)}") from exc
    error = _ERROR.match(text)
    if error:
        raise MemsynthError(f"only read-only SELECT queries are allowed ({_unescape(error.group(1))})")
    return text


def _named(tree: str, key: str) -> Iterator[str]:
    """Every value of `key` in the serialized tree, lower-cased."""
    for match in _KEY[key].finditer(tree):
        yield _unescape(match.group(1)).lower()


def _unescape(json_string: str) -> str:
    import json

    try:
        return json.loads(f'"{json_string}"')
    except ValueError:
        return json_string


def _shown(text: str, limit: int = 80) -> str:
    """`text` safe to print on one line of a terminal: controls and escapes shown as codes."""
    return "".join(ch if ch.isprintable() and unicodedata.category(ch) != "Cf" else f"\\u{ord(ch):04x}"
                   for ch in text[:limit])


def first_line(exc: BaseException) -> str:
    return _shown((str(exc).strip().splitlines() or [type(exc).__name__])[0], 300)
