"""What a release states of its gold labels' error: per gold-label rule, the audited violation
rate with its 95 % Wilson interval, the sample size and the judge model (the `audits` table
of the version, memsynth.generation.audit), and whether a rule's upper bound passes
`quality.max_violation_rate`."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import duckdb

from memsynth.core.errors import MemsynthError

Z95 = 1.959963984540054  # the standard normal's 97.5th percentile: a two-sided 95 % interval
DEFAULT_MAX_VIOLATION_RATE = 0.05


def wilson_interval(violations: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion `violations / n` (Wilson 1927); (0, 1) for n = 0.

    Unlike the normal approximation it stays inside [0, 1] and is not zero-width at 0 of n:
    0 violations in 20 items still allows a rate up to about 16 %."""
    if n < 0 or not 0 <= violations <= n:
        raise ValueError(f"need 0 <= violations <= n, got {violations} of {n}")
    if n == 0:
        return 0.0, 1.0
    p = violations / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class RuleRate:
    """One gold-label rule's audited violation rate."""

    rule: str
    stage: str
    text: str  # the rule, in a line (the recipe's rules table)
    n: int  # audited items
    violations: int
    low: float
    high: float
    judge_models: tuple[str, ...]

    @property
    def rate(self) -> float:
        return self.violations / self.n if self.n else 0.0

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "rate": self.rate, "judge_models": list(self.judge_models)}


@dataclass(frozen=True)
class ErrorRates:
    """The card's error-rate section: the rules' rates, the limit, and what went over it."""

    rules: tuple[RuleRate, ...]
    max_rate: float
    accepted: bool  # released although a rule's upper bound is over the limit
    seed_validation: tuple[str, ...]
    gold_stages: tuple[str, ...]

    @property
    def over(self) -> tuple[RuleRate, ...]:
        return tuple(r for r in self.rules if r.high > self.max_rate)

    def to_json(self) -> dict[str, Any]:
        return {"max_violation_rate": self.max_rate, "accepted_over_limit": self.accepted and bool(self.over),
                "gold_stages": list(self.gold_stages), "rules": [r.to_json() for r in self.rules],
                "over_limit": [r.rule for r in self.over]}


def _audit_rows(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, int, int, str]]:
    """(stage, rule, items, violations, judge models) of the gold audits; none without the table."""
    present = con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake' "
                          "AND table_name = 'audits'").fetchone()[0]
    if not present:
        return []
    return con.execute(
        "SELECT stage, rule, count(DISTINCT item), count(DISTINCT item) FILTER (WHERE verdict = 'violation'), "
        "string_agg(DISTINCT judge_model, ',' ORDER BY judge_model) FROM lake.audits WHERE gold "
        "GROUP BY stage, rule ORDER BY stage, rule").fetchall()


def error_rates(con: duckdb.DuckDBPyConnection, recipe: str, config: dict[str, Any], *,
                accept: bool = False) -> ErrorRates:
    """The version's gold-label rules' audited rates (`con` holds the version as `lake`)."""
    from memsynth.generation.registry import audit_plan, recipe_class  # recipes live above the engine

    plan = audit_plan(recipe)
    texts = {r.id: r.rule for r in recipe_class(recipe).rules}
    limit = float((config.get("quality") or {}).get("max_violation_rate", DEFAULT_MAX_VIOLATION_RATE))
    rules = []
    for stage, rule, n, violations, models in _audit_rows(con):
        low, high = wilson_interval(int(violations), int(n))
        rules.append(RuleRate(rule, stage, texts.get(rule, ""), int(n), int(violations), low, high,
                              tuple(m for m in (models or "").split(",") if m)))
    gold = tuple(f"{recipe}.{s}" for s in plan.gold) if plan is not None else ()
    return ErrorRates(tuple(rules), limit, accept, plan.seed_validation if plan is not None else (), gold)


def refuse_over_limit(rates: ErrorRates) -> None:
    """One line, when a rule's upper bound is over the limit and the release was not told to accept it."""
    over = rates.over
    if not over or rates.accepted:
        return
    first = over[0]
    more = f" (and {len(over) - 1} more rule(s))" if len(over) > 1 else ""
    raise MemsynthError(
        f"rule {first.rule} ({first.stage}): the 95 % upper bound of its audited violation rate is "
        f"{first.high:.1%} ({first.violations} of {first.n} items), over quality.max_violation_rate "
        f"{rates.max_rate:.1%}{more}; audit more items or pass --accept-violation-rate to release it anyway")
