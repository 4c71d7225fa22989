"""Where a warehouse is: one interface over a local folder or an s3:// bucket.

A warehouse's catalogs, lock and cache index are always in a local folder (`root`); its
data files, staged rows and shared cache logs are wherever its `Location` puts them, reached
through one pyarrow filesystem. Code above this module asks the location, and never
branches on local vs s3:// itself.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memsynth.core.errors import MemsynthError
from memsynth.warehouse.catalogs import CATALOG_ENV, CATALOG_FILE, bind_catalog, catalog_url_of
from memsynth.warehouse.objectstore import ObjectStore, bind, is_remote, pull_cache, push_cache, store_of

if TYPE_CHECKING:  # pyarrow and the config's pydantic models are imported where used: a
    # query or `versions` needs neither, and they are a third of such a command's start
    import pyarrow as pa
    from pyarrow import fs

    from memsynth.core.config import BuildConfig

DATA_DIR = "data"
DEFAULT_WAREHOUSE = Path("data/warehouse")  # relative to where memsynth runs
SYNCED_FILE = ".catalog.synced"  # a shared catalog: which copy the local one is


class Location:
    """A warehouse's storage: where data files go, and how they are written, listed and shared."""

    #: The cache logs are shared through the location (other machines add theirs there).
    shares_cache = False

    def __init__(self, root: Path):
        self.root = Path(root)

    @property
    def name(self) -> str:
        """How a user names this warehouse (a folder, or s3://bucket/prefix)."""
        return str(self.root)

    def filesystem(self) -> fs.FileSystem:
        from pyarrow import fs

        return fs.LocalFileSystem()

    def data_path(self, dataset: str) -> str:
        """The dataset's data folder, as DuckLake's DATA_PATH and pyarrow's filesystem name it."""
        return str(self.root.resolve() / dataset / DATA_DIR)

    def path(self, dataset: str, *parts: str) -> str:
        """A path in the dataset's folder, as this location's filesystem names it."""
        return str(Path(self.root, dataset, *parts).resolve())

    def url(self, path: str) -> str:
        """A filesystem path as DuckDB reads it."""
        return path

    def configure(self, con: Any) -> None:
        """Give a DuckDB connection what it needs to read and write the data files."""

    def write_parquet(self, table: pa.Table, path: str) -> None:
        """Write `path` whole or not at all: a reader sees no file or the complete one."""
        final = Path(path)
        final.parent.mkdir(parents=True, exist_ok=True)
        tmp = final.with_name(f".{final.name}.tmp")
        import pyarrow.parquet as pq

        try:
            pq.write_table(table, tmp, compression="zstd")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(tmp, final)
        finally:
            tmp.unlink(missing_ok=True)

    def makedirs(self, folder: str) -> None:
        """Make a folder for files another writer (DuckDB's COPY) puts there."""
        Path(folder).mkdir(parents=True, exist_ok=True)

    def list_parquet(self, folder: str) -> list[str]:
        from pyarrow import fs

        selector = fs.FileSelector(folder, allow_not_found=True, recursive=False)
        return sorted(info.path for info in self.filesystem().get_file_info(selector)
                      if info.type == fs.FileType.File and info.path.endswith(".parquet"))

    def delete_dir(self, folder: str) -> None:
        """Remove a folder and, when that leaves it empty, its parent."""
        import shutil

        shutil.rmtree(folder, ignore_errors=True)
        parent = Path(folder).parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()

    def move_dir(self, folder: str, to: str) -> None:
        """Move a folder of files (a failed build's staged rows into its run)."""
        Path(to).parent.mkdir(parents=True, exist_ok=True)
        if Path(folder).is_dir():
            os.replace(folder, to)

    def file_catalogs(self) -> list[str]:
        """The datasets whose catalog is a file here."""
        return sorted(c.parent.name for c in self.root.glob(f"*/{CATALOG_FILE}"))

    def drop_shared_catalog(self, dataset: str) -> None:
        """Remove the copy other machines fetch (its catalog moved to a database)."""

    def file_checker(self, dataset: str) -> Callable[[str], bool]:
        """A test for whether one of the dataset's data files (as DuckDB names it) is stored."""
        return lambda path: Path(path).is_file()

    def fetch_catalog(self, directory: Path) -> None:
        """Bring a newer shared copy of the dataset's catalog here (another machine published)."""

    def share_catalog(self, directory: Path) -> None:
        """After a publish: let other machines see the catalog."""

    def pull_cache(self, local_dir: Path) -> int:
        """Fetch the shared cache logs this machine lacks; returns how many."""
        return 0

    def push_cache(self, local_dir: Path) -> int:
        """Share the cache logs this machine wrote; returns how many."""
        return 0


