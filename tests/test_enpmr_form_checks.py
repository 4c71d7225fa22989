"""enpmr's checks of form (flows/enpmr/form_checks.py), on the strong model's acceptable answers
(read in place) and on realistic breaks of the prompt lines they enforce, in en and zh: a
persona that speaks as the person or runs past three sentences;
powers grouped by kind; relationships far from balanced; a judge's reason of several sentences."""

from __future__ import annotations

import copy
import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.generation.stage import evaluate
from memsynth.quality.answer_check import find_stage
from memsynth.quality.textrules.forms import first_person

ANSWERS = Path(__file__).resolve().parent.parent.parent / "shared" / "model-answers" / "enpmr"
pytestmark = pytest.mark.skipif(not ANSWERS.is_dir(), reason=f"model answers not at {ANSWERS}")


def corpus(stage: str, language: str) -> tuple[dict, dict]:
    data = json.loads((ANSWERS / language / f"{stage}.json").read_text(encoding="utf-8"))
    first = next(a for a in data["answers"] if a["label"] == "acceptable")
    return copy.deepcopy(first["answer"]), {**data["variables"], "language": language}


def tags(stage: str, answer: dict, variables: dict) -> set[str]:
    _out, problems, outcome = evaluate(find_stage("enpmr", stage), json.dumps(answer, ensure_ascii=False), "stop",
                                       variables)
    assert outcome in ("ok", "check_failed"), problems
    return {p[1:p.index("]")] for p in problems}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_acceptable_answers_pass(language):
    for stage in ("persona", "power", "relationship", "faithfulness", "scenario_consistency"):
        answer, v = corpus(stage, language)
        assert tags(stage, answer, v) == set(), stage


@pytest.mark.parametrize("language, description, tag", [
    ("en", "I'm Megan, a 32-year-old physiotherapist in Manchester, and my dad's hip has turned my evenings "
           "upside down. I swim before work to stay sane.", "third_person"),
    ("en", "Megan Doyle is a 32-year-old physiotherapist in Manchester. Our family leans on her since her dad's "
           "fall.", "third_person"),
    ("en", "Megan Doyle is a 32-year-old physiotherapist in Manchester whose father is recovering from a hip "
           "replacement and who swims before every shift.", "persona_sentences"),
    ("en", "Megan Doyle is a 32-year-old physiotherapist in Manchester. She treats stroke patients. She swims. "
           "She cooks on Sundays. She worries about her dad.", "persona_sentences"),
    ("zh", "我是一名三十出头的康复治疗师，住在成都，白天在医院带病人做训练。下班后我还要照顾走路不稳的父亲。", "third_person"),
    ("zh", "她是成都一家医院的康复治疗师，三十出头，每天带脑卒中病人做步态训练。我们全家都靠她照顾刚做完手术的父亲。", "third_person"),
])
def test_a_persona_that_breaks_its_line_is_rejected(language, description, tag):
    _answer, v = corpus("persona", language)
    assert tag in tags("persona", {"description": description}, v)


@pytest.mark.parametrize("language, description", [
    ("en", "Megan Doyle is a 32-year-old physiotherapist in Manchester who tells friends \"I can do this\" about "
           "caring for her dad. She swims at the US-style lido before work."),
    ("zh", "她是成都市武侯区一家医院的康复治疗师，三十出头，自我要求很高。她常说“我还撑得住”，可照顾父亲让她越来越累。"),
])
def test_quotes_and_words_about_the_self_are_not_the_first_person(language, description):
    _answer, v = corpus("persona", language)
    assert tags("persona", {"description": description}, v) == set()


@pytest.mark.parametrize("language", ["en", "zh"])
def test_powers_grouped_by_kind_are_rejected_and_mixed_ones_pass(language):
    answer, v = corpus("power", language)
    kinds = [p["performance"] for p in answer["items"]]
    rare = sorted(kinds.count(k) for k in set(kinds))[0]
    for order in (["proficient"] * (len(kinds) - rare) + ["not proficient"] * rare,
                  ["not proficient"] * rare + ["proficient"] * (len(kinds) - rare)):
        grouped = copy.deepcopy(answer)
        for item, kind in zip(grouped["items"], order, strict=True):
            item["performance"] = kind
        assert "kinds_mixed" in tags("power", grouped, v)
    assert "kinds_mixed" not in tags("power", answer, v)


@pytest.mark.parametrize("language, qualities, bad", [
    ("en", "ggggb", True), ("zh", "ggggb", True), ("en", "gggb", True), ("zh", "bbbbbg", True),
    ("en", "gggbb", False), ("zh", "ggbb", False), ("en", "ggggbb", False), ("zh", "gbgbg", False),
])
def test_relationships_far_from_balanced_are_rejected(language, qualities, bad):
    answer, v = corpus("relationship", language)
    items = (answer["items"] * 3)[:len(qualities)]
    answer["items"] = [{**item, "name": f"{item['name']}{i}", "relationship_quality": "good" if q == "g" else "bad"}
                       for i, (item, q) in enumerate(zip(items, qualities, strict=True))]
    assert ("quality_balanced" in tags("relationship", answer, v)) is bad


@pytest.mark.parametrize("stage", ["faithfulness", "scenario_consistency"])
@pytest.mark.parametrize("language, extra", [
    ("en", " The user never brings it up, so the recall is the AI's own."),
    ("zh", "用户自己没有提到。其他记忆也没有用上。"),
])
def test_a_judge_reason_of_several_sentences_is_rejected(stage, language, extra):
    answer, v = corpus(stage, language)
    answer["reason"] = answer["reason"].rstrip() + extra
    assert "one_sentence_reason" in tags(stage, answer, v)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(["我", "I", "“", "”", "\"", "\ud800", "\u202e"]),
               max_size=80))
def test_any_text_is_read_for_the_first_person_without_failing(text):
    found = first_person(text)
    assert found is None or found in text or found in unicodedata.normalize("NFKC", text)


_THIRD = ["She", "he", "her", "his", "them", "works", "in", "Leeds", "US", "as", "a", "nurse", "and", "swims", "自我",
          "她", "他", "在", "成都", "工作", "忘我", "“我能行”", "\"I can\""]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_THIRD), min_size=1, max_size=20))
def test_third_person_words_and_quoted_speech_are_never_the_first_person(words):
    assert first_person(" ".join(words)) is None


@pytest.mark.parametrize("language, name, rejected", [
    ("zh", "早上一定要喝一杯热豆浆，不然一上午都没精神", True),  # held-out r16
    ("en", "hot soy milk every morning, otherwise she flags by ten", True),
    ("zh", "无辣不欢，拿手回锅肉", False), ("en", "Spicy food, especially mapo tofu", False),
])
def test_a_preference_name_that_gives_its_reason_is_a_sentence(language, name, rejected):
    answer, v = corpus("preferences", language)
    answer["items"][0]["name"] = name
    assert ("short_names" in tags("preferences", answer, v)) is rejected
