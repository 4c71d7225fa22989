"""Where a warehouse's DuckLake catalogs live: a file per dataset, or one PostgreSQL database.

A file catalog (`<root>/<dataset>/catalog.ducklake`) needs no server; on an s3:// warehouse
a copy of it goes to the bucket after each publish, so one machine writes at a time. With
`catalog: postgres://…` every dataset's catalog is a schema of that database, and DuckLake's
transactions there let many machines write at once. The root is marked with the database
(`catalog.json`, no password: libpq reads PGPASSWORD or a service file), so every command
on it finds the catalogs without being told again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from urllib.parse import urlsplit

import duckdb

from memsynth.core import duck
from memsynth.core.duck import shipped_extension_path, sql_str
from memsynth.core.errors import ConfigError, MemsynthError

MARKER = "catalog.json"
CATALOG_ENV = "MEMSYNTH_CATALOG"
CATALOG_FILE = "catalog.ducklake"
SCHEMES = ("postgres", "postgresql")


class PostgresCatalogs:
    """Every dataset's DuckLake catalog as a schema (named as the dataset) of one database."""

    concurrent = True  # the database's transactions decide between writers

    def __init__(self, url: str):
        self.url = check_catalog_url(url)

    def target(self, dataset: str) -> tuple[str, list[str]]:
        """What ATTACH names for `dataset`'s catalog, and the options that place it."""
        return f"ducklake:postgres:{self.url}", [f"METADATA_SCHEMA '{sql_str(dataset)}'"]

    def load(self, con: duckdb.DuckDBPyConnection) -> None:
        load_postgres(con)

    def datasets(self) -> list[str]:
        """The datasets whose catalogs the database holds (a schema with DuckLake's tables)."""
        con = duck.connect()
        try:
            load_postgres(con)
            con.execute(f"ATTACH '{sql_str(self.url)}' AS pg (TYPE postgres, READ_ONLY)")
            rows = con.execute(
                "SELECT DISTINCT table_schema FROM pg.information_schema.tables "
                "WHERE table_name = 'ducklake_snapshot' ORDER BY 1").fetchall()
        except duckdb.Error as exc:
            raise MemsynthError(f"cannot read the catalog database {self.url}: {_first_line(exc)}") from exc
        finally:
            con.close()
        return [r[0] for r in rows]

    def exists(self, dataset: str) -> bool:
        return dataset in self.datasets()

    def describe(self) -> str:
        return self.url


def check_catalog_url(url: str) -> str:
    """A postgres:// URL that carries no password (it would be written in the root's marker)."""
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise ConfigError(f"catalog {url!r}: give a postgres://user@host:port/database URL")
    if parts.password:
        masked = url.replace(f":{parts.password}@", ":***@")
        raise ConfigError(f"catalog {masked}: the URL carries a password; set PGPASSWORD (or a "
                          "service file, ~/.pgpass) instead, so it is written nowhere")
    if not parts.path.strip("/"):
        raise ConfigError(f"catalog {url}: name the database (postgres://host:port/DATABASE)")
    return url


def load_postgres(con: duckdb.DuckDBPyConnection) -> None:
    """Load DuckDB's postgres extension from its PyPI package (nothing is downloaded)."""
    path = shipped_extension_path("postgres_scanner")
    try:
        con.execute(f"LOAD '{sql_str(str(path))}'" if path is not None else "LOAD postgres_scanner")
    except duckdb.Error as exc:
        raise MemsynthError("the DuckDB postgres extension is not installed: pip install "
                            f"'duckdb-extension-postgres-scanner=={duckdb.__version__}'") from exc


def bind_catalog(root: Path, url: str, file_catalogs: list[str]) -> None:
    """Mark `root` as keeping its catalogs in `url`'s database; refused when it keeps them
    elsewhere (another database, or the files `file_catalogs` names: `memsynth catalog move`)."""
    url = check_catalog_url(url)
    root = Path(root)
    existing = catalog_url_of(root)
    if existing == url:
        return
    if existing is not None:
        raise ConfigError(f"the warehouse {root} keeps its catalogs in {existing}, not {url}")
    if file_catalogs:
        raise ConfigError(f"the warehouse {root} keeps the catalogs of {', '.join(file_catalogs)} in files; "
                          f"move them to the database first: memsynth catalog move --warehouse {root} --to {url}")
    write_marker(root, url)


def write_marker(root: Path, url: str) -> None:
    root.mkdir(parents=True, exist_ok=True)
    tmp = root / f".{MARKER}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps({"url": url}) + "\n", encoding="utf-8")
    os.replace(tmp, root / MARKER)


def catalog_url_of(root: Path) -> str | None:
    """The database a warehouse root keeps its catalogs in (None: files)."""
    marker = Path(root) / MARKER
    if not marker.is_file():
        return None
    return str(json.loads(marker.read_text(encoding="utf-8"))["url"])


def postgres_catalogs(root: Path) -> PostgresCatalogs | None:
    """The database of `root`'s catalogs: its marker's, else $MEMSYNTH_CATALOG (a reader of a
    root no build has marked yet); None: catalog files."""
    marked, named = catalog_url_of(root), os.environ.get(CATALOG_ENV) or None
    if marked and named and named != marked:
        raise ConfigError(f"$MEMSYNTH_CATALOG is {named}, but the warehouse {root} keeps its catalogs in {marked}")
    url = marked or named
    return PostgresCatalogs(url) if url else None


def _first_line(exc: BaseException) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

