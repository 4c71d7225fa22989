"""A labelled mistake's rules, read from the prompt lines its label quotes
(memsynth.quality.label_quotes), and the figure `check-answers` prints from them."""

from __future__ import annotations

from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.quality.label_quotes import checks_only, claimed_by_checks, quoted_rule_ids


def test_a_quoted_line_gives_its_rule_ids_in_any_quote_marks_and_either_language():
    # (power's count line names one rule; preferences' line names two since preferences-as-profile)
    en = quoted_rule_ids("enpmr", "power", "en", '"both kinds mixed through the timeline": grouped')
    assert en == ["memory-counts"]
    zh = quoted_rule_ids("enpmr", "power", "zh", "「两类在时间线上穿插出现」——扎堆了")
    assert zh == ["memory-counts"]
    both_rules = quoted_rule_ids("enpmr", "preferences", "en", '"one per like or dislike": two preferences merged')
    assert both_rules == ["preferences", "preferences-as-profile"]
    # An ellipsis splits a quote into fragments, each looked up on its own.
    both = quoted_rule_ids("pal", "timeline", "zh", "“每个月不必四方面都涉及……不要写用户的性格和具体偏好”：写了性格")
    assert "timeline" in both
    assert quoted_rule_ids("enpmr", "preferences", "en", "merges two preferences") == []  # no quote, no ids
    assert quoted_rule_ids("enpmr", "preferences", "en", '"a line no prompt has"') == []


def test_only_rules_a_check_alone_enforces_are_claimed():
    assert checks_only("enpmr", ["preferences"])  # checks, no judge
    assert not checks_only("enpmr", ["eval-grades"])  # a judge criterion too
    assert not checks_only("enpmr", ["powers-progress"])  # the prompt's alone
    assert not checks_only("enpmr", [])
    answer = {"recipe": "enpmr", "stage": "power", "language": "en", "label": "violation",
              "rule": '"both kinds mixed through the timeline": grouped'}
    figures = claimed_by_checks([SimpleNamespace(**answer, id="v1", passed=False),
                                 SimpleNamespace(**answer, id="v2", passed=True),
                                 SimpleNamespace(**{**answer, "label": "acceptable"}, id="a1", passed=True)])
    assert figures == {"claimed": 2, "rejected": 1, "let_through": ["enpmr/en/power/v2"]}
    # A line that also names a rule the audit judge reads is not the checks' claim alone.
    judged = {**answer, "stage": "preferences", "rule": '"one per like or dislike": merged'}
    assert claimed_by_checks([SimpleNamespace(**judged, id="v3", passed=True)])["claimed"] == 0


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(st.characters(codec="utf-8"), max_size=6)
                | st.sampled_from(["“", "”", "\"", "「", "」", "…", "每条对应", "one per", "\ud800", "\u202e"]),
                max_size=16).map("".join))
def test_any_label_is_read_without_failing(label):
    """Any Unicode, stray or unbalanced quotes, ellipses: ids of the stage's own table, never a crash."""
    from memsynth.generation.registry import recipe_class

    table = {r.id for r in recipe_class("enpmr").rules}
    assert set(quoted_rule_ids("enpmr", "preferences", "zh", label)) <= table
