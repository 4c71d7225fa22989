"""A release states its measured error rate: the Wilson interval against known values, the
gold-label rules' rates read from a version's audits, and `release create` refusing a
version whose upper bound is over `quality.max_violation_rate` unless told to accept it."""

from __future__ import annotations

import json
import shutil

import duckdb
import pytest
from scipy.stats import binomtest

from memsynth.core.errors import MemsynthError
from memsynth.release.error_rates import error_rates, refuse_over_limit, wilson_interval
from tests.conftest import cli_here, cli_json_here, memsynth_cli

# Hand-checked: Wilson (1927) 95 % intervals, z = 1.96 (e.g. Newcombe 1998, Table I: 0/10 → 0–0.2775,
# 1/10 → 0.0179–0.4042, 81/263 → 0.2553–0.3662).
KNOWN = [((0, 10), (0.0, 0.2775)), ((1, 10), (0.0179, 0.4042)), ((81, 263), (0.2553, 0.3662)),
         ((0, 20), (0.0, 0.1611)), ((10, 10), (0.7225, 1.0))]


@pytest.mark.parametrize(("counts", "bounds"), KNOWN)
def test_wilson_matches_the_published_intervals(counts, bounds):
    low, high = wilson_interval(*counts)
    assert (round(low, 4), round(high, 4)) == pytest.approx(bounds, abs=1e-4)


@pytest.mark.parametrize("n", [1, 7, 50, 400, 3000])
def test_wilson_matches_scipy(n):
    for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
        ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="wilson")
        assert wilson_interval(k, n) == pytest.approx((ci.low, ci.high), abs=1e-9)


def test_wilson_refuses_impossible_counts_and_says_nothing_of_an_empty_sample():
    assert wilson_interval(0, 0) == (0.0, 1.0)
    for bad in ((3, 2), (-1, 5)):
        with pytest.raises(ValueError):
            wilson_interval(*bad)


def _version(rows):
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS lake")
    con.execute("CREATE TABLE lake.audits (item VARCHAR, persona_id VARCHAR, stage VARCHAR, rule VARCHAR, "
                "verdict VARCHAR, reason VARCHAR, judge_model VARCHAR, gold BOOLEAN)")
    con.executemany("INSERT INTO lake.audits VALUES (?, 'p', ?, ?, ?, 'r', ?, ?)", rows)
    return con


def test_rates_per_gold_rule_and_the_refusal():
    rows = [(f"d{i}/dialogue", "enpmr.support_dialogue", "recall-grounded", "violation" if i < 2 else "pass",
             "judge-m", True) for i in range(200)]
    rows += [(f"d{i}/dialogue", "enpmr.support_dialogue", "no-negatives", "pass", "judge-m", True) for i in range(200)]
    rows += [(f"m{i}/session", "enpmr.memory_session", "session-reveals", "violation", "judge-m", False)
             for i in range(5)]  # not gold: not on the card
    rates = error_rates(_version(rows), "enpmr", {"quality": {"max_violation_rate": 0.05}})
    by_rule = {r.rule: r for r in rates.rules}
    assert set(by_rule) == {"recall-grounded", "no-negatives"}
    r = by_rule["recall-grounded"]
    assert (r.n, r.violations, r.judge_models) == (200, 2, ("judge-m",))
    assert (r.low, r.high) == pytest.approx(wilson_interval(2, 200))
    assert "details" in r.text  # the rule's own line from the rules table
    assert rates.over == ()
    refuse_over_limit(rates)  # within the limit: released
    strict = error_rates(_version(rows), "enpmr", {"quality": {"max_violation_rate": 0.02}})
    assert [o.rule for o in strict.over] == ["recall-grounded"]
    with pytest.raises(MemsynthError, match=r"recall-grounded .*over quality.max_violation_rate 2.0%"):
        refuse_over_limit(strict)
    refuse_over_limit(error_rates(_version(rows), "enpmr", {"quality": {"max_violation_rate": 0.02}}, accept=True))
    # A version without audits (older, or imported) states no rate and refuses nothing.
    con = duckdb.connect()
    con.execute("ATTACH ':memory:' AS lake")
    none = error_rates(con, "stratmem", {})
    assert none.rules == () and none.max_rate == 0.05
    refuse_over_limit(none)


@pytest.mark.xdist_group("enpmr_build")
def test_release_create_refuses_an_unproven_version_and_the_card_says_when_accepted(quickstart_build, tmp_path):
    warehouse = tmp_path / "wh"
    shutil.copytree(quickstart_build[0], warehouse)
    out = tmp_path / "rel"
    args = ("release", "create", "--dataset", "quickstart", "--tag", "v1.0.0", "--out", str(out),
            "--warehouse", str(warehouse))
    refused = memsynth_cli(*args, "--format", "json")  # no progress lines: the error alone
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.count("\n") == 1 and "quality.max_violation_rate 5.0%" in refused.stderr, refused.stderr
    assert "--accept-violation-rate" in refused.stderr and "Traceback" not in refused.stderr
    assert not out.exists()  # nothing half-written

    summary = cli_json_here(*args, "--accept-violation-rate", "--format", "json")
    gold = {r["rule"]: r for r in summary["error_rates"]["rules"]}
    assert set(gold) >= {"recall-grounded", "scene-fits-target"} and summary["error_rates"]["accepted_over_limit"]
    card = (out / "quickstart-v1.0.0" / "README.md").read_text(encoding="utf-8")
    assert "## Measured error rates of the gold labels" in card and "**Released over the limit.**" in card
    r = gold["recall-grounded"]
    assert f"| {r['n']} | {r['violations']} | {r['rate']:.1%} | {r['low']:.1%} – {r['high']:.1%} |" in card
    # The seed's own figures, stated as what they are.
    assert "90 %, 95 % and 85 %" in card and "agreement between the annotators" in card
    manifest = json.loads((out / "quickstart-v1.0.0" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["error_rates"]["over_limit"]
    assert cli_here("release", "verify", str(out / "quickstart-v1.0.0"))[0] == 0
