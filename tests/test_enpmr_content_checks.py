"""enpmr's checks of what a memory says (flows/enpmr/content_checks.py): each rejects its mistake
in other wordings and in Chinese, and lets every acceptable answer of the held-out rounds and
the shared corpus through."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.enpmr import content_checks as m
from schemas.enpmr import Goals, MemorySession, Powers, Preferences

HELDOUT = Path(__file__).parent / "data" / "heldout"
CORPUS = Path(__file__).parent.parent.parent / "shared" / "model-answers" / "enpmr"


def _acceptable(stage: str):
    files = sorted(HELDOUT.glob(f"[ra]*/enpmr/*/{stage}.json")) + sorted(CORPUS.glob(f"*/{stage}.json"))
    for f in files:
        data = json.loads(f.read_text(encoding="utf-8"))
        for a in data["answers"]:
            if a["label"] == "acceptable":
                yield f"{f.parent.parent.parent.name}/{data['language']}/{a['id']}", a["answer"], data["variables"]


def _problems(check, model, answer, variables):
    if "items" in answer and len(answer["items"]) == 1:  # one item under test, repeated to the list's minimum
        answer = {"items": answer["items"] * 12}
    return list(check.fn(model.model_validate(answer), variables))


@pytest.mark.parametrize(("stage", "check", "model"), [
    ("power", m.proficiency_fits_account, Powers), ("goal", m.measurable_names, Goals),
    ("preferences", m.dislikes_kept, Preferences), ("memory_session", m.told_near_its_date, MemorySession)])
def test_every_acceptable_answer_passes(stage, check, model):
    seen = 0
    for key, answer, variables in _acceptable(stage):
        assert _problems(check, model, answer, variables) == [], key
        seen += 1
    assert seen >= 10  # the rounds are there: a test over nothing proves nothing


def _power(performance: str, acquisition: str, description: str = "Setting the harness and belt speed.") -> dict:
    return {"name": "Setting treadmill unloading", "description": description, "performance": performance,
            "acquisition_method": acquisition, "date": "2022-05-01"}


@pytest.mark.parametrize(("language", "acquisition"), [
    ("en", "One-day course; she still needs the engineer present for every session"),
    ("en", "Shadowed the lead, but she still relies on a senior to check the settings"),
    ("en", "A study day; she can't yet set it up without a senior checking"),
    ("en", "Two sessions so far and not yet able to run it alone"),
    ("zh", "厂家培训过一天，实际操作时仍需工程师在旁指导"),
    ("zh", "跟老师学了一周，上机时还离不开老师在旁边把关"),
    ("zh", "听过两次小讲课，但自己看报告时还是常常看不懂"),
])
def test_a_proficient_skill_the_user_still_cannot_do_alone_is_rejected(language, acquisition):
    answer = {"items": [_power("proficient", acquisition)]}
    assert _problems(m.proficiency_fits_account, Powers, answer, {"language": language})
    # The same account on a skill marked not proficient is what the prompt asks.
    answer = {"items": [_power("not proficient", acquisition)]}
    assert _problems(m.proficiency_fits_account, Powers, answer, {"language": language}) == []


@pytest.mark.parametrize(("language", "description"), [
    ("en", "Setting unloading for patients who still need two people to stand."),
    ("zh", "为还不会独立站稳的偏瘫病人设定30%的初始减重。"),
])
def test_what_a_patient_still_cannot_do_is_not_the_users(language, description):
    answer = {"items": [_power("proficient", "Ran four programmes on her own.", description)]}
    assert _problems(m.proficiency_fits_account, Powers, answer, {"language": language}) == []


def _goals(name: str) -> dict:
    return {"items": [{"name": name, "description": "What it takes.", "status": "achieved", "date": "2022-05-01"}]}


@pytest.mark.parametrize(("language", "name"), [
    ("en", "Become a confident gait therapist"), ("en", "Get more confident with treadmill training"),
    ("en", "Grow into the unit's go-to person for gait"), ("en", "Improve her handling skills"),
    ("en", "Be better at leading the team"),
    ("zh", "把减重步态训练做得更专业"), ("zh", "进一步提高脑卒中病人步态训练的效果"), ("zh", "提升自己的带教水平"),
])
def test_a_goal_named_as_an_improvement_with_nothing_to_measure_is_rejected(language, name):
    assert _problems(m.measurable_names, Goals, _goals(name), {"language": language})


@pytest.mark.parametrize(("language", "name"), [
    ("en", "Improve 10-metre walk times by 20%"), ("en", "Feel confident enough to run five sessions alone"),
    ("en", "Get the unit's treadmill protocol approved"),
    ("zh", "三个月内把步态训练的评定误差提高到3分以内"), ("zh", "进修结业考核达到优秀"),
])
def test_a_goal_with_a_measure_passes(language, name):
    assert _problems(m.measurable_names, Goals, _goals(name), {"language": language}) == []


def _preferences(names: list[str]) -> dict:
    return {"items": [{"name": n, "description": "A detail.", "date": "2021-01-01"} for n in names]}


PROFILE_EN = {"preferences": ["Needs a mug of tea with oat milk first thing", "Avoids coffee, it makes her jittery",
                              "Hates coriander", "Watches medical documentaries, not reality TV"]}
PROFILE_ZH = {"preferences": ["早上一定要喝一杯热豆浆", "不喜欢喝咖啡，喝了会心慌", "不吃香菜，闻到就头疼"]}


@pytest.mark.parametrize(("language", "profile", "name"), [
    ("en", PROFILE_EN, "oat milk in coffee"), ("en", PROFILE_EN, "A strong morning coffee"),
    ("en", PROFILE_EN, "coriander on everything"), ("en", PROFILE_EN, "reality TV on Fridays"),
    ("zh", PROFILE_ZH, "每天一杯冰咖啡"), ("zh", PROFILE_ZH, "爱吃香菜拌豆腐"),
])
def test_a_dislike_of_the_profile_named_as_a_liking_is_rejected(language, profile, name):
    answer = _preferences([name])
    assert _problems(m.dislikes_kept, Preferences, answer, {"language": language, "profile": profile})


@pytest.mark.parametrize(("language", "profile", "name"), [
    ("en", PROFILE_EN, "avoids coffee"), ("en", PROFILE_EN, "tea, never coffee"), ("en", PROFILE_EN, "No coffee"),
    ("en", PROFILE_EN, "tea over coffee"), ("en", PROFILE_EN, "coriander tastes like soap"),
    ("en", PROFILE_EN, "documentaries, not reality TV"),
    ("zh", PROFILE_ZH, "不喝咖啡"), ("zh", PROFILE_ZH, "闻到香菜就头疼"), ("zh", PROFILE_ZH, "麻辣随意，香菜免谈"),
    # fresh acceptable answers (a27): the dislike in an idiom, or as what the thing does
    ("en", PROFILE_EN, "can't stand coriander"), ("en", PROFILE_EN, "steers clear of coffee"),
    ("en", {"preferences": ["Dislikes running"]}, "running is bad for her knees"),
    ("en", {"preferences": ["Dislikes running"]}, "running wrecks her knees"),
    ("zh", PROFILE_ZH, "咖啡敬而远之"),
    ("zh", {"preferences": ["自由泳换气总是不顺"]}, "蛙泳比自由泳顺手"),
])
def test_a_dislike_kept_as_a_dislike_passes(language, profile, name):
    answer = _preferences([name])
    assert _problems(m.dislikes_kept, Preferences, answer, {"language": language, "profile": profile}) == []


def _session(user_line: str) -> dict:
    turns = []
    for i in range(10):
        turns.append({"role": "user" if i % 2 == 0 else "ai", "content": user_line if i == 2 else "Okay."})
    return {"turns": turns}


@pytest.mark.parametrize(("language", "line"), [
    ("en", "It's from nearly two years ago now, January last year."), ("en", "That was years ago, but I still think of it."),
    ("en", "The year before last, a patient's daughter sent me a card."),
    ("zh", "是前年冬天一面锦旗的照片。"), ("zh", "说起来都是两年前的事了。"), ("zh", "好几年前我带过一位病人。"),
])
def test_a_memory_told_as_years_gone_is_rejected(language, line):
    assert _problems(m.told_near_its_date, MemorySession, _session(line), {"language": language})


@pytest.mark.parametrize(("language", "line"), [
    ("zh", "现在隔了快两年再看到这面锦旗，心情有什么不一样吗？"),  # held-out r17
    ("en", "Nearly two years on, how does it feel to see that card again?"),
])
def test_the_ai_placing_the_memory_years_back_is_rejected_too(language, line):
    turns = _session("Okay.")["turns"]
    turns[3]["content"] = line  # an AI turn
    assert _problems(m.told_near_its_date, MemorySession, {"turns": turns}, {"language": language})


@pytest.mark.parametrize(("language", "line"), [
    ("en", "A patient's daughter sent a card to the unit today with my name in it."),
    ("zh", "今天陈大爷的女儿送来一面锦旗，上面点名写了我。"),
])
def test_a_memory_told_as_news_passes(language, line):
    assert _problems(m.told_near_its_date, MemorySession, _session(line), {"language": language}) == []
