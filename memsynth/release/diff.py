"""`memsynth release diff`: per config, which rows were added, removed or changed, by id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memsynth.core.errors import ConfigError, MemsynthError
from memsynth.core.inputs import printable
from memsynth.release.folder import Refused, ReleaseFolder, outside
from memsynth.release.splits import DEFAULT_SPLITS
from memsynth.release.verify import MANIFEST
from memsynth.release.views import read_views

EXAMPLES = 5


def release_tables(folder: Path) -> dict[str, tuple[str, pa.Table]]:
    """A release folder's configs as {name: (key column, every split's rows)}, read only
    from the folder's own regular files (see ReleaseFolder)."""
    folder = Path(folder)
    release = ReleaseFolder(folder)
    try:
        manifest = release.read_json(MANIFEST)
    except (OSError, Refused, ConfigError) as exc:
        raise MemsynthError(f"{folder} is not a release folder (no readable {MANIFEST}: {_why(exc)})") from None
    configs = manifest.get("configs") if isinstance(manifest, dict) else None
    if not isinstance(configs, dict) or not configs:
        raise MemsynthError(f"{folder}/{MANIFEST}: no `configs` object naming the release's configs")
    listing = release.listing()
    if listing.links or listing.special:
        rel = (listing.links or listing.special)[0]
        raise MemsynthError(f"{folder}/{rel}: not a regular file or folder; a release holds its own files "
                            "(`memsynth release verify` lists every problem)")
    out = {}
    for name, config in configs.items():
        if outside(name) or "/" in name:
            raise MemsynthError(f"{folder}/{MANIFEST}: {name!r} is not a config's name")
        key = config.get("key") if isinstance(config, dict) else None
        if not isinstance(key, str):
            raise MemsynthError(f"{folder}/{MANIFEST}: config {name} has no `key` column named")
        files = release.glob(f"data/{_escape(name)}/*.parquet")
        if not files:
            raise MemsynthError(f"{folder}: config {name} has no Parquet files")
        out[name] = (key, _read_config(release, folder, name, key, files))
    return out


def _read_config(release: ReleaseFolder, folder: Path, name: str, key: str, files: list[str]) -> pa.Table:
    tables = []
    for rel in files:
        try:
            with release.open(rel) as fh:
                tables.append(pq.read_table(fh))
        except (Refused, OSError) as exc:
            raise MemsynthError(f"{folder}/{rel}: not read ({_why(exc)})") from None
        except (pa.ArrowException, ValueError) as exc:  # not Parquet, or damaged
            raise MemsynthError(f"{folder}/{rel}: not a readable Parquet file "
                                f"({(str(exc).splitlines() or [''])[0]})") from None
    try:
        table = pa.concat_tables(tables)
    except pa.ArrowException:
        raise MemsynthError(f"{folder}: config {name}'s Parquet files have different schemas") from None
    if key not in table.column_names:
        raise MemsynthError(f"{folder}: config {name} has no column {key!r}, its manifest's key")
    return table


def _escape(name: str) -> str:
    """`name` matched literally by ReleaseFolder.glob."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _why(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, (Refused, ConfigError)) else (getattr(exc, "strerror", None) or str(exc))


def version_tables(root: Path, dataset: str, version: int) -> dict[str, tuple[str, pa.Table]]:
    """A warehouse version's configs, as a release of it would hold them (all splits together)."""
    source = read_views(root, dataset, version, dict(DEFAULT_SPLITS), None)
    try:
        return {v.name: (v.key, source.views[v.name]) for v in source.spec.views}
    finally:
        source.con.close()


def diff_tables(old: dict[str, tuple[str, pa.Table]], new: dict[str, tuple[str, pa.Table]]) -> dict[str, Any]:
    """Per config: counts and a few example ids of added, removed and changed rows."""
    out: dict[str, Any] = {}
    for name in sorted(set(old) | set(new)):
        key = (new.get(name) or old[name])[0]
        if name in old and name in new and old[name][0] != key:
            raise MemsynthError(f"config {name} is keyed by {old[name][0]!r} before and {key!r} after: "
                                "rows cannot be matched")
        before = _rows_by_key(old[name][1], key) if name in old else {}
        after = _rows_by_key(new[name][1], key) if name in new else {}
        added = sorted(set(after) - set(before))
        removed = sorted(set(before) - set(after))
        changed = sorted(k for k in set(before) & set(after) if before[k] != after[k])
        out[name] = {
            "key": key, "rows_before": len(before), "rows_after": len(after),
            "added": len(added), "removed": len(removed), "changed": len(changed),
            "added_ids": added, "removed_ids": removed, "changed_ids": changed,
            "changed_columns": {k: _changed_columns(before[k], after[k]) for k in changed[:EXAMPLES]},
        }
    return out


def _rows_by_key(table: pa.Table, key: str) -> dict[str, dict[str, Any]]:
    rows = {}
    for row in table.to_pylist():
        rows[str(row[key])] = row
    return rows


def _changed_columns(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    return sorted(c for c in set(a) | set(b) if _canonical(a.get(c)) != _canonical(b.get(c)))


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def format_diff(diff: dict[str, Any]) -> str:
    """The diff as text a person reads before publishing; every name and id from the rows is
    escaped (`printable`), so none breaks a line or drives the terminal."""
    lines = []
    for name, d in diff.items():
        name, key = printable(name), printable(d["key"])
        lines.append(f"{name} (by {key}): {d['rows_before']:,} → {d['rows_after']:,} rows; "
                     f"+{d['added']:,} added, -{d['removed']:,} removed, ~{d['changed']:,} changed")
        for label in ("added", "removed"):
            ids = d[f"{label}_ids"]
            if ids:
                more = f" … and {len(ids) - EXAMPLES:,} more" if len(ids) > EXAMPLES else ""
                lines.append(f"  {label}: {printable(', '.join(ids[:EXAMPLES]))}{more}")
        for row, columns in d["changed_columns"].items():
            lines.append(f"  changed: {printable(row)} ({printable(', '.join(columns))})")
        if d["changed"] > EXAMPLES:
            lines.append(f"  … and {d['changed'] - EXAMPLES:,} more changed")
    return "\n".join(lines)
