"""Moving a warehouse's catalog files into a PostgreSQL database, history and all.

Each dataset's DuckLake catalog is a handful of `ducklake_*` tables; the move copies them
row for row into the dataset's schema (created by DuckLake itself, so its tables are the
ones this DuckLake expects), in one transaction per dataset. Snapshots, versions and data
file paths stay what they were: the data files are not touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from memsynth.core import duck
from memsynth.core.duck import sql_str
from memsynth.core.errors import ConfigError, MemsynthError
from memsynth.warehouse.catalogs import (
    CATALOG_FILE,
    PostgresCatalogs,
    catalog_url_of,
    check_catalog_url,
    load_postgres,
    write_marker,
)
from memsynth.warehouse.ducklake import load_ducklake
from memsynth.warehouse.location import Location, location_of

MOVED_SUFFIX = ".moved"  # a moved catalog file is kept beside, renamed, until the user deletes it


def move_catalogs(root: Path, url: str) -> list[dict[str, Any]]:
    """Copy every dataset's catalog file under `root` into `url`'s database and mark the root
    with it; returns each dataset's name and snapshot count."""
    url = check_catalog_url(url)
    root = Path(root)
    if catalog_url_of(root):
        raise ConfigError(f"the warehouse {root} keeps its catalogs in {catalog_url_of(root)} already")
    location = location_of(root)
    names = location.file_catalogs()
    if not names:
        raise MemsynthError(f"no catalog files under {location.name} to move")
    database = PostgresCatalogs(url)
    taken = sorted(set(names) & set(database.datasets()))
    if taken:
        raise MemsynthError(f"the database {url} already holds {', '.join(taken)}: nothing was moved")
    moved = []
    for name in names:
        directory = root / name
        location.fetch_catalog(directory)  # the newest copy, on a bucket warehouse
        moved.append({"dataset": name, "snapshots": _copy(directory / CATALOG_FILE, database, name, location)})
    write_marker(root, url)
    for name in names:
        os.replace(root / name / CATALOG_FILE, root / name / (CATALOG_FILE + MOVED_SUFFIX))
        location.drop_shared_catalog(name)  # so no machine fetches the old catalog again
    return moved


def _copy(catalog: Path, database: PostgresCatalogs, dataset: str, location: Location) -> int:
    con = duck.connect()
    try:
        load_ducklake(con)
        load_postgres(con)
        location.configure(con)  # DuckLake checks the data path (a bucket needs httpfs)
        data_path = location.data_path(dataset)
        con.execute(f"ATTACH '{sql_str(str(catalog))}' AS source (READ_ONLY)")
        target, options = database.target(dataset)
        # DuckLake makes the schema and its tables as its own version expects them, then goes.
        con.execute(f"ATTACH '{sql_str(target)}' AS fresh (DATA_PATH '{sql_str(data_path)}/', {', '.join(options)})")
        con.execute("DETACH fresh")
        con.execute(f"ATTACH '{sql_str(database.url)}' AS pg (TYPE postgres)")
        tables = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = 'source' "
            "AND table_name LIKE 'ducklake_%' ORDER BY 1").fetchall()]
        schema = '"' + dataset.replace('"', '""') + '"'
        con.execute("BEGIN TRANSACTION")
        for table in tables:
            con.execute(f'DELETE FROM pg.{schema}."{table}"')
            con.execute(f'INSERT INTO pg.{schema}."{table}" BY NAME SELECT * FROM source.main."{table}"')
        con.execute("COMMIT")
        return con.execute("SELECT count(*) FROM source.main.ducklake_snapshot").fetchone()[0]
    except MemsynthError:
        raise
    except Exception as exc:
        raise MemsynthError(f"moving the catalog of {dataset} failed, nothing of it was moved: "
                            f"{str(exc).strip().splitlines()[0]}") from exc
    finally:
        con.close()
