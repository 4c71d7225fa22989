"""enpmr `profile.facts_not_repeated`: "Do not repeat the same fact across fields" (profile.j2),
held to what a strong model wrote: every acceptable profile passes, and the held-out mistakes
labelled with that line are rejected, save the four reworded past what shared words show."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.enpmr.form_checks import PROFILE_LISTS, facts_not_repeated
from schemas.enpmr import Profile
from tests.answer_sets import MODEL_ANSWERS, label_says, stage_answers

CORPUS = MODEL_ANSWERS / "enpmr"
RULE = ("Do not repeat the same fact across fields", "不同字段之间不要重复同一条事实")
# Repeats told in other words, past what shared words can show (the audit judge's): a swim in no
# word the habit uses; voice notes "instead of texting" beside "to typing out messages" (0.25);
# "用游泳和做川菜给自己解压" beside "靠游泳和下厨来排解焦虑" (r6, written after the check: a miss);
# "Swims at the local baths at 7 a.m. on Tuesdays and Fridays" beside "Loves an early-morning swim
# at the local baths twice a week" (r7, a miss at 0.33: acceptable profiles reach 0.29, and the
# bound stays where they put it rather than where one mistake would).
# r11 (measured fresh, two misses): "每周挤出两个早上去游一千米" beside "每周二、周五清晨去游泳馆游1000米"
# (the number in words against digits, the pool named once); the Sunday dinner for her parents as
# a habit and again as a preference, in other words.
# r15 (measured fresh, a miss): "Swims lengths at the local baths on Tuesday and Friday mornings
# before work" beside "Loves her twice-weekly early swims at the local baths before work", the
# days named once and counted once, as in r7 (r16's, with "twice a week" in both, is rejected).
# r18 (measured fresh, a miss of the same kind): "Swims at the local baths on Tuesday and Thursday
# mornings before her shift" beside "Loves swimming at the local baths twice a week before work".
# r23 (measured fresh, the same kind again): "Swims 40 lengths at the local baths at 6:45 on
# Tuesday and Thursday mornings" beside "Swims at the local baths twice a week before work".
# The writer's own words say the mistake is a repeat: a whole prompt line quoted holds other
# instructions too (r12's paragraph-long goal quotes the line this rule shares).
REPEATS = ("repeat", "again", "twice", "same fact", "重复", "又写", "再次")
# A weekly routine said by its days in one field and by its count in another ("on Tuesdays and
# Fridays at 6:30 a.m." / "early-morning swims twice a week": textrules.meaning reads both as
# "twice a week", "morning") is one fact: r7's, r11's English, r15's, r18's, r23's and r24's are
# rejected since the fourteenth session, and left this list.
REWORDED = {"r2/profile-zh-v1", "r5/profile-en-v1", "r6/profile-zh-v1", "r11/profile-zh-v1"}


def _answers():
    for where, data, answer in stage_answers("enpmr", "profile"):
        yield where, data["language"], answer


def _profile(answer: dict, label: str) -> Profile | None:
    """The answer as a Profile; None for a mistake the schema already refuses (r13: nine
    preferences where ten are required), which no check after it reads."""
    try:
        return Profile.model_validate(answer)
    except ValueError:
        assert label == "violation"
        return None


def _problems(answer: dict, language: str, label: str = "acceptable") -> list[str]:
    profile = _profile(answer, label)
    return ["schema"] if profile is None else list(facts_not_repeated(profile, {"language": language}))


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_acceptable_profiles_pass_and_labelled_repeats_fail():
    labelled = []
    for where, language, answer in _answers():
        found = _problems(answer["answer"], language, answer["label"])
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif any(r in answer["rule"] for r in RULE) and label_says(answer["rule"], REPEATS):
            labelled.append(f"{where.split('/')[0]}/{answer['id']}")
            if f"{where}/{answer['id']}" not in REWORDED:
                assert found, (where, answer["id"], answer["rule"])
    assert len(labelled) >= 6, labelled


def test_the_repair_message_names_both_items_in_the_build_s_language():
    base = {"name": "林晓", "age": 29, "gender": "女", "occupation": "康复治疗师", "education": "本科",
            "personality": ["开放性：爱学新疗法", "尽责性：当天写完病历", "外向性：话不多", "宜人性：很少拒绝换班",
                            "神经质：常为家属的批评失眠"],
            "habits": ["每周二、周五早上去游泳馆游1000米", "睡前听雨声", "周末回父母家吃饭"], "social": ["和父母同住", "有个弟弟在北京"],
            "emotional_pattern": ["压力大时一个人去游泳", "被夸奖时会脸红"], "goals": ["考上在职研究生", "攒够首付"],
            "communication_style": ["说话慢", "先肯定再建议"],
            "preferences": ["爱吃辣", "不吃香菜", "喝热豆浆", "偏爱蛙泳", "不喜欢跑步", "爱逛菜市场", "看医学纪录片",
                            "穿棉麻衣服", "不喝咖啡", "最爱每周二、周五早上去游泳馆游上1000米"]}
    found = _problems(base, "zh")
    assert len(found) == 1 and "重复了 habits" in found[0] and "1000米" in found[0], found
    base["preferences"][-1] = "喜欢冰柠檬茶"
    assert _problems(base, "zh") == []


_PIECE = st.text(alphabet=st.characters(codec="utf-8"), max_size=6) | st.sampled_from(
    ["游泳", "ｓｗｉｍ", "🙂", "\u202e", "\u0301", "\x00", "\ud800", " ", "swim", "Swims", "每周二", "on Tuesdays",
     " and Fridays", "at 6:30 a.m.", "12:99", "99 p.m."])
_TEXT = st.lists(_PIECE, max_size=6).map("".join)


def test_a_weekly_routine_by_its_days_and_by_its_count_is_one_fact():
    """In words no held-out round used: the days named in one field, counted in another."""
    from flows.enpmr.form_checks import repeated_across_fields

    def profile(habit: str, preference: str) -> Profile:
        return Profile.model_construct(**{**{f: [] for f in PROFILE_LISTS}, "habits": [habit], "preferences": [preference]})

    assert repeated_across_fields(profile("Runs the canal towpath on Mondays, Wednesdays and Saturdays at 7 p.m.",
                                          "Loves her evening towpath runs three times a week"))
    # another activity on the same two days is another fact
    assert not repeated_across_fields(profile("Runs the canal towpath on Mondays and Wednesdays at 7 p.m.",
                                              "Plays five-a-side football twice a week with old school friends"))


@settings(max_examples=150, deadline=None)
@given(lists=st.lists(st.lists(_TEXT, min_size=1, max_size=4), min_size=len(PROFILE_LISTS),
                      max_size=len(PROFILE_LISTS)))
def test_any_unicode_in_any_field_is_read_without_failing(lists):
    """CJK, full-width, emoji, RTL, combining marks, NUL, lone surrogates: a verdict, never a crash;
    and an item copied whole into another field is a repeat whenever it has words to compare."""
    from memsynth.quality.textrules.meaning import meaning_units

    fields = dict(zip(PROFILE_LISTS, lists))
    assert all(isinstance(p, str) for p in facts_not_repeated(Profile.model_construct(**fields), {"language": "zh"}))
    copied = {**fields, "preferences": [*fields["preferences"], fields["habits"][0]]}
    found = list(facts_not_repeated(Profile.model_construct(**copied), {"language": "zh"}))
    if meaning_units(fields["habits"][0]):
        assert found


@pytest.mark.skipif(not CORPUS.is_dir(), reason=f"the shared corpus is not at {CORPUS}")
def test_every_acceptable_item_is_a_short_fact_and_labelled_paragraphs_are_not():
    """"Every list item is one short, specific fact, not a paragraph" (profile.short_facts)."""
    from flows.enpmr.form_checks import short_facts

    labelled = []
    for where, language, answer in _answers():
        profile = _profile(answer["answer"], answer["label"])
        if profile is None:
            continue
        found = list(short_facts(profile, {"language": language}))
        if answer["label"] == "acceptable":
            assert found == [], (where, answer["id"], found)
        elif label_says(answer["rule"], ("paragraph", "段落")):
            labelled.append(f"{where}/{answer['id']}")
            assert found, (where, answer["id"], answer["rule"])
    assert len(labelled) >= 6, labelled
