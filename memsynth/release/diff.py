"""`memsynth release diff`: per config, which rows were added, removed or changed, by id."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from memsynth.core.errors import MemsynthError
from memsynth.release.splits import DEFAULT_SPLITS
from memsynth.release.verify import MANIFEST
from memsynth.release.views import read_views

EXAMPLES = 5


def release_tables(folder: Path) -> dict[str, tuple[str, pa.Table]]:
    """A release folder's configs as {name: (key column, every split's rows)}."""
    folder = Path(folder)
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise MemsynthError(f"{folder} is not a release folder (no readable {MANIFEST})") from exc
    out = {}
    for name, config in manifest["configs"].items():
        files = sorted((folder / "data" / name).glob("*.parquet"))
        if not files:
            raise MemsynthError(f"{folder}: config {name} has no Parquet files")
        out[name] = (config["key"], pa.concat_tables([pq.read_table(f) for f in files]))
    return out


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
    """The diff as text a person reads before publishing."""
    lines = []
    for name, d in diff.items():
        lines.append(f"{name} (by {d['key']}): {d['rows_before']:,} → {d['rows_after']:,} rows; "
                     f"+{d['added']:,} added, -{d['removed']:,} removed, ~{d['changed']:,} changed")
        for label in ("added", "removed"):
            ids = d[f"{label}_ids"]
            if ids:
                more = f" … and {len(ids) - EXAMPLES:,} more" if len(ids) > EXAMPLES else ""
                lines.append(f"  {label}: {', '.join(ids[:EXAMPLES])}{more}")
        for key, columns in d["changed_columns"].items():
            lines.append(f"  changed: {key} ({', '.join(columns)})")
        if d["changed"] > EXAMPLES:
            lines.append(f"  … and {d['changed'] - EXAMPLES:,} more changed")
    return "\n".join(lines)
