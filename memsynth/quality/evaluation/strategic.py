"""StratMem-Bench's metrics of strategic memory use (seed 002 §4.1–4.3).

`used` holds the judge's verdict per memory of an instance's pool, by role (must / nice /
irr). ρ_k is the share of role-k memories used (Eq. 3); None when the pool has none.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

ROLES = ("must", "nice", "irr")
SCENARIOS = {"A": "must-only", "B": "nice-only", "C": "must+nice"}


def majority(votes: Sequence[bool], needed: int = 2) -> bool:
    """A memory counts as used when at least `needed` judge runs say so (2 of 3 in §5.3)."""
    return sum(bool(v) for v in votes) >= needed


def usage_ratio(used: Sequence[bool]) -> float | None:
    """ρ: the share of a role's memories the response used; None for an empty role."""
    return sum(bool(u) for u in used) / len(used) if used else None


def ratios(used: Mapping[str, Sequence[bool]]) -> dict[str, float | None]:
    """ρ for each role."""
    return {role: usage_ratio(used.get(role, ())) for role in ROLES}


def scenario(used: Mapping[str, Sequence[bool]]) -> str:
    """A (must-only), B (nice-only) or C (must+nice), from which roles the pool holds."""
    has_must, has_nice = bool(used.get("must")), bool(used.get("nice"))
    if has_must and has_nice:
        return "C"
    if has_nice:
        return "B"
    if has_must:
        return "A"
    raise ValueError("a pool with neither must nor nice memories has no scenario")


def smc(used: Mapping[str, Sequence[bool]]) -> int:
    """SMC_i: every must memory used (when there are any), at least one nice memory used
    (when there are any), and no irr memory used."""
    rho = ratios(used)
    kind = scenario(used)
    no_irr = not rho["irr"]  # None (no irr in the pool) or 0
    must_ok = rho["must"] == 1
    nice_ok = (rho["nice"] or 0) > 0
    passed = {"A": must_ok, "B": nice_ok, "C": must_ok and nice_ok}[kind]
    return int(passed and no_irr)


def must_pass(used: Mapping[str, Sequence[bool]]) -> bool:
    """In I_must_pass: a nice memory is available and every must memory (if any) was used.

    Must-only pools are outside it: PES asks whether nice memories were added, and they
    have none to add.
    """
    rho = ratios(used)
    return rho["nice"] is not None and (rho["must"] is None or rho["must"] == 1)


def pes(instances: Sequence[Mapping[str, Sequence[bool]]]) -> float | None:
    """Proactive Enrichment Score (Eq. 6): over I_must_pass, the share using a nice memory."""
    chosen = [ratios(u)["nice"] for u in instances if must_pass(u)]
    return sum(1 for r in chosen if r and r > 0) / len(chosen) if chosen else None


def cir(instances: Sequence[Mapping[str, Sequence[bool]]]) -> float | None:
    """Conditional Irrelevance Rate (Eq. 7): over pools holding a nice memory, the share
    using an irr memory."""
    chosen = [ratios(u)["irr"] for u in instances if u.get("nice")]
    return sum(1 for r in chosen if r and r > 0) / len(chosen) if chosen else None


def smc_table(instances: Sequence[Mapping[str, Sequence[bool]]]) -> dict[str, float | None]:
    """SMC per scenario and overall; overall is the mean over every instance, which is the
    per-scenario figures weighted by their counts (as Table 2's "All")."""
    by: dict[str, list[int]] = {"A": [], "B": [], "C": []}
    for u in instances:
        by[scenario(u)].append(smc(u))
    out: dict[str, float | None] = {SCENARIOS[k]: (sum(v) / len(v) if v else None) for k, v in by.items()}
    every = [s for v in by.values() for s in v]
    out["all"] = sum(every) / len(every) if every else None
    return out
