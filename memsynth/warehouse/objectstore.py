"""A warehouse on S3 (or any S3-compatible store): `warehouse: s3://bucket/prefix`.

What lives where:
- in the bucket: every dataset's DuckLake data files (`<prefix>/<dataset>/data/`), the
  builds' staging areas (`<prefix>/<dataset>/_staging/`), the response cache's logs
  (`<prefix>/_cache/`), and a copy of each dataset's catalog, uploaded after each publish;
- on the machine: the DuckLake catalog (a DuckDB file cannot be written in place on S3),
  under a local root (`catalog_dir`, default `~/.cache/memsynth/warehouses/<bucket>/<prefix>`)
  that also holds the cache's index and a mirror of its logs, and `warehouse.json`, which
  names the bucket, endpoint and region so every command on that root reads S3.

A machine without the catalog fetches the bucket's copy when it first opens a dataset, so
a second machine queries, versions and builds on from where the first left off; builds
must then take turns (one writer at a time), as the lock is per machine. Many machines
writing at once need DuckLake's Postgres catalog instead (see docs/scaling.md).

Credentials come only from the standard AWS variables (AWS_ACCESS_KEY_ID,
AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) and are never written anywhere: DuckDB gets
them as a temporary in-memory secret, pyarrow as arguments.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from memsynth.core.errors import ConfigError, MemsynthError

MARKER = "warehouse.json"


def is_remote(location: str | os.PathLike[str] | None) -> bool:
    return str(location or "").startswith("s3://")


@dataclass(frozen=True)
class ObjectStore:
    """An S3 location and how to reach it (no credentials: those stay in the environment)."""

    url: str  # s3://bucket/prefix, no trailing slash
    endpoint_url: str | None = None
    region: str | None = None

    @classmethod
    def parse(cls, url: str, *, endpoint_url: str | None = None, region: str | None = None) -> ObjectStore:
        parsed = urlparse(url)
        if parsed.scheme != "s3" or not parsed.netloc:
            raise ConfigError(f"warehouse {url!r}: expected s3://bucket/prefix")
        return cls(f"s3://{parsed.netloc}{parsed.path.rstrip('/')}",
                   endpoint_url or os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL"),
                   region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1")

    @property
    def bucket(self) -> str:
        return urlparse(self.url).netloc

    def join(self, *parts: str) -> str:
        return "/".join([self.url, *parts])

    @staticmethod
    def key(url: str) -> str:
        """`bucket/key` as pyarrow's filesystem names an object."""
        return url.removeprefix("s3://")

    # --- clients ---------------------------------------------------------------------------

    def _credentials(self) -> tuple[str, str, str | None]:
        key, secret = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("AWS_SECRET_ACCESS_KEY")
        if not key or not secret:
            raise ConfigError(f"{self.url}: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                              "(credentials are read from the environment only)")
        return key, secret, os.environ.get("AWS_SESSION_TOKEN")

    def filesystem(self) -> Any:
        """A pyarrow S3 filesystem for this store."""
        from pyarrow import fs

        key, secret, token = self._credentials()
        options: dict[str, Any] = {"access_key": key, "secret_key": secret, "session_token": token,
                                   "region": self.region}
        if self.endpoint_url:
            parsed = urlparse(self.endpoint_url)
            options["endpoint_override"] = parsed.netloc or parsed.path
            options["scheme"] = parsed.scheme or "https"
        return fs.S3FileSystem(**options)

    def configure(self, con: Any) -> None:
        """Load DuckDB's httpfs (from its PyPI package: nothing is downloaded) and give the
        connection this store's credentials as a temporary secret."""
        import duckdb

        from memsynth.core.duck import shipped_extension_path, sql_str

        path = shipped_extension_path("httpfs")
        try:
            con.execute(f"LOAD '{sql_str(str(path))}'" if path else "LOAD httpfs")
        except duckdb.Error as exc:
            raise MemsynthError("the httpfs extension is not installed: pip install "
                                f"'duckdb-extension-httpfs=={duckdb.__version__}'") from exc
        key, secret, token = self._credentials()
        options = {"KEY_ID": key, "SECRET": secret, "REGION": self.region, "URL_STYLE": "path"}
        if token:
            options["SESSION_TOKEN"] = token
        if self.endpoint_url:
            parsed = urlparse(self.endpoint_url)
            options["ENDPOINT"] = parsed.netloc or parsed.path
            options["USE_SSL"] = "true" if parsed.scheme != "http" else "false"
        body = ", ".join(f"{k} {v}" if k == "USE_SSL" else f"{k} '{sql_str(str(v))}'" for k, v in options.items())
        con.execute(f"CREATE OR REPLACE TEMPORARY SECRET memsynth_s3 (TYPE s3, SCOPE '{sql_str(self.url)}', {body})")

    # --- objects ---------------------------------------------------------------------------

    def sizes(self, prefix_url: str) -> dict[str, int]:
        """name → size of the objects directly under `prefix_url`."""
        from pyarrow import fs

        selector = fs.FileSelector(self.key(prefix_url), allow_not_found=True, recursive=False)
        return {Path(info.path).name: info.size for info in self.filesystem().get_file_info(selector)
                if info.type == fs.FileType.File}

    def upload(self, local: Path, url: str) -> None:
        """Put a local file at `url` (one PUT: readers see the old object or the new one)."""
        filesystem = self.filesystem()
        with open(local, "rb") as src, filesystem.open_output_stream(self.key(url)) as dst:
            while chunk := src.read(8 << 20):
                dst.write(chunk)

    def download(self, url: str, local: Path) -> None:
        """Fetch `url` into `local`, written to a temporary name first and then moved."""
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".{local.name}.part")
        with self.filesystem().open_input_stream(self.key(url)) as src, open(tmp, "wb") as dst:
            while chunk := src.read(8 << 20):
                dst.write(chunk)
            dst.flush()
            os.fsync(dst.fileno())
        os.replace(tmp, local)

    def stamp(self, url: str) -> str | None:
        """The object's size and modification time, or None when there is none."""
        from pyarrow import fs

        info = self.filesystem().get_file_info(self.key(url))
        return f"{info.size} {info.mtime_ns}" if info.type == fs.FileType.File else None

    def delete(self, url: str) -> None:
        """Remove one object (gone already: nothing to do)."""
        from contextlib import suppress

        with suppress(FileNotFoundError):
            self.filesystem().delete_file(self.key(url))

    def delete_dir(self, url: str) -> None:
        from contextlib import suppress

        with suppress(FileNotFoundError, OSError):
            self.filesystem().delete_dir(self.key(url))


