"""The audit judge measured on the shared corpus with a strong model's verdicts (issue 51,
item 6). The verdicts in tests/data/audit_verdicts.strong-model.json were written by a strong
model acting as the judge endpoint, from the prompts `check-answers --render-audits` wrote
(messages, rules and schema, under opaque keys: never a label, an answer id or our checks).

The corpus labels each mistake in prose; tests/data/model_answers.label_rules.json reads each
label of an audited stage's mistake into the rule ids of our tables (checked below against the
rule tags of the prompt lines the label quotes). With it the figures say what they should:

- per rule, the violations *labelled* with it, and whether the judge flagged that rule on them;
- the judge's recall on the violations of rules its audit covers (in scope), apart from the
  violations of check-only rules (counts, dates, spans), which it is never asked about;
- every violation, flagged on any rule, and by the checks or the judge.

Verdicts of the fourth round (2026-11-28, after every stage's audit came to read every rule its
prompt lines name, each shown with those lines): four fresh strong-model sessions judged the 183
audit prompts (the persona and life_themes ones again, by a fifth, after their prompts changed),
and a sixth the 22 of the evaluation's replies once those were audited too. In scope the judge
flags the labelled rule on 60 of 61, and the 61st under another rule (a start date in
MM/DD/YYYY, read as life-themes' rather than the fields'); of the 13 check-only violations it
flags 2, and the checks reject 11 (the other two break irrelevant-suppressed, which the
benchmark's own usage judge measures). Of all 76 violations the checks or the judge catch 75.
Acceptable answers flagged: 17 of 131. Most quote a real break of a line the audit now shows:
the corpus was written to older prompts (three "one-sentence" theme descriptions that say what
happened and not why it mattered; terse field descriptions; a log past its type's format), and
the earlier rounds' debatable merges stay (below). On our own held-out rounds, written to the
current prompts (tests/test_heldout_answers.py), the judge flags 2 and 5 of 65.

Earlier rounds: two rules were reworded after a judge read them more narrowly than the seed:
log-realism accepts the workplace equipment the user operates, as PAL-Set's released logs do,
and memory-in-theme says a theme is the part of life its description covers. Merges that drop or
change a stated fact ("gave her courage to embrace herself", "2024年3月前" written "2024年3月",
a leader "arranging" a trip no candidate links to them) and "针灸或正规推拿" (two therapies a user
may feel differently about) are flagged, and their label is debatable rather than the judge wrong.
"""

from __future__ import annotations

import functools
import json
import re
from collections import defaultdict
from pathlib import Path

from memsynth.generation.registry import audit_rules, recipe_class
from memsynth.generation.rules import prompt_lines
from memsynth.quality.answer_check import check_paths
from memsynth.quality.audit_check import audit_cases, judge_figures, read_label_rules, read_verdicts
from tests.conftest import ROOT

ANSWERS = ROOT.parent / "shared" / "model-answers"
VERDICTS = ROOT / "tests" / "data" / "audit_verdicts.strong-model.json"
LABEL_RULES = ROOT / "tests" / "data" / "model_answers.label_rules.json"

RECORDED = {"audited": 205, "violations": 74, "violations_flagged": 63, "violations_caught_with_checks": 73,
            "acceptable": 131, "acceptable_flagged": 17, "unlabelled": 0,
            "in_scope": 61, "in_scope_flagged_rule": 60, "in_scope_flagged": 61,
            "check_only": 13, "check_only_flagged": 2, "check_only_rejected": 11,
            "all_violations": 76, "all_rejected": 70, "all_caught": 75, "all_unaudited": 2}