class BucketLocation(Location):
    """Data files, staging and cache logs in an S3 (or S3-compatible) bucket; the catalogs in
    the local `root` that stands for it, with a copy in the bucket after each publish."""

    shares_cache = True

    def __init__(self, root: Path, store: ObjectStore):
        super().__init__(root)
        self.store = store

    @property
    def name(self) -> str:
        return self.store.url

    def filesystem(self) -> fs.FileSystem:
        return self.store.filesystem()

    def data_path(self, dataset: str) -> str:
        return self.store.join(dataset, DATA_DIR)

    def path(self, dataset: str, *parts: str) -> str:
        return self.store.key(self.store.join(dataset, *parts))

    def url(self, path: str) -> str:
        return "s3://" + path

    def configure(self, con: Any) -> None:
        self.store.configure(con)

    def makedirs(self, folder: str) -> None:
        pass  # a bucket has no folders: a key's prefix is enough

    def write_parquet(self, table: pa.Table, path: str) -> None:
        import pyarrow.parquet as pq

        # One PUT: an object appears whole when its upload completes.
        pq.write_table(table, path, filesystem=self.filesystem(), compression="zstd")

    def delete_dir(self, folder: str) -> None:
        self.store.delete_dir(self.url(folder))

    def move_dir(self, folder: str, to: str) -> None:
        from pyarrow import fs

        # A bucket has no rename: each object is copied, then the folder deleted.
        filesystem = self.filesystem()
        selector = fs.FileSelector(folder, allow_not_found=True, recursive=True)
        for info in filesystem.get_file_info(selector):
            if info.type == fs.FileType.File:
                filesystem.copy_file(info.path, to + info.path[len(folder):])
        self.delete_dir(folder)

    def file_catalogs(self) -> list[str]:
        """Those the bucket holds a copy of, and those only this machine has."""
        from pyarrow import fs

        selector = fs.FileSelector(self.store.key(self.store.url), allow_not_found=True, recursive=False)
        folders = [Path(i.path).name for i in self.filesystem().get_file_info(selector)
                   if i.type == fs.FileType.Directory]
        shared = [f for f in folders if self.store.stamp(self.store.join(f, CATALOG_FILE)) is not None]
        return sorted(set(shared) | set(super().file_catalogs()))

    def drop_shared_catalog(self, dataset: str) -> None:
        self.store.delete(self.store.join(dataset, CATALOG_FILE))

    def file_checker(self, dataset: str) -> Callable[[str], bool]:
        from pyarrow import fs

        # One listing of the dataset's data folder, not a request per file.
        selector = fs.FileSelector(self.store.key(self.data_path(dataset)), allow_not_found=True, recursive=True)
        keys = {i.path for i in self.filesystem().get_file_info(selector) if i.type == fs.FileType.File}
        return lambda path: path.removeprefix("s3://") in keys

    def fetch_catalog(self, directory: Path) -> None:
        """The bucket is the truth: a newer copy there replaces this machine's; a copy this
        machine once shared (or fetched) that the bucket no longer holds, or one synced with
        another endpoint's bucket of the same name, is set aside and the bucket's state used."""
        url = self.store.join(directory.name, CATALOG_FILE)
        remote = self.store.stamp(url)
        synced = _synced_stamp(directory)
        if remote is None:
            if synced is not None and (directory / CATALOG_FILE).is_file():
                _set_aside(directory, f"{self.store.url} holds no catalog of {directory.name}")
            return
        if self._stamped(remote) != synced:
            self.store.download(url, directory / CATALOG_FILE)
            _record_stamp(directory, self._stamped(remote))

    def _stamped(self, stamp: str | None) -> str:
        """A stamp that names the endpoint too: the same bucket name on another endpoint is
        another bucket."""
        return f"{stamp} @ {self.store.endpoint_url or 'aws'}"

    def share_catalog(self, directory: Path) -> None:
        url = self.store.join(directory.name, CATALOG_FILE)
        remote = self.store.stamp(url)
        if remote is not None and self._stamped(remote) != _synced_stamp(directory):
            # Another machine published since this one fetched the catalog: uploading would
            # erase its version. The bucket's copy stays the truth; this commit is dropped.
            self.store.download(url, directory / CATALOG_FILE)
            _record_stamp(directory, self._stamped(remote))
            raise MemsynthError(
                f"another machine published {directory.name} to {self.store.url} while this one did; "
                "this version was dropped, nothing was published: build again (every answer is cached). "
                "An s3:// warehouse takes one writer at a time; give it a PostgreSQL catalog "
                "(catalog: postgres://…) for many")
        self.store.upload(directory / CATALOG_FILE, url)
        _record_stamp(directory, self._stamped(self.store.stamp(url)))

    def pull_cache(self, local_dir: Path) -> int:
        return pull_cache(self.store, local_dir)

    def push_cache(self, local_dir: Path) -> int:
        return push_cache(self.store, local_dir)


