"""Attaching a dataset's DuckLake catalog, loading the extension offline."""

from __future__ import annotations

import re
import time
from pathlib import Path

import duckdb

from memsynth.core.duck import shipped_extension_path, sql_str
from memsynth.core.errors import MemsynthError
from memsynth.warehouse.catalogs import CATALOG_FILE, postgres_catalogs
from memsynth.warehouse.location import location_of

LOCK_WAIT_S = 30  # how long to wait for another process's publish to release the catalog
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def validate_dataset_name(name: str) -> str:
    if not _NAME.match(name):
        raise MemsynthError(
            f"invalid dataset name {name!r}: use lowercase letters, digits, '-' and '_'")
    return name


def dataset_dir(root: Path, dataset: str) -> Path:
    return Path(root) / validate_dataset_name(dataset)


def load_ducklake(con: duckdb.DuckDBPyConnection) -> None:
    """Load DuckLake from the file shipped in `duckdb-extension-ducklake`, else `LOAD ducklake`.

    Nothing is downloaded: this machine (and CI) cannot reach the extension repository,
    and a plain LOAD spends half a second finding that out.
    """
    path = shipped_extension_path("ducklake")
    if path is not None:
        con.execute(f"LOAD '{sql_str(str(path))}'")
        return
    try:
        con.execute("LOAD ducklake")
    except duckdb.Error as exc:
        raise MemsynthError(
            "the DuckLake extension is not installed: pip install "
            f"'duckdb-extension-ducklake=={duckdb.__version__}'") from exc


def attach(con: duckdb.DuckDBPyConnection, directory: Path, *, alias: str = "lake",
           read_only: bool = False, snapshot: int | None = None) -> None:
    """Attach the catalog in `directory` as `alias` (created on first write)."""
    loaded = con.execute("SELECT count(*) FROM duckdb_extensions() "
                         "WHERE extension_name = 'ducklake' AND loaded").fetchone()[0]
    if not loaded:
        load_ducklake(con)
    directory = Path(directory).resolve()
    # The data folder is wherever the catalog is now: a local warehouse is a folder that can be
    # moved, copied or named by a relative path (file paths inside are stored relative).
    location = location_of(directory.parent)
    location.configure(con)
    data_path = location.data_path(directory.name)
    options = [f"DATA_PATH '{sql_str(data_path)}/'", "OVERRIDE_DATA_PATH true"]
    database = postgres_catalogs(directory.parent)
    if database is None:
        location.fetch_catalog(directory)
        target = f"ducklake:{directory / CATALOG_FILE}"
    else:
        database.load(con)
        target, placed = database.target(directory.name)
        options += placed
    if read_only:
        options.append("READ_ONLY")
    else:
        options.append("DATA_INLINING_ROW_LIMIT 0")  # always real Parquet files
    if snapshot is not None:
        options.append(f"SNAPSHOT_VERSION {int(snapshot)}")
    statement = f"ATTACH '{sql_str(target)}' AS {alias} ({', '.join(options)})"
    # A publish holds the catalog file's lock for a moment (readers too are refused while
    # it does): wait it out rather than fail.
    deadline = time.monotonic() + LOCK_WAIT_S
    while True:
        try:
            con.execute(statement)
            return
        except duckdb.Error as exc:
            locked = isinstance(exc, duckdb.IOException) and "lock" in str(exc).lower()
            racing = database is not None and created_at_once(str(exc))
            if not (locked or racing) or time.monotonic() > deadline:
                where = f"{directory}" if database is None else f"{database.url} (schema {directory.name})"
                raise MemsynthError(f"cannot open the catalog in {where}: "
                                    f"{str(exc).strip().splitlines()[0]}") from exc
            time.sleep(0.1)


def created_at_once(error: str) -> bool:
    """Whether PostgreSQL refused a catalog's creation because another machine was creating
    it at the same moment: the second sees the first's schema or tables appear mid-way (a
    duplicate key in PostgreSQL's own catalog, or a relation that already exists), and finds
    the catalog whole when it tries again."""
    return "duplicate key value" in error or ("relation" in error and "already exists" in error)


def share_catalog(directory: Path) -> None:
    """After a publish (connection closed): let other machines see the catalog (a database
    catalog is seen as it commits)."""
    directory = Path(directory).resolve()
    if postgres_catalogs(directory.parent) is None:
        location_of(directory.parent).share_catalog(directory)


def catalog_exists(root: Path, dataset: str) -> bool:
    """Whether `dataset` has a catalog (a file's newer copy in the bucket is fetched first)."""
    database = postgres_catalogs(root)
    if database is not None:
        return database.exists(validate_dataset_name(dataset))
    directory = dataset_dir(root, dataset)
    location_of(root).fetch_catalog(directory)
    return (directory / CATALOG_FILE).is_file()


def dataset_names(root: Path) -> list[str]:
    """The datasets with a catalog under `root` (or in its database)."""
    database = postgres_catalogs(root)
    if database is not None:
        return database.datasets()
    return sorted(c.parent.name for c in Path(root).glob(f"*/{CATALOG_FILE}"))


def concurrent_writers(root: Path) -> bool:
    """Whether other machines may be publishing into `root`'s catalogs right now."""
    return postgres_catalogs(root) is not None
