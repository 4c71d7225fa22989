"""Judgments, kept where two annotators can never overwrite each other.

Each annotator appends to their own file, `<dataset>/_annotations/<annotator>.jsonl`, and
each judgment is fsynced before the call returns: a judgment survives a crash the moment
it is made, two annotators in two processes never write the same file, and nothing needs
a lock. A judgment given again (the annotator changed their mind) is appended too; the
latest line for an (item, criterion) is the annotator's judgment. DuckDB reads the files
as they are: `read_json('<dataset>/_annotations/*.jsonl')`. They sit beside the dataset's
catalog rather than in it, so judging never waits on a build and needs no new version.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memsynth.core.errors import MemsynthError

FOLDER = "_annotations"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


@dataclass(frozen=True)
class Judgment:
    """One annotator's value for one criterion of one item."""

    item_id: str
    criterion: str
    value: str  # "yes" / "no", a rating "1".."3", or a label such as "must"
    annotator: str
    version: int | None = None  # the dataset version the item was shown from
    comment: str = ""
    at: float = 0.0


def check_annotator(name: str) -> str:
    """An annotator's name, safe as a file name; a clear error otherwise."""
    if not _NAME.match(name):
        raise MemsynthError(f"annotator {name!r}: use letters, digits, '.', '_' or '-' (at most 64)")
    return name


class AnnotationLog:
    """The judgments of a dataset (its folder under the warehouse)."""

    def __init__(self, dataset_dir: Path):
        self.folder = Path(dataset_dir) / FOLDER

    def record(self, judgment: Judgment) -> Judgment:
        """Append a judgment to its annotator's file and return once it is on disk."""
        check_annotator(judgment.annotator)
        stamped = Judgment(**{**asdict(judgment), "at": judgment.at or time.time()})
        self.folder.mkdir(parents=True, exist_ok=True)
        line = (json.dumps(asdict(stamped), ensure_ascii=False) + "\n").encode()
        fd = os.open(self.folder / f"{judgment.annotator}.jsonl", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            os.write(fd, line)
            os.fsync(fd)
        finally:
            os.close(fd)
        return stamped

    def judgments(self, annotator: str | None = None) -> list[Judgment]:
        """Every annotator's (or one's) latest judgment per (item, criterion); a torn last
        line is skipped."""
        latest: dict[tuple[str, str, str], Judgment] = {}
        pattern = f"{check_annotator(annotator)}.jsonl" if annotator else "*.jsonl"
        for path in sorted(self.folder.glob(pattern)) if self.folder.is_dir() else []:
            for line in path.read_text(encoding="utf-8").splitlines():
                try:
                    j = Judgment(**json.loads(line))
                except (ValueError, TypeError):
                    continue  # a line cut by a crash mid-write
                latest[j.annotator, j.item_id, j.criterion] = j
        return list(latest.values())

    def annotators(self) -> list[str]:
        return sorted({j.annotator for j in self.judgments()})


def attach_annotations(con: Any, dataset_dir: Path) -> None:
    """Make `annotations` (each annotator's latest judgment per item and criterion) readable
    by name on `con`, when any judgment exists."""
    files = sorted((Path(dataset_dir) / FOLDER).glob("*.jsonl"))
    if not files:
        return
    listed = ", ".join("'" + str(f).replace("'", "''") + "'" for f in files)
    con.execute(
        "CREATE OR REPLACE TEMP VIEW annotations AS SELECT item_id, criterion, value, annotator, version, comment, "
        "to_timestamp(\"at\") AS \"at\" FROM read_json([" + listed + "], format = 'newline_delimited', ignore_errors = true, "
        "columns = {item_id: 'VARCHAR', criterion: 'VARCHAR', value: 'VARCHAR', annotator: 'VARCHAR', "
        "version: 'BIGINT', comment: 'VARCHAR', \"at\": 'DOUBLE'}) WHERE item_id IS NOT NULL "
        "QUALIFY row_number() OVER (PARTITION BY annotator, item_id, criterion ORDER BY \"at\" DESC) = 1")
