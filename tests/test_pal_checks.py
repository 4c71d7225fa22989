"""Each pal rule a schema cannot express is a named check that catches a violating output."""

from __future__ import annotations

import random

import pytest

from flows.pal import checks as pal
from flows.pal import plan
from flows.pal.options import LOG_TYPES
from flows.pal.simulated import log_content
from schemas.pal import (
    AspectPreferences,
    Candidates,
    Dialogue,
    Experience,
    Logs,
    MonthSituations,
    PalProfiles,
    RequirementTypes,
    SessionRequirements,
    SolutionPreferences,
    Timeline,
    TopicRequirement,
)

S2 = "One thing happened. Another thing followed."
S5 = "A. " * 0 + "One. Two happened. Three came. Four went. Five ended."
S4 = "One happened. Two came. Three went. Four ended."


def _profile(**over):
    base = dict(name="A", gender="f", age=40, occupation=S2, health_status=S2, family_members=S2,
                hobbies=S2, personality=dict(openness="low", conscientiousness="medium",
                                             extraversion="high", agreeableness="low",
                                             neuroticism="high"))
    base.update(over)
    return base


def test_profile_checks():
    v = {"batch_size": 3, "allow_students_retirees": False}
    varied = [_profile(), _profile(personality=dict(openness="high", conscientiousness="low",
                       extraversion="low", agreeableness="high", neuroticism="medium")), _profile()]
    good = PalProfiles(profiles=varied)
    for c in (pal.batch_size, pal.profile_fields, pal.varied_batch):
        assert c(good, v) == [], c.name
    assert pal.batch_size(PalProfiles(profiles=varied[:2]), v)
    # One long sentence is accepted (real PAL-Set profiles have them); four are too many.
    assert pal.profile_fields(PalProfiles(profiles=[_profile(hobbies="Only one, but long.")] * 3), v) == []
    assert pal.profile_fields(PalProfiles(profiles=[_profile(hobbies="A b. C d. E f. G h.")] * 3), v)
    student = PalProfiles(profiles=[_profile(occupation="She is a university student. She studies law.")]
                          + varied[1:])
    assert "student" in pal.profile_fields(student, v)[0]
    assert pal.profile_fields(student, {**v, "allow_students_retirees": True}) == []
    for occupation in ("用户是一名大学生，主修法律。", "用户已退休，在家照顾孙子。",
                       "用户是南京一所高校药学院的研二学生，课余在药房兼职。",  # held-out r7
                       "He is a second-year master's student who works shifts at a pharmacy.",
                       "She is a PhD student in chemistry."):
        assert pal.profile_fields(PalProfiles(profiles=[_profile(occupation=occupation)]), v), occupation
    # Teachers are loved by their students, and a professor supervises graduate students: that is
    # not being a student.
    for occupation in ("用户是研究生导师，带着五个研究生做课题。", "He mentors PhD students at a lab."):
        assert pal.profile_fields(PalProfiles(profiles=[_profile(occupation=occupation)]), v) == [], occupation
    teacher = "用户是一名中学语文教师，教学经验丰富，深受学生喜爱。她常常辅导学生到很晚。"
    assert pal.profile_fields(PalProfiles(profiles=[_profile(occupation=teacher)]), v) == []
    assert pal.profile_fields(PalProfiles(profiles=[_profile(
        occupation="He teaches maths to students. He loves it.")]), v) == []
    uniform = PalProfiles(profiles=[_profile(personality=dict(openness="medium", conscientiousness="medium",
                          extraversion="medium", agreeableness="medium", neuroticism="medium"))] * 3)
    assert len(pal.varied_batch(uniform, v)) == 2


def test_timeline_checks():
    v = {"months": ["2024-05", "2024-06"]}
    good = Timeline(months=[{"month": "2024-05", "summary": S5}, {"month": "2024-06", "summary": S5}])
    assert pal.months_in_order(good, v) == [] and pal.month_sentences(good, v) == []
    swapped = Timeline(months=[{"month": "2024-06", "summary": S5}, {"month": "2024-05", "summary": S5}])
    assert pal.months_in_order(swapped, v)
    short = Timeline(months=[{"month": "2024-05", "summary": S2}, {"month": "2024-06", "summary": S5}])
    assert pal.month_sentences(short, v)


