"""memsynth.quality.textrules: the generic finders the recipes' new checks are built on.

Every example here is written for this test (none is copied from the shared corpus)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from memsynth.quality.textrules import clock, forms, meaning, people

SPAN = (dt.datetime(2025, 3, 3, 8, 0), dt.datetime(2025, 3, 7, 18, 30))  # Monday to Friday 18:30


@pytest.mark.parametrize(("a", "b"), [
    ("Adores hot Hunan dishes", "Loves spicy Hunan food"),
    ("Walking the dog along the canal at dawn", "At dawn, a stroll with the dog along the canal"),
    ("Hates crowded supermarkets", "Detests busy supermarkets"),
    ("喜爱周末去湖边钓鱼", "周末爱去湖边钓鱼"),
    ("讨厌嘈杂的商场", "反感吵闹的商场"),
    # a restating opener says nothing; "can't stand" is "hate", 不爱 is 不喜欢
    ("Hates coriander", "Can't stand coriander"), ("No coriander", "In other words, no coriander"),
    ("缓解工作焦虑", "换句话说，缓解工作焦虑"), ("不喜欢跑步", "不爱慢跑"), ("喜欢看纪录片", "说白了就是爱看纪录片"),
    ("上班时间也能做的缓解办法", "上班时间也能做的缓解法子"), ("每周去游泳两次", "每个星期游泳两次"),
])
def test_paraphrases_are_one_item(a, b):
    assert meaning.same_meaning_pairs([a, b, "Keeps bees on the allotment"]) == [(0, 1)]


@pytest.mark.parametrize(("a", "b"), [
    ("Loves spicy Hunan food", "Hates spicy Hunan food"),  # a like is no repeat of a dislike
    ("喜欢吃辣的湘菜", "不喜欢吃辣的湘菜"),
    ("Jazz records on vinyl", "Rock records on vinyl"),
    ("Morning swims at the lido", "Evening runs by the river"),
    ("晚上练书法", "早上打太极"),
    ("Can't stand coriander", "Loves coriander"), ("不爱跑步", "爱跑步"),
])
def test_different_items_stay_apart(a, b):
    assert meaning.same_meaning_pairs([a, b]) == []


@pytest.mark.parametrize(("text", "said"), [
    ("On Friday the user left the office at 19:05.", "19:05"),
    ("On 7 March she handed in the form and got home at 7:40 pm.", "7:40 pm"),
    ("3月7日周五，用户开完会，晚上八点一刻才下班。", "晚上八点一刻"),
    ("7日下午，用户去银行；晚上九点半回到家。", "晚上九点半"),
    ("3月6日用户加班。第二天上午，他去医院复查。", "第二天"),  # 3月7日 is fine, "the next day" after it is not
    ("On 6 March he flew out; the next day he visited the plant, and the following day he flew back.", "the following day"),
    ("3月8日上午，用户去了公园。", "3月8日"),
    # A bare hour after a later one on the same day goes on from it: 六点十分 … 八点二十 is 20:20.
    ("3月7日周五，用户晚上六点十分到家；八点二十，他躺在沙发上敷腰。", "八点二十"),
    ("3月7日下午五点用户下班，顺路买菜；七点吃完晚饭。", "七点"),
    # "周三下班前交" names a deadline, not the day the text goes on in.
    ("3月7日上午经理要求周三下班前交报告；晚上六点十分到家，八点二十躺下。", "八点二十"),
    # 前往 is going there: the day is reached
    ("3月7日下午，用户3月8日前往苏州出差。", "3月8日"),
])
def test_a_time_past_the_span_end_is_found(text, said):
    if said == "第二天":
        text = "3月7日用户加班。第二天上午，他去医院复查。"
    found = clock.past(text, *SPAN)
    assert found and found[0].said.strip(". ") == said


@pytest.mark.parametrize("text", [
    "On Friday the user left the office at 17:45 and sat down to talk.",
    "3月7日周五，用户下午五点半下班，六点到家。",
    "周一晚上十点他还在加班。周五上午交了报告。",  # 22:00 on Monday, not on the last day
    "The report is due by 10 March, so on Thursday he worked until 9 pm.",  # a deadline is not reached
    "用户要在3月12日前交材料，3月7日下午整理了一遍。",
    # held-out r15: the deadline's day in brackets after its weekday, or the weekday after the day
    "3月7日上午，经理要求在星期三（3月12日）前补交数据。",
    "经理要求3月12日（星期三）之前补交数据，用户3月7日整理了一遍。",
    "He owns two 12:1 scale models.",  # a ratio, placed on no day
    "3月7日上午九点用户开会；十点左右回到工位，下午四点下班。",  # a bare hour that goes forward stays the morning
    "3月6日晚上十点他还在加班。3月7日八点到岗，六点下班。",  # a new day starts its own clock
])
def test_times_inside_the_span_pass(text):
    assert clock.past(text, *SPAN) == []


@given(st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "Z", "S")), max_size=200))
@settings(max_examples=150, deadline=None)
def test_the_clock_reader_takes_any_text(text):
    for moment in clock.moments(text, SPAN[0].date(), SPAN[1].date()):
        assert isinstance(moment.day, dt.date)


@given(st.lists(st.text(max_size=40), max_size=8))
@settings(max_examples=150, deadline=None)
def test_the_meaning_units_take_any_text(items):
    for i, j in meaning.same_meaning_pairs(items):
        assert 0 <= i < j < len(items)


@pytest.mark.parametrize(("text", "joint"), [
    ("Block out lunch for a walk, or alternatively book a weekly yoga class.", "alternatively"),
    ("Ask HR for a standing desk; or you could bring a cushion from home.", "or you"),
    ("每天午饭后散步二十分钟，或者报一个晚间的游泳班。", "或者"),
    ("周末带孩子去科技馆，也可以在家一起拼乐高。", "也可以"),
    # a condition already answered ("随时跟我说") concedes nothing to the alternative after it
    ("如果还有其他需要，随时跟我说，或者请同事帮忙分担一部分。", "或者"),
])
def test_two_proposals_in_one_are_found(text, joint):
    assert forms.second_proposal(text) == joint


@pytest.mark.parametrize("text", [
    "Swim twice a week, on Tuesday or Thursday evenings.",
    "每周二或者周四晚上去游泳一次。",
    "即使没空出门，也可以在阳台上做十分钟拉伸。",
    "如果周末没空，也可以晚上去。",
])
def test_one_proposal_passes(text):
    assert forms.second_proposal(text) is None


@pytest.mark.parametrize(("text", "n"), [("Any tips for sleeping better?", 1), ("Sleep tips? And what about naps?", 2),
                                         ("最近老是失眠，有什么办法吗？", 1), ("有什么办法吗？午睡有用吗？", 2)])
def test_questions_are_counted(text, n):
    assert forms.questions(text) == n


@pytest.mark.parametrize("text", ["I see the logic, but I'm not doing it.", "I appreciate the idea, but no.",
                                  "我理解你的意思，但我不想这么做。", "道理我都懂，可是我做不到。"])
def test_a_softened_refusal_is_found(text):
    assert forms.softened(text)


@pytest.mark.parametrize("text", ["No, that won't work for me.", "不用了，这个我不想试。", "Not for me, but thanks."])
def test_a_plain_refusal_passes(text):
    assert forms.softened(text) is None


def test_person_forms_cover_full_name_title_given_name_and_pet_names():
    forms_ = people.person_forms("林海燕")
    assert {"林海燕", "林老师", "老林", "小林", "海燕", "燕燕", "阿燕"} <= forms_
    assert {"tomasz", "nowak"} == people.person_forms("Dr Tomasz Nowak")
    assert people.person_forms("进修中心考核组") == set()


def test_a_zh_pet_form_is_never_a_common_word():
    """苏婧 is also 小婧; 张天 is never 天天 (every day) and 王时 never 小时 (an hour)."""
    assert {"小婧", "婧婧", "阿婧"} <= people.person_forms("苏婧")
    assert not {"天天", "小时"} & (people.person_forms("张天") | people.person_forms("王时"))
    assert people.named_in("这周末小婧去医院复查。", people.person_forms("苏婧")) == ["小婧"]
    assert people.named_in("他天天练两个小时。", people.person_forms("张天") | people.person_forms("王时")) == []


@pytest.mark.parametrize(("relation", "text", "named"), [
    ("父亲", "她爸昨天打来电话", True), ("父亲", "她去妈祖庙拜了拜", False),
    ("the user's grandmother", "Her gran rang on Sunday.", True),
    ("the user's grandmother", "A patient's grandmother rang.", False),
])
def test_kinship_terms(relation, text, named):
    pattern = people.kin_pattern(people.kin_words(relation))
    assert bool(pattern.search(text.lower())) is named


def test_third_person_user_and_vocatives():
    names = people.person_forms("Priya Shah")
    assert forms.third_person_user("Priya, that sounds hard.", names) is None
    assert forms.third_person_user("I think Priya should rest.", names) == "priya"
    assert forms.third_person_user("The user should rest.") == "the user"
    assert forms.third_person_user("用户可以先休息一下。") == "用户"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from("\x1c\x1d\x1e\x1f\x0b\x0c\u3000\u2028 .!?0123456789-⁃"),
               max_size=120))
@example("0\x1f0")
@example("Items: \x1c1. one \x1d2. two")
def test_any_text_splits_into_sentences_it_holds(text):
    """pysbd failed on "0\\x1f0" (int() of a list number it took "\\x1f0" for): any text, with
    separators, digits, list marks, CJK or emoji, splits, and each sentence is in the text (a
    separator given to pysbd as a space)."""
    from memsynth.core.textmatch import sentences

    plain = text.replace("\x1c", " ").replace("\x1d", " ").replace("\x1e", " ").replace("\x1f", " ")
    for sentence in sentences(text):
        assert sentence in plain or sentence in text


WEEK = (dt.date(2024, 11, 6), dt.date(2024, 11, 11))  # 9 November 2024 was a Saturday


@pytest.mark.parametrize(("text", "wrong"), [
    ("11月10日周六，用户去社区医院做理疗。", "11月10日周六"),  # held-out r6: the 10th was a Sunday
    ("11月9日（周六）理疗，11月10日（星期日）休息。", None),
    ("2024-11-10 周六 上午理疗", "2024-11-10 周六"),
    ("十一月九日星期五", "十一月九日星期五"),
    ("On Saturday, November 10 he went to physio.", "Saturday, November 10"),
    ("On Saturday 9 November he went to physio.", None),
    ("9 November (Sunday): physio.", "9 November (Sunday"),
    ("11月10日，周六那次理疗的效果还在。", None),  # a comma: the weekday is another day's
    ("周六上午理疗。", None),
])
def test_a_day_said_with_the_wrong_weekday_is_found(text, wrong):
    found = clock.wrong_weekdays(text, *WEEK)
    assert [said for said, _ in found] == ([wrong] if wrong else [])


@settings(max_examples=200, deadline=None)
@given(offset=st.integers(min_value=0, max_value=5), shift=st.integers(min_value=0, max_value=6),
       zh=st.booleans(), prefix=st.text(max_size=20), suffix=st.text(max_size=20))
def test_a_weekday_is_flagged_exactly_when_it_is_not_the_day_s(offset, shift, zh, prefix, suffix):
    """Any day of the span with any weekday, amid any Unicode: flagged when, and only when, wrong."""
    day = WEEK[0] + dt.timedelta(days=offset)
    index = (day.weekday() + shift) % 7
    said = (f"{day.month}月{day.day}日周{'一二三四五六日'[index]}" if zh
            else f"{('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday')[index]}, "
                 f"{day:%B} {day.day}")
    found = clock.wrong_weekdays(f"{prefix} {said} {suffix}", *WEEK)
    assert any(s == said for s, _ in found) is (shift != 0)