# Per audited rule with labelled violations in scope: (flagged on the rule, in scope).
RECALL = {"blri": (2, 2), "candidates": (1, 1), "choices-follow-preferences": (1, 1), "choices-verbatim": (2, 2),
          "direct-rejection": (1, 1), "distinct-memories": (2, 2), "eval-detect": (2, 2), "eval-grades": (2, 2),
          "eval-miq": (2, 2), "eval-proposal": (1, 1), "eval-reply": (3, 3), "eval-restatement": (1, 1),
          "eval-restatement-grade": (1, 1), "eval-selection": (1, 1), "experience-ends": (1, 1), "fact-form": (1, 1),
          "fact-names-person": (2, 2), "life-themes": (1, 1), "life-themes-fields": (0, 1), "logs": (3, 3),
          "memory-in-theme": (1, 1), "merge-keeps-all": (2, 2), "needs-on-topic": (1, 1), "no-early-recall": (1, 1),
          "no-negatives": (1, 1), "persona-form": (1, 1), "persona-from-sessions": (2, 2), "persona-prose": (2, 2),
          "preference-form": (1, 1), "preferences": (2, 2), "preferences-hidden": (1, 1),
          "preferences-personal": (1, 1), "profile-preferences": (2, 2), "profiles": (1, 1), "query-no-quote": (2, 2),
          "query-to-character": (2, 2), "relationship-fields": (1, 1), "requirement-types": (1, 1),
          "response-adds-nothing": (1, 1), "roles": (2, 2), "scene-need": (2, 2), "situations": (1, 1),
          "timeline": (1, 1), "user-never-mentions": (3, 3), "vague-query": (1, 1)}
# Rules that flag acceptable answers: rule -> (flagged, acceptable answers audited on it).
WRONGLY_FLAGGED = {"candidates": (1, 2), "eval-restatement-grade": (1, 2), "fact-form": (1, 8),
                   "highlight-fields": (1, 4), "logs": (2, 4), "merge-keeps-all": (3, 4), "power-fields": (1, 4),
                   "preference-form": (1, 2), "profile-facts": (1, 4), "query-no-quote": (1, 4),
                   "relationship-fields": (1, 4), "session-invents-nothing": (1, 4), "theme-description": (3, 4)}


@functools.cache
def _cases() -> tuple:
    return tuple(audit_cases([str(ANSWERS)]))


@functools.cache
def _figures() -> dict:
    paths = [str(ANSWERS)]
    cases = _cases()
    return judge_figures(cases, read_verdicts(VERDICTS, cases), check_paths(paths), read_label_rules(LABEL_RULES, cases))


def test_a_strong_judges_recorded_verdicts_give_the_recorded_figures():
    figures = _figures()
    assert {k: figures[k] for k in RECORDED} == RECORDED
    rows = {r["rule"]: r for r in figures["rules"]}
    assert {r: (row["labelled_flagged"], row["labelled_in_scope"]) for r, row in rows.items()
            if row["labelled_in_scope"]} == RECALL
    assert {r: (row["acceptable_flagged"], row["acceptable"]) for r, row in rows.items()
            if row["acceptable_flagged"]} == WRONGLY_FLAGGED
    # A rule's row counts only the violations labelled with it: distinct-memories is audited on six
    # enpmr stages, and none of their mistakes breaks it.
    assert (rows["distinct-memories"]["labelled"], rows["distinct-memories"]["acceptable"]) == (2, 24)
    assert rows["memory-counts"]["stages"] == [] and rows["memory-counts"]["labelled"] == 6  # a check counts
    assert figures["missed"] == ["enpmr/en/life_themes/life_themes-en-v1 (life-themes-fields)"]
    assert len(figures["wrongly_flagged"]) == figures["acceptable_flagged"]


# The same 205 prompts rendered again from today's audit plans (fourteenth session) and judged by
# four fresh sessions: the judge flags more of the corpus's acceptable answers, 36 of 131, as its
# answers were written to older prompts than the audit now shows ("why it mattered" in every
# highlight, one operation a log, a diagnosis the records lack in an evaluation). On the held-out
# rounds written to today's prompts, r24 and r25, it flags 1 of 65 each.
CURRENT_PROMPTS = ROOT / "tests" / "data" / "audit_verdicts.strong-model.current-prompts.json"


