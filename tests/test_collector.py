"""The garbage collector's settings for a build: applied inside, put back after."""

from __future__ import annotations

import gc

from memsynth.build.collector import YOUNG_THRESHOLD, collector_for_build


def test_a_build_freezes_what_exists_and_collects_less_often_then_puts_both_back():
    before = gc.get_threshold()
    frozen = gc.get_freeze_count()
    with collector_for_build():
        assert gc.get_threshold()[0] == YOUNG_THRESHOLD > before[0]
        assert gc.get_freeze_count() > frozen
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_the_settings_are_put_back_when_the_build_fails():
    before = gc.get_threshold()
    try:
        with collector_for_build():
            raise RuntimeError("the build failed")
    except RuntimeError:
        pass
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