def location_of(root: Path | str) -> Location:
    """The location a warehouse root stands for: itself, or the bucket it is marked with."""
    store = store_of(root)
    return BucketLocation(Path(root), store) if store is not None else Location(Path(root))


def _synced_stamp(directory: Path) -> str | None:
    path = directory / SYNCED_FILE
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


def _set_aside(directory: Path, why: str) -> None:
    """Rename this machine's copy of a catalog (kept, never deleted) and say so in one line."""
    import logging
    import time

    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    kept = directory / f"{CATALOG_FILE}.set-aside-{stamp}"
    for suffix in ("", ".wal"):
        if (directory / (CATALOG_FILE + suffix)).exists():
            os.replace(directory / (CATALOG_FILE + suffix), Path(str(kept) + suffix))
    (directory / SYNCED_FILE).unlink(missing_ok=True)
    logging.getLogger("memsynth").warning(
        "note: %s; this machine's copy was set aside as %s and the bucket's state is used", why, kept)


def _record_stamp(directory: Path, stamp: str | None) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / SYNCED_FILE).write_text(f"{stamp}\n", encoding="utf-8")


def resolve_warehouse(flag: str | None, config: BuildConfig | None = None, *, catalog: str | None = None) -> Path:
    """--warehouse, then $MEMSYNTH_WAREHOUSE, then the config's `warehouse`, then ./data/warehouse.

    An s3:// warehouse resolves to the local folder that stands for it (its catalogs),
    named by $MEMSYNTH_CATALOG_DIR, the config's `catalog_dir`, or a default under ~/.cache.
    A build (`config` given) naming a catalog database (`catalog`, then $MEMSYNTH_CATALOG,
    then the config's) marks the root with it, so later commands on the root find it.
    """
    root = _root(flag, config)
    named = catalog or os.environ.get(CATALOG_ENV) or (config.catalog if config is not None else None)
    if named and config is not None:
        bind_catalog(root, named, [] if catalog_url_of(root) else location_of(root).file_catalogs())
    return root


def _root(flag: str | None, config: BuildConfig | None) -> Path:
    value = flag or os.environ.get("MEMSYNTH_WAREHOUSE") or (config.warehouse if config is not None else None)
    if is_remote(value):
        from memsynth.core.config import S3Config

        s3 = config.s3 if config is not None else S3Config()
        store = ObjectStore.parse(value, endpoint_url=s3.endpoint_url, region=s3.region)
        local = os.environ.get("MEMSYNTH_CATALOG_DIR") or (
            config.resolve_path(config.catalog_dir) if config is not None and config.catalog_dir else None)
        return bind(store, Path(local).expanduser() if local else None)
    if flag or os.environ.get("MEMSYNTH_WAREHOUSE"):
        return Path(value).expanduser()
    if value:
        return config.resolve_path(value)
    return DEFAULT_WAREHOUSE