def test_requirement_type_and_preference_checks():
    types = {a: [f"{a} need {i}" for i in range(4)] for a in ("work", "health", "family", "leisure")}
    assert pal.distinct_requirement_types(RequirementTypes(**types), {}) == []
    types["leisure"][0] = "work need 0"
    assert pal.distinct_requirement_types(RequirementTypes(**types), {})
    v = {"requirements": [{"requirement_id": "work-1"}, {"requirement_id": "work-2"}]}
    good = AspectPreferences(items=[{"requirement_id": f"work-{i}", "analysis": "a", "pos": S4, "neg": S4}
                                    for i in (1, 2)])
    assert pal.covers_requirement_types(good, v) == [] and pal.preference_sentences(good, v) == []
    missing = AspectPreferences(items=[{"requirement_id": "work-1", "analysis": "a", "pos": S4, "neg": S4}])
    assert pal.covers_requirement_types(missing, v)
    assert pal.preference_sentences(AspectPreferences(items=[
        {"requirement_id": "work-1", "analysis": "a", "pos": "Only one.", "neg": S4}]), v)
    assert pal.preference_sentences(AspectPreferences(items=[
        {"requirement_id": "work-1", "analysis": "a", "pos": S4 + " " + S2, "neg": S4}]), v)
    # Chinese clauses joined by "；" count as sentences, as in the real preferences.
    zh = "用户喜欢简单的方案；他偏好数据化的工具；他愿意尝试新应用；他讨厌空谈。"
    assert pal.preference_sentences(AspectPreferences(items=[
        {"requirement_id": "work-1", "analysis": "a", "pos": zh, "neg": zh}]), v) == []


def _situations(spans, ids=("work-1", "health-2"), text=S5):
    return MonthSituations(situations=[{"time_span": s, "requirement_ids": list(ids), "situation": text}
                                       for s in spans])


SIT_VARS = {"month": "2024-05", "previous_end": "2024-04-29", "min_situations": 4, "max_situations": 6,
            "requirement_types": [{"requirement_id": "work-1"}, {"requirement_id": "health-2"}]}
GOOD_SPANS = ["2024-04-30 ~ 2024-05-07", "2024-05-08 ~ 2024-05-15", "2024-05-16 ~ 2024-05-22",
              "2024-05-23 ~ 2024-05-30"]


def test_situation_checks_accept_a_good_month():
    good = _situations(GOOD_SPANS)
    for c in (pal.situation_count, pal.spans_consecutive, pal.valid_requirement_ids, pal.situation_sentences):
        assert c(good, SIT_VARS) == [], c.name


@pytest.mark.parametrize("spans,needle", [
    (["2024-05-01 ~ 2024-05-07"] + GOOD_SPANS[1:], "day after 2024-04-29"),   # gap after last month
    (GOOD_SPANS[:2] + ["2024-05-15 ~ 2024-05-22", GOOD_SPANS[3]], "must start the day after"),  # overlap
    (GOOD_SPANS[:3] + ["2024-05-23 ~ 2024-05-27"], "final three days"),
    (GOOD_SPANS[:3] + ["2024-05-23 ~ 2024-06-02"], "outside 2024-05"),
    (["2024-04-30 ~ 2024-04-29"] + GOOD_SPANS[1:], "later day than it starts"),
    (["2024-04-30 ~ 2024-04-30", "2024-05-01 ~ 2024-05-15"] + GOOD_SPANS[2:], "later day than it starts"),
])
def test_span_violations_are_caught(spans, needle):
    problems = pal.spans_consecutive(_situations(spans), SIT_VARS)
    assert any(needle in p for p in problems), problems


