"""Our held-out answers (tests/data/heldout/README.md): a strong model's acceptable answers to
every stage prompt pass, and no violation the checks once rejected is let through again (a
check that loosens shows here as the answer it now misses)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsynth.quality.answer_check import check_paths

HELDOUT = Path(__file__).resolve().parent / "data" / "heldout"


@pytest.mark.parametrize("round_", ["r1", "r2"])
def test_acceptable_answers_pass_and_rejected_violations_stay_rejected(round_):
    verdicts = check_paths([HELDOUT / round_])
    acceptable = [v for v in verdicts if v.label == "acceptable"]
    assert len(acceptable) == 67 and [v.id for v in acceptable if not v.passed] == []
    rejected = {f"{v.recipe}/{v.language}/{v.stage}/{v.id}" for v in verdicts
                if v.label == "violation" and not v.passed}
    pinned = set(json.loads((HELDOUT / "rejected.json").read_text(encoding="utf-8"))[round_])
    assert sorted(pinned - rejected) == []
