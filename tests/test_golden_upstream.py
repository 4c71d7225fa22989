"""The golden fixtures obey their own recipe: every fixture value that stands for an upstream
stage's answer (a profile, preferences, a framework, a persona …) passes that stage's schema and
checks, and the prompt's own lines the checks read more loosely (2-3 sentences a profile field,
4-5 statements a preference, "call the user 'the user'")."""

from __future__ import annotations

import pytest
from pydantic import TypeAdapter, ValidationError

from memsynth.quality.mutants import Runner
from memsynth.quality.mutants.text import split_sentences, statements
from tests.golden import LANGUAGES
from tests.golden.fixtures import pal as pal_fixture
from tests.golden.upstream import PARTIAL, cases

RUNNER = Runner()
CASES = [c for language in LANGUAGES for c in cases(language)]


def problems(case) -> list[str]:
    """The stage's schema and checks; a partial answer (PARTIAL) is held to its items' schema and
    to every check but the ones it cannot meet as a part."""
    skip = PARTIAL.get((case.recipe, case.stage))
    if not skip:
        return RUNNER.problems(case, case.answer)
    stage = RUNNER.stage(case.recipe, case.stage)
    try:  # the fields' own types, without the answer's bounds on how many items it holds
        fields = {name: TypeAdapter(info.annotation).validate_python(case.answer[name])
                  for name, info in stage.output.model_fields.items() if name in case.answer}
    except ValidationError as exc:
        return [f"[schema] {exc}"]
    output = stage.output.model_construct(**fields)
    return [p for check in stage.checks if check.name not in skip for p in check(output, case.variables)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_a_fixture_answer_passes_its_stage(case):
    assert problems(case) == []


def test_every_stage_a_fixture_answers_is_tested():
    stages = {(c.recipe, c.stage) for c in CASES}
    assert {("pal", "profile"), ("pal", "preferences"), ("pal", "requirements"), ("stratmem", "persona"),
            ("enpmr", "profile"), ("enpmr", "support_dialogue")} <= stages
    assert {k for k in PARTIAL} <= stages


def test_the_partial_reading_still_rejects():
    """A partial answer is not waved through: a check it can be held to still fails it."""
    case = next(c for c in CASES if c.stage == "situations" and c.language == "en")
    broken = type(case)(**{**case.__dict__, "answer": {"situations": [
        {**case.answer["situations"][0], "situation": "Too short. Two sentences."}]}})
    assert any("[situation_sentences]" in p for p in problems(broken))


@pytest.mark.parametrize("language", LANGUAGES)
def test_pal_fixture_calls_the_user_the_user(language):
    """The prompts of profile, experience and requirements say: call the user "the user"."""
    w = pal_fixture.WORLD[language]
    name = w["profile"]["name"]
    texts = [w["profile"][f] for f in ("occupation", "health_status", "family_members", "hobbies")]
    texts += [w["situation"], w["experience"], *w["timeline"]]
    texts += [t["requirement"] for t in w["topics"]]
    texts += [e for t in w["topics"] for n in t["implicit_needs"] for e in n["evidences"]]
    texts += [a for a, _pos, _neg in w["work_preferences"]]
    assert [t for t in texts if name in t] == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_pal_fixture_counts_what_the_prompts_ask(language):
    """2-3 sentences a profile field and 4-5 statements a preference (the checks accept fewer:
    the released data has them)."""
    w = pal_fixture.WORLD[language]
    for field in ("occupation", "health_status", "family_members", "hobbies"):
        assert 2 <= len(split_sentences(w["profile"][field])) <= 3, field
    for _analysis, pos, neg in w["work_preferences"]:
        assert 4 <= len(statements(pos)) <= 5, pos
        assert 4 <= len(statements(neg)) <= 5, neg
    assert len(split_sentences(w["situation"])) >= 5