def test_other_situation_violations():
    assert pal.situation_count(_situations(GOOD_SPANS), {**SIT_VARS, "min_situations": 5})
    assert pal.valid_requirement_ids(_situations(GOOD_SPANS, ids=("work-9", "work-1")), SIT_VARS)
    assert pal.valid_requirement_ids(_situations(GOOD_SPANS, ids=("work-1", "work-1")), SIT_VARS)
    assert pal.situation_sentences(_situations(GOOD_SPANS, text=S2), SIT_VARS)


def test_experience_must_end_before_the_session():
    v = {"span_end": "2024-05-07 21:00"}
    assert pal.ends_before_session(Experience(experience="On 2024-05-06 the user ran."), v) == []
    assert pal.ends_before_session(Experience(experience="On 2024-05-09 the user flew."), v)


def test_topic_framework_checks():
    need = {"need": "rest", "evidences": ["slept badly"]}
    other = {"need": "quiet", "evidences": ["noisy flat"]}
    topics = {"topics": [{"requirement_id": "work-1"}, {"requirement_id": "health-2"}]}

    def framework(*ids, needs=(need, other)):
        return SessionRequirements(topics=[TopicRequirement(requirement_id=i, user_query="q", requirement="r",
                                                            implicit_needs=list(needs)) for i in ids])

    assert pal.one_framework_per_topic(framework("work-1", "health-2"), topics) == []
    assert pal.one_framework_per_topic(framework("health-2", "work-1"), topics)
    assert pal.one_framework_per_topic(framework("work-1"), topics)
    assert pal.distinct_needs(framework("work-1", "health-2"), topics) == []
    assert pal.distinct_needs(framework("work-1", needs=(need, need)), topics)
    sols = ["Walk at lunch.", "Book a massage.", "Try a standing desk.", "Stretch every hour.",
            "See a physiotherapist.", "Swim on weekends.", "Sleep earlier.", "Buy a lumbar cushion."]
    both = Candidates(topics=[{"requirement_id": "work-1", "solutions": sols},
                              {"requirement_id": "health-2", "solutions": sols}])
    assert pal.distinct_candidates(both, topics) == [] and pal.candidates_per_topic(both, topics) == []
    assert pal.distinct_candidates(Candidates(topics=[{"requirement_id": "work-1",
                                                       "solutions": sols[:7] + [sols[0]]}]), topics)
    assert pal.candidates_per_topic(Candidates(topics=[{"requirement_id": "work-1", "solutions": sols}]), topics)
    v = {"candidates": sols}

    def prefs(liked, disliked, reason="Because it fits."):
        return SolutionPreferences(analysis="a", liked=[{"solution": s, "reason": reason} for s in liked],
                                   disliked=[{"solution": s, "reason": reason} for s in disliked])

    assert pal.verbatim_choices(prefs(sols[:2], sols[2:4]), v) == []
    assert pal.one_sentence_reasons(prefs(sols[:2], sols[2:4]), v) == []
    altered = prefs([sols[0], sols[1].lower()], sols[2:4])
    assert "verbatim" in pal.verbatim_choices(altered, v)[0]
    assert "four different" in pal.verbatim_choices(prefs(sols[:2], [sols[0], sols[3]]), v)[0]
    assert pal.one_sentence_reasons(prefs(sols[:2], sols[2:4], reason="It fits. I like it."), v)


LOG_VARS = {"span_start": "2024-05-01 00:00", "span_end": "2024-05-07 21:00", "min_logs": 20,
            "language": "en"}
GOOD_LOG = "The user searched for quiet cafes and viewed a list of three nearby."


def _logs(stamps, content=GOOD_LOG, kind="web_search"):
    return Logs(logs=[{"timestamp": t, "event": "e", "type": kind, "content": content} for t in stamps])


def _stamps(n, day="2024-05-02"):
    return [f"{day} {8 + i // 60:02d}:{i % 60:02d}" for i in range(n)]