def test_a_second_judging_at_todays_audit_prompts_gives_its_recorded_figures():
    cases = _cases()
    figures = judge_figures(cases, read_verdicts(CURRENT_PROMPTS, cases), check_paths([str(ANSWERS)]),
                            read_label_rules(LABEL_RULES, cases))
    assert {k: figures[k] for k in ("violations", "violations_flagged", "violations_caught_with_checks",
                                    "acceptable", "acceptable_flagged")} == {
        "violations": 74, "violations_flagged": 67, "violations_caught_with_checks": 73, "acceptable": 131,
        "acceptable_flagged": 36}


def test_the_figures_agree_with_a_recount_from_the_raw_files():
    """The same recall, counted from the JSON files and the audit plans without the scoring code."""
    verdicts = json.loads(VERDICTS.read_text(encoding="utf-8"))
    labels = json.loads(LABEL_RULES.read_text(encoding="utf-8"))
    by_id = {c.qualified_id: c for c in _cases()}
    count: dict[str, int] = defaultdict(int)
    for name, named in labels.items():
        case = by_id[name]
        audited = set(audit_rules(case.recipe)[case.stage])
        flags = {rule for rule, v in verdicts.get(case.key, {}).items()
                 if (v["verdict"] if isinstance(v, dict) else v) == "violation"}
        scope = "in_scope" if audited & set(named) else "check_only"
        count[scope] += 1
        count[scope + "_flagged"] += bool(flags)
        count[scope + "_flagged_rule"] += bool(flags & audited & set(named))
    figures = _figures()
    assert (count["in_scope"], count["in_scope_flagged_rule"], count["in_scope_flagged"]) == (
        figures["in_scope"], figures["in_scope_flagged_rule"], figures["in_scope_flagged"])
    assert (count["check_only"], count["check_only_flagged"]) == (figures["check_only"], figures["check_only_flagged"])


_QUOTED = re.compile(r"'([^']{3,})'|\"([^\"]{3,})\"|“([^”]{2,})”|‘([^’]{2,})’")


def _norm(text: str) -> str:
    return re.sub(r"[\s`]+", " ", text).strip().lower()


def test_every_audited_mistake_is_read_into_rule_ids_its_prompt_lines_support():
    cases = [c for c in _cases() if c.label == "violation"]
    labels = json.loads(LABEL_RULES.read_text(encoding="utf-8"))
    assert sorted(labels) == sorted(c.qualified_id for c in cases)  # every one, none else
    read_label_rules(LABEL_RULES, cases)  # every id is in its recipe's table
    prose = {}
    for path in ANSWERS.rglob("*.json"):
        data = json.loads(path.read_text(encoding="utf-8"))
        prose |= {f"{data['recipe']}/{data['language']}/{data['stage']}/{a['id']}": a["rule"] for a in data["answers"]}
    checked = 0
    for case in cases:
        # Where the label quotes words of a tagged prompt line of its stage, our ids include one
        # of that line's (a line may state several rules; the label names which).
        lines = [line for t in Path(ROOT, "prompts", case.recipe).glob(f"{case.stage}*.j2")
                 for line in prompt_lines(t.read_text(encoding="utf-8")) if line.ids]
        quoted = [_norm(piece) for m in _QUOTED.finditer(prose[case.qualified_id])
                  for piece in re.split(r"…|\.\.\.", next(g for g in m.groups() if g)) if len(piece.strip()) >= 3]
        tagged = {i for q in quoted for line in lines if q in _norm(line.text) for i in line.ids}
        if tagged:
            checked += 1
            assert tagged & set(labels[case.qualified_id]), (case.qualified_id, tagged)
        known = {r.id for r in recipe_class(case.recipe).rules}
        assert set(labels[case.qualified_id]) <= known
    assert checked >= 15  # the cross-check covers most labels, not a lucky few
