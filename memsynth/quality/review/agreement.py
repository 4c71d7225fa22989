"""Agreement between annotators, and between an LLM judge and each of them.

Per criterion: the share of each value, Cohen's κ for every pair of annotators on the
items both judged, Fleiss' κ over the items every annotator judged (three or more), and
Cohen's κ between the judge and each annotator — the figures the seed papers report
(ENPMR-Bench's two annotators, StratMem-Bench's Fleiss' κ 0.81 and judge κ 0.96).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from itertools import combinations
from typing import Any

from memsynth.quality.review.items import AUDIT_CRITERION
from memsynth.warehouse.annotations import Judgment


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's κ of two raters' labels for the same items (None: undefined, e.g. no items,
    or both raters always giving one and the same label)."""
    if len(a) != len(b):
        raise ValueError("both raters must label the same items")
    n = len(a)
    if not n:
        return None
    observed = sum(x == y for x, y in zip(a, b)) / n
    count_a, count_b = Counter(a), Counter(b)
    expected = sum(count_a[k] * count_b[k] for k in count_a) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def fleiss_kappa(ratings: Sequence[Sequence[str]]) -> float | None:
    """Fleiss' κ: `ratings[i]` holds every rater's label for item i (the same number of raters
    per item, at least two). None when undefined."""
    if not ratings:
        return None
    raters = len(ratings[0])
    if raters < 2 or any(len(r) != raters for r in ratings):
        raise ValueError("every item needs the same number of raters, at least two")
    items = len(ratings)
    totals: Counter[str] = Counter()
    agreement = 0.0
    for labels in ratings:
        counts = Counter(labels)
        totals.update(counts)
        agreement += (sum(c * c for c in counts.values()) - raters) / (raters * (raters - 1))
    observed = agreement / items
    expected = sum((c / (items * raters)) ** 2 for c in totals.values())
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def agreement(judgments: Sequence[Judgment], judge: Sequence[Judgment] = ()) -> list[dict[str, Any]]:
    """Per criterion: items, annotators, value shares, pairwise Cohen's κ, Fleiss' κ (three or
    more annotators) and the judge's Cohen's κ with each annotator."""
    by_criterion: dict[str, dict[str, dict[str, str]]] = defaultdict(lambda: defaultdict(dict))
    for j in judgments:
        if not j.criterion.startswith("_"):  # "_comment" and the like are notes, not labels
            by_criterion[j.criterion][j.annotator][j.item_id] = j.value
    judged: dict[str, dict[str, str]] = defaultdict(dict)
    for j in judge:
        judged[j.criterion][j.item_id] = j.value
    out = []
    for criterion in sorted(by_criterion):
        people = by_criterion[criterion]
        names = sorted(people)
        values = Counter(v for labels in people.values() for v in labels.values())
        total = sum(values.values())
        row: dict[str, Any] = {
            "criterion": criterion, "annotators": names,
            "items": len({item for labels in people.values() for item in labels}),
            "shares": {v: round(n / total, 4) for v, n in sorted(values.items())},
            "cohen": {}, "fleiss": None, "fleiss_items": 0, "judge": {},
        }
        for x, y in combinations(names, 2):
            both = sorted(people[x].keys() & people[y].keys())
            row["cohen"][f"{x}~{y}"] = _round(cohen_kappa([people[x][i] for i in both], [people[y][i] for i in both]))
        if len(names) >= 3:
            everyone = sorted(set.intersection(*(set(people[n]) for n in names)))
            row["fleiss_items"] = len(everyone)
            row["fleiss"] = _round(fleiss_kappa([[people[n][i] for n in names] for i in everyone]))
        model = judged.get(criterion, {})
        for name in names if model else ():
            both = sorted(people[name].keys() & model.keys())
            row["judge"][name] = {"items": len(both), "kappa": _round(cohen_kappa(
                [model[i] for i in both], [people[name][i] for i in both]))}
        out.append(row)
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def dataset_agreement(warehouse: Any, dataset: str, version: int | None = None) -> dict[str, Any]:
    """`agreement` over a dataset's recorded judgments, with its recipe's LLM judge (the
    version's own labels, where the recipe declares them) as the comparison."""
    from memsynth.generation.registry import recipe_class
    from memsynth.warehouse.annotations import AnnotationLog
    from memsynth.warehouse.catalog import open_version, run_query
    from memsynth.warehouse.ducklake import dataset_dir

    con, row = open_version(warehouse, dataset, version)
    con.close()
    judge: list[Judgment] = []
    sql = recipe_class(row["recipe"]).judge_labels
    if sql:
        _, rows, _ = run_query(warehouse, dataset, sql, row["version"])
        judge = [Judgment(item_id=str(i), criterion=c, value=str(v), annotator="llm-judge") for i, c, v in rows]
    judge += audit_judgments(warehouse, dataset, row)
    judgments = AnnotationLog(dataset_dir(warehouse, dataset)).judgments()
    return {"dataset": dataset, "version": row["version"], "recipe": row["recipe"],
            "judgments": len(judgments), "judge_labels": len(judge), "criteria": agreement(judgments, judge)}




def audit_judgments(warehouse: Any, dataset: str, version: dict[str, Any]) -> list[Judgment]:
    """The version's audit verdicts as the judge's labels (criterion `audit:<rule>` of the
    audited item), which annotators judge again in `memsynth review`; none without audits
    (a version built before they existed)."""
    from memsynth.warehouse.catalog import run_query

    if "audits" not in (version.get("row_counts") or {}):
        return []
    _, rows, _ = run_query(warehouse, dataset, "SELECT item, rule, verdict FROM audits", version["version"])
    return [Judgment(item_id=str(i), criterion=AUDIT_CRITERION + str(r), value=str(v), annotator="llm-judge")
            for i, r, v in rows]
