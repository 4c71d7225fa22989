"""Whether a build changed anything: a version equal to the latest in everything its rows depend
on, and in the rows themselves, is not published again (`memsynth build --publish-unchanged` does).

"Nothing changed" means the same config (redacted, as hashed), the same memsynth version, the
same prompt templates, schemas and recipe options (by hash), the same model and regenerations,
and every table's content identical, row for row in any order (`content_hashes`). The
`llm_calls` log is left out of the content: it says how this build got its answers (from the
cache, when, how fast), not what the dataset holds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

# The build's own log of its calls: differs between two builds of the same rows.
NOT_CONTENT = frozenset({"llm_calls"})
# The `versions` columns that must all be equal, as stored (JSON text sorted by key).
SAME = ("config_hash", "memsynth_version", "prompt_hashes", "schema_hashes", "options_hash", "model",
        "regenerations", "content_hashes")


def content_hashes(con: Any, files: Mapping[str, Sequence[Any]]) -> dict[str, str]:
    """Per table (`llm_calls` aside): "<rows>:<md5 of its rows' md5s, sorted>", read from the
    staged files, so two builds of the same rows agree whatever order their shards wrote them."""
    hashes = {}
    for name, staged in sorted(files.items()):
        if name in NOT_CONTENT or not staged:
            continue
        listed = "[" + ", ".join("'" + str(f).replace("'", "''") + "'" for f in staged) + "]"
        rows, digest = con.execute(
            "SELECT count(*), md5(string_agg(h, ',' ORDER BY h)) FROM "
            f"(SELECT md5(CAST(t AS VARCHAR)) AS h FROM read_parquet({listed}) AS t)").fetchone()
        hashes[name] = f"{rows}:{digest or ''}"
    return hashes


def current_version(con: Any, record: Mapping[str, Any]) -> dict[str, Any] | None:
    """The latest version (number, snapshot, row counts) when `record`, the row a publish is
    about to write, equals it in every SAME column; None when anything differs (or a column is
    unset, as in versions written before content hashes were recorded)."""
    row = con.execute(f"SELECT version, snapshot_id, row_counts, parent_version, {', '.join(SAME)} "
                      "FROM lake.versions ORDER BY version DESC LIMIT 1").fetchone()
    if row is None:
        return None
    version, snapshot, row_counts, parent, *values = row
    if any(value is None or value != record[name] for name, value in zip(SAME, values)):
        return None
    return {"version": version, "snapshot_id": snapshot, "row_counts": json.loads(row_counts or "{}"),
            "parent_version": parent}
