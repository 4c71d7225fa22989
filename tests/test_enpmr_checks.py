"""Each enpmr rule a schema cannot express is a named check that catches a violation."""

from __future__ import annotations

import datetime as dt

from flows.enpmr import history_window
from flows.enpmr.checks import distinct_preferences, distinct_themes, enough_themes, theme_dates_in_window
from schemas.enpmr import LifeTheme, LifeThemes, Profile

VARS = {"window_start": "2019-12-02", "reference_date": "2024-12-02", "min_themes": 10}


def _themes(dates=None, names=None, n=10):
    dates = dates or ["2021-01-01"] * n
    names = names or [f"theme {i}" for i in range(n)]
    return LifeThemes(themes=[LifeTheme(theme=t, description="d", start_date=d)
                              for t, d in zip(names, dates)])


def test_history_window_is_five_years():
    assert history_window(dt.date(2024, 12, 2)) == (dt.date(2019, 12, 2), dt.date(2024, 12, 2))
    assert history_window(dt.date(2024, 2, 29))[0] == dt.date(2019, 2, 28)


def test_theme_dates_outside_the_window_are_caught():
    ok = _themes()
    assert theme_dates_in_window(ok, VARS) == []
    early = _themes(dates=["2018-05-01"] + ["2021-01-01"] * 9)
    late = _themes(dates=["2025-01-01"] + ["2021-01-01"] * 9)
    assert "outside" in theme_dates_in_window(early, VARS)[0]
    assert len(theme_dates_in_window(late, VARS)) == 1


def test_repeated_theme_is_caught():
    names = [f"t{i}" for i in range(9)] + ["T0 "]
    problems = distinct_themes(_themes(names=names), VARS)
    assert len(problems) == 1 and "repeats" in problems[0]


def test_too_few_themes_for_the_config_is_caught():
    assert enough_themes(_themes(), {**VARS, "min_themes": 12})
    assert enough_themes(_themes(), VARS) == []


def test_duplicate_preferences_are_caught():
    base = dict(name="A", age=30, gender="f", occupation="o", education="e",
                personality=["a", "b", "c"], habits=["a", "b", "c"], social=["a", "b"],
                emotional_pattern=["a", "b"], goals=["a", "b"], communication_style=["a", "b"])
    good = Profile(**base, preferences=[f"likes {i}" for i in range(10)])
    bad = Profile(**base, preferences=["likes tea"] * 10)
    assert distinct_preferences(good, {}) == []
    assert "distinct" in distinct_preferences(bad, {})[0]
