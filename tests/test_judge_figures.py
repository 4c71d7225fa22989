"""The audit judge measured on the shared corpus with a strong model's verdicts (issue 51,
item 6). The verdicts in tests/data/audit_verdicts.strong-model.json were written by a strong
model acting as the judge endpoint, from the prompts `check-answers --render-audits` wrote
(messages, rules and schema, under opaque keys: never a label, an answer id or our checks).

The figures are recorded here so that a change to the audit prompt, the rules' wording or the
corpus shows up. The verdicts are the second round (2026-11-28), after the rules the first
judge over-read were reworded to what the seeds allow: acceptable answers flagged fell from
15 of 69 to 6 of 77 (the target is ≤ 5 %). Violations flagged by the judge alone: 28 of 46;
most of the rest break a rule the stage's audit is not asked about (counts, dates, spans: rules
code checks, and every violation here is caught by a check). `MISSES` lists the rules that
still flag acceptable answers.
"""

from __future__ import annotations

from memsynth.quality.answer_check import check_paths
from memsynth.quality.audit_check import audit_cases, judge_figures, read_verdicts
from tests.conftest import ROOT

ANSWERS = ROOT.parent / "shared" / "model-answers"
VERDICTS = ROOT / "tests" / "data" / "audit_verdicts.strong-model.json"

# Audited answers: (violations flagged / violations, acceptable flagged / acceptable).
RECORDED = {"audited": 123, "violations": 46, "violations_flagged": 28, "acceptable": 77, "acceptable_flagged": 6,
            "violations_caught_with_checks": 46}
# Rules whose wording the judge reads more strictly than the seed means: acceptable answers it
# flags (rule -> flagged of acceptable). The next step is the rule's line, not the judge.
MISSES = {"merge-keeps-all": (3, 4), "candidates": (1, 2), "log-realism": (1, 4), "memory-in-theme": (1, 16)}


def test_a_strong_judges_recorded_verdicts_give_the_recorded_figures():
    paths = [str(ANSWERS)]
    cases = audit_cases(paths)
    figures = judge_figures(cases, read_verdicts(VERDICTS, cases), check_paths(paths))
    assert {k: figures[k] for k in RECORDED} == RECORDED
    by_rule = {r["rule"]: (r["acceptable_flagged"], r["acceptable"]) for r in figures["rules"]}
    assert {rule: by_rule[rule] for rule in MISSES} == MISSES
    # Every violation is caught by a check or by the judge; the judge alone catches 28 of 46.
    assert figures["violations_caught_with_checks"] == figures["violations"]