def test_log_checks():
    good = _logs(_stamps(20))
    for c in (pal.enough_logs, pal.log_times, pal.log_format):
        assert c(good, LOG_VARS) == [], c.name
    assert "only 19" in pal.enough_logs(_logs(_stamps(19)), LOG_VARS)[0]
    assert pal.log_times(_logs(_stamps(19) + ["2024-05-02 08:00"]), LOG_VARS)  # not increasing
    assert pal.log_times(_logs(_stamps(20, day="2024-05-07")[:1] + ["2024-05-07 21:30"]), LOG_VARS)
    assert pal.log_times(_logs(["2024-04-30 23:59"] + _stamps(19)), LOG_VARS)
    assert pal.log_times(_logs(["2024-05-02 25:00"]), LOG_VARS)
    wrong = _logs(_stamps(20), content="Bought a kettle.", kind="transaction_record")
    assert "transaction_record format" in pal.log_format(wrong, LOG_VARS)[0]
    zh = _logs(_stamps(20), content="用户搜索了“附近的咖啡馆”，并查看了三家店的评分。")
    assert pal.log_format(zh, {**LOG_VARS, "language": "zh"}) == []
    assert pal.log_format(_logs(_stamps(20), content="今天去了咖啡馆。"), {**LOG_VARS, "language": "zh"})


# The seed's Table 7: three Device Operation logs of user 0095, on three kinds of device.
TABLE_7 = [
    "The user set up navigation on their smartphone, with the destination set to 15th floor, Guanghui Building.",
    "The user logged into the market research system on their office computer and viewed the latest data reports.",
    "The user browsed a live course on an online education platform, titled \u201cPractical Paths to "
    "Transition from Traditional Roles to Emerging Fields\u201d.",
]


def test_english_device_operation_format_accepts_the_seed_examples():
    for example in TABLE_7:
        assert pal.log_format_matches("device_operation", example, "en"), example


def test_every_log_type_has_a_matching_format_example():
    from memsynth.simulator.text import TextMaker

    for language in ("en", "zh"):
        text = TextMaker(random.Random(1), language)
        for kind in LOG_TYPES:
            assert pal.log_format_matches(kind, log_content(kind, text), language), (language, kind)


def test_dialogue_must_follow_the_skeleton():
    skeleton = [{"user_action": "topic_inquiry", "user_reference": "T1_Q",
                 "assistant_action": "requirement_prediction", "assistant_reference": "T1_N1"}]
    v = {"skeleton": skeleton}

    def dialogue(ua="topic_inquiry", ur="T1_Q", aa="requirement_prediction", ar="T1_N1", n=1):
        return Dialogue(turns=[{"user": {"action": ua, "reference": ur, "content": "x"},
                                "assistant": {"action": aa, "reference": ar, "content": "y"}}] * n)

    assert pal.follows_skeleton(dialogue(), v) == []
    assert pal.follows_skeleton(dialogue(n=2), v)
    assert pal.follows_skeleton(dialogue(ar="T1_N2"), v)
    assert pal.follows_skeleton(dialogue(aa="solution_proposal"), v)


REQ = TopicRequirement(requirement_id="work-1", user_query="q", requirement="r", implicit_needs=[
    {"need": "a", "evidences": ["e"]}, {"need": "b", "evidences": ["f"]}])


def test_skeletons_follow_the_grammar():
    rng = random.Random(3)
    for _ in range(200):
        topics = [plan.TopicPlan(i, "work-1", REQ, rng.randint(1, 2), (("s", "pos", "r"),) * rng.randint(1, 3))
                  for i in range(1, rng.randint(2, 4))]
        skeleton = plan.build_skeleton(topics, rng)
        pairs = [(t["user_action"], t["assistant_action"]) for t in skeleton]
        assert plan.conforms_to_grammar(pairs)
        assert {t["user_reference"] for t in skeleton if t["user_action"] == "topic_inquiry"} == \
            {f"T{t.index}_Q" for t in topics}


def test_months_before_the_reference_date():
    import datetime as dt

    assert plan.months_before(dt.date(2024, 2, 10), 3) == ["2023-11", "2023-12", "2024-01"]
    assert plan.months_before(dt.date(2025, 1, 1), 2) == ["2024-11", "2024-12"]
    assert plan.last_days("2024-02") == ["2024-02-27", "2024-02-28", "2024-02-29"]
