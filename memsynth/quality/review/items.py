"""What the review app shows: a recipe's review tasks, their items, and a seeded sample.

A recipe declares its tasks (`Recipe.review_tasks`); a `ReviewTask` names the items that
can be reviewed with their stratum (SQL), and turns one item into sections to read and
questions to answer. The app (memsynth/quality/review/app.py) knows nothing of any recipe: it
draws the sections, asks the questions and records the answers.
"""

from __future__ import annotations

import random
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memsynth.core.errors import MemsynthError
from memsynth.generation.audit import VERDICTS
from memsynth.generation.offers import Item, Question, ReviewTask

AUDIT_CRITERION = "audit:"  # an annotator's verdict on an audit rule: `audit:<rule id>`

COMMENT = "_comment"  # the criterion a free-text comment on an item is recorded under
APP = Path(__file__).with_name("app.py")  # the Streamlit script `memsynth review` runs
APP_SETTINGS = "MEMSYNTH_REVIEW"  # the environment variable that hands it its settings (JSON)


def stratified_sample(rows: Sequence[tuple[str, str]], size: int, seed: int) -> list[tuple[str, str]]:
    """`size` of the (item_id, stratum) rows, each stratum in proportion to its share and
    none left out while the sample has room, in a seeded order that
    alternates strata, so the first items of the sample already cover them."""
    by_stratum: dict[str, list[str]] = defaultdict(list)
    for item_id, stratum in sorted(set(rows)):
        by_stratum[stratum].append(item_id)
    size = min(size, sum(len(v) for v in by_stratum.values()))
    if size <= 0:
        return []
    rng = random.Random(seed)
    strata = sorted(by_stratum)
    total = sum(len(by_stratum[s]) for s in strata)
    quota = {s: size * len(by_stratum[s]) / total for s in strata}
    take = dict.fromkeys(strata, 0)
    for _ in range(size):  # strata not yet drawn from first, then the one furthest below its share
        s = min((s for s in strata if take[s] < len(by_stratum[s])), key=lambda s: (take[s] > 0, take[s] - quota[s], s))
        take[s] += 1
    picked = {s: rng.sample(by_stratum[s], take[s]) for s in strata}
    order: list[tuple[str, str]] = []
    for rank in range(max(take.values())):
        lane = [(picked[s][rank], s) for s in strata if rank < take[s]]
        rng.shuffle(lane)
        order.extend(lane)
    return order


class ReviewSource:
    """A dataset version opened read-only for review; `query` is safe from several threads."""

    def __init__(self, warehouse: Path, dataset: str, version: int | None = None):
        from memsynth.generation.registry import recipe_class
        from memsynth.warehouse.catalog import open_sandbox

        self.warehouse, self.dataset = Path(warehouse), dataset
        # The app reads through the same sandbox as `memsynth query`: a connection holding the
        # version's files and nothing else, whatever an item id sent by a browser contains.
        self._box, row = open_sandbox(self.warehouse, dataset, version)
        self.version: int = row["version"]
        self.recipe: str = row["recipe"]
        self.language: str = (row.get("config") or {}).get("language", "en")
        self.tasks = {t.name: t for t in recipe_class(self.recipe).review_tasks}
        self.rules = {r.id: r.rule for r in recipe_class(self.recipe).rules}
        self.has_audits = "audits" in (row.get("row_counts") or {})
        self._lock = threading.Lock()

    def task(self, name: str | None) -> ReviewTask:
        """The named task, or the recipe's first; a clear error for an unknown one."""
        if not self.tasks:
            raise MemsynthError(f"the {self.recipe} recipe declares no review task")
        if name is None:
            return next(iter(self.tasks.values()))
        if name not in self.tasks:
            raise MemsynthError(f"no review task {name!r} for {self.recipe}; choose from {', '.join(self.tasks)}")
        return self.tasks[name]

    def query(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        with self._lock:
            return self._box.query(sql, list(params))

    def sample(self, task: ReviewTask, size: int, seed: int) -> list[tuple[str, str]]:
        """The task's seeded, stratified sample: every annotator given the same task, size
        and seed sees the same items in the same order."""
        rows = [(str(r["item_id"]), str(r["stratum"])) for r in self.query(task.items_sql)]
        if not rows:
            raise MemsynthError(f"version {self.version} of {self.dataset} has no items for task {task.name!r}")
        return stratified_sample(rows, size, seed)

    def item(self, task: ReviewTask, item_id: str, stratum: str = "") -> Item:
        """The task's item, with a pass / violation question per rule an audit judge gave a
        verdict on (criterion `audit:<rule>` of the audited part), which `memsynth agreement`
        compares with the judge."""
        shown = task.show(self.query, item_id, self.language)
        asked = tuple(Question(a["item"], AUDIT_CRITERION + a["rule"], f"{a['rule']}: {self.rules.get(a['rule'], '')}",
                               VERDICTS) for a in self.audits(shown.item_id))
        return Item(shown.item_id, stratum or shown.stratum, shown.sections, shown.questions + asked)

    def audits(self, item_id: str) -> list[dict[str, Any]]:
        """The audit verdicts on the item and its parts (audited items whose key is the item's
        id or starts with it and `/`): item, stage, rule, verdict, reason, judge_model."""
        if not self.has_audits:
            return []
        return self.query("SELECT item, stage, rule, verdict, reason, judge_model FROM audits "
                          "WHERE item = ? OR starts_with(item, ?) ORDER BY item, rule", item_id, item_id + "/")

    def close(self) -> None:
        self._box.close()