def default_local_root(store: ObjectStore) -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "memsynth" / "warehouses" / store.bucket / store.key(store.url).partition("/")[2]


def bind(store: ObjectStore, local_root: Path | None = None) -> Path:
    """The local root that stands for `store` (catalogs, cache index), marked as such."""
    root = Path(local_root) if local_root is not None else default_local_root(store)
    root.mkdir(parents=True, exist_ok=True)
    marker = root / MARKER
    existing = store_of(root)
    if existing is not None and existing.url != store.url:
        raise ConfigError(f"{root} already holds the catalogs of {existing.url}, not {store.url}: "
                          "choose another catalog_dir")
    if existing != store:
        tmp = marker.with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(store), indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, marker)
    return root


def store_of(root: Path | str) -> ObjectStore | None:
    """The object store a local warehouse root stands for, if it is one."""
    marker = Path(root) / MARKER
    if not marker.is_file():
        return None
    return ObjectStore(**json.loads(marker.read_text(encoding="utf-8")))


# --- the response cache's logs --------------------------------------------------------------
# Log names carry their writer's host and pid (memsynth.llm.cache), and only that process
# appends to a log: so a machine uploads the logs its own processes wrote, and fetches the
# others' — replacing a local copy only when it is another machine's and has grown.

CACHE_PREFIX = "_cache"


def _written_here(name: str) -> bool:
    return name.startswith(f"calls-{socket.gethostname()}-")


def pull_cache(store: ObjectStore, local_dir: Path) -> int:
    """Fetch the bucket's cache logs this machine lacks (or that grew); returns how many."""
    local_dir.mkdir(parents=True, exist_ok=True)
    fetched = 0
    for name, size in store.sizes(store.join(CACHE_PREFIX)).items():
        if not name.endswith(".jsonl"):
            continue
        local = local_dir / name
        have = local.stat().st_size if local.exists() else -1
        if have < 0 or (size > have and not _written_here(name)):
            store.download(store.join(CACHE_PREFIX, name), local)
            fetched += 1
    return fetched


def push_cache(store: ObjectStore, local_dir: Path) -> int:
    """Upload the logs this machine wrote that the bucket lacks or holds shorter."""
    remote = store.sizes(store.join(CACHE_PREFIX))
    pushed = 0
    for local in sorted(local_dir.glob("calls-*.jsonl")):
        if _written_here(local.name) and local.stat().st_size > remote.get(local.name, -1):
            store.upload(local, store.join(CACHE_PREFIX, local.name))
            pushed += 1
    return pushed
