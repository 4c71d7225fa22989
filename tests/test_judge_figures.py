"""The audit judge measured on the shared corpus with a strong model's verdicts (issue 51,
item 6). The verdicts in tests/data/audit_verdicts.strong-model.json were written by a strong
model acting as the judge endpoint, from the prompts `check-answers --render-audits` wrote
(messages, rules and schema, under opaque keys: never a label, an answer id or our checks).

The figures are recorded here so that a change to the audit prompt, the rules' wording or the
corpus shows up; they are short of the issue's targets (≥ 90 % of violations flagged, ≤ 5 % of
acceptable answers flagged): see `MISSES` and the issue's note.
"""

from __future__ import annotations

from memsynth.quality.answer_check import check_paths
from memsynth.quality.audit_check import audit_cases, judge_figures, read_verdicts
from tests.conftest import ROOT

ANSWERS = ROOT.parent / "shared" / "model-answers"
VERDICTS = ROOT / "tests" / "data" / "audit_verdicts.strong-model.json"

# Audited answers: (violations flagged / violations, acceptable flagged / acceptable).
RECORDED = {"audited": 110, "violations": 41, "violations_flagged": 30, "acceptable": 69, "acceptable_flagged": 15,
            "violations_caught_with_checks": 41}
# Rules whose wording the judge reads more strictly than the seed means: acceptable answers it
# flags (rule -> flagged of acceptable). The next step is the rule's line, not the judge.
MISSES = {"session-invents-nothing": (4, 4), "merge-keeps-all": (3, 4), "preferences-personal": (2, 2),
          "query-no-quote": (2, 4)}


def test_a_strong_judges_recorded_verdicts_give_the_recorded_figures():
    paths = [str(ANSWERS)]
    cases = audit_cases(paths)
    figures = judge_figures(cases, read_verdicts(VERDICTS, cases), check_paths(paths))
    assert {k: figures[k] for k in RECORDED} == RECORDED
    by_rule = {r["rule"]: (r["acceptable_flagged"], r["acceptable"]) for r in figures["rules"]}
    assert {rule: by_rule[rule] for rule in MISSES} == MISSES
    # Every violation is caught by a check or by the judge; the judge alone catches 73 %.
    assert figures["violations_caught_with_checks"] == figures["violations"]
