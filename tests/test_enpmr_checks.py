"""Each enpmr rule a schema cannot express is a named check that catches a violation."""

from __future__ import annotations

import datetime as dt

import pytest

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
    # past the minimum too: one item that says another again in other words
    items = ["Hates coriander", "Swims at dawn", "Reads crime novels", "Keeps bees", "Bakes rye bread",
             "Plays chess online", "Grows tomatoes", "Collects vinyl", "Knits scarves", "Watches birds"]
    assert distinct_preferences(Profile(**base, preferences=items), {}) == []
    repeated = distinct_preferences(Profile(**base, preferences=[*items, "Can't stand coriander"]), {})
    assert len(repeated) == 1 and "coriander" in repeated[0] and "again in other words" in repeated[0]


def _session(*user_lines):
    from schemas.enpmr import MemorySession
    turns = []
    for line in user_lines:
        turns += [{"role": "user", "content": line}, {"role": "ai", "content": "Tell me more."}]
    return MemorySession(turns=(turns * 5)[:10])


def test_a_memory_is_referred_to_by_its_details_not_its_name():
    from flows.enpmr.checks import user_reveals_memory

    memory = {"memory": {"details": "Harbour choir solo: sang the opening solo at the harbour festival "
                                    "concert in front of four hundred people"}}
    told = _session("Guess what, I sang the opening solo at the festival concert, four hundred people!")
    assert user_reveals_memory(told, memory) == []  # no name, but its details
    assert user_reveals_memory(_session("Work was fine today."), memory)
    zh = {"memory": {"details": "港口合唱独唱：在港口音乐节的开场演出中独唱，台下有四百名观众"}, "language": "zh"}
    assert user_reveals_memory(_session("你知道吗，我在音乐节开场独唱了，台下坐了四百人！"), zh) == []
    assert user_reveals_memory(_session("今天上班还行。"), zh)


def test_the_recall_limit_counts_words_in_english_and_characters_in_chinese():
    from flows.enpmr.checks import recall_length
    from memsynth.core.textmatch import length_in_words
    from schemas.enpmr import SupportDialogue

    assert length_in_words("I remember the harbour concert.") == 5
    assert length_in_words("还记得港口音乐节吗？") == 9
    assert length_in_words("还记得 Lily 的 solo 吗") == 7
    # A word as a reader counts it (a held-out acceptable turn of 49 words was read as 52).
    assert length_in_words("Mr Bennett couldn't walk; six-week plans aren't Khan's.") == 8

    def dialogue(recall):
        return SupportDialogue(turns=[{"role": "user", "content": "hi"}, {"role": "ai", "content": recall}],
                               memory_turn=2)

    assert recall_length(dialogue("word " * 50), {"recall_limit": 50, "language": "en"}) == []
    assert recall_length(dialogue("word " * 51), {"recall_limit": 50, "language": "en"})
    assert recall_length(dialogue("字" * 80), {"recall_limit": 80, "language": "zh"}) == []
    assert "80 个字" in recall_length(dialogue("字" * 81), {"recall_limit": 80, "language": "zh"})[0]


@pytest.mark.parametrize(("name", "named"), [
    ("Carol Hughes", True), ("Dr Alan Reeves", True), ("Ludwig van Beethoven", True), ("Siobhan O'Neill", True),
    ("陈立群", True), ("王阿姨", True),
    ("Mr Bennett's daughter", False), ("Ward sister on Ward 4", False), ("the consultant", False),
    ("陈大爷的女儿", False), ("3床家属", False),
])
def test_a_relationship_is_named_by_a_name_not_by_who_they_are(name, named):
    from flows.enpmr.form_checks import named_people
    from schemas.enpmr import Relationship, Relationships

    person = Relationship.model_construct(name=name, relationship_type="colleague", relationship_quality="good",
                                          occupation="nurse", characteristic="kind", date="2023-01-01")
    language = "en" if name.isascii() else "zh"
    found = list(named_people(Relationships.model_construct(items=[person]), {"language": language}))
    assert (found == []) is named, found
