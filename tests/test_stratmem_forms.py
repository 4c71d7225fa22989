"""stratmem's checks on what code can see of a rule, on mistakes written for these tests (en
and zh), and on the acceptable wordings next to them: fact dates (relative words, a day not
written YYYY-MM-DD, "yesterday" dated as the session day), near-verbatim quotes in a query,
a query that names its own speaker, sentence counts of every prompt that states one, and a
persona that speaks as the character."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.stratmem import checks
from flows.stratmem.evaluation import MIQ
from flows.stratmem.fact_time import day_not_iso, says_relative_time, undated_relative_time
from flows.stratmem.form_checks import (
    asks_the_character,
    first_person,
    one_question,
    persona_described,
    said_by_the_speaker,
)
from flows.stratmem.quoting import quoted_share
from flows.stratmem.stages import LABEL, PERSONA
from schemas.stratmem import (
    ExtractedMemories,
    IntegrationScore,
    MergedMemories,
    RoleLabels,
    UserQuery,
    VirtualPersona,
)

EN = {"language": "en", "speakers": ["Caroline", "Melanie"]}
ZH = {"language": "zh", "speakers": ["陈静", "许磊"]}


def _merged(fact: str) -> MergedMemories:
    return MergedMemories(memories=[{"fact": fact, "sources": [1]}])


def _dated(fact: str, v: dict) -> list[str]:
    return list(checks.dated_facts(_merged(fact), v))


@pytest.mark.parametrize("fact", [
    "Melanie has been feeling more relaxed lately thanks to painting.",
    "Caroline recently joined a pottery class at the community center.",
    "Melanie plans to take her kids camping in two weeks.",
    "Caroline met her new mentor a couple of weeks ago.",
    "Melanie visited the lake the other day with her kids.",
    "Caroline started volunteering at the shelter earlier this month.",
    "Melanie is going on a road trip next weekend.",
    "陈静近来每天晚上都会陪馒头玩半小时。",
    "许磊前阵子在公司连续加班了一个星期。",
    "陈静三天前带馒头去宠物医院打了疫苗。",
    "许磊两周后要去深圳出差见客户。",
    "陈静最近开始每周跑步三次备战半马。",
    "许磊这阵子一直在为小程序上线发愁。",
])
def test_a_fact_dated_relative_to_the_session_is_rejected(fact):
    v = ZH if "陈" in fact or "许" in fact else EN
    problems = _dated(fact, v)
    assert problems and ("relative" in problems[0] or "相对时间" in problems[0]), problems


@pytest.mark.parametrize("fact", [
    "Caroline took part in a pride parade on June 5, 2023.",
    "Melanie ran a charity race on 20 May 2023.",
    "Caroline adopted her dog Max on the 3rd of July, 2023.",
    "Melanie signed her kids up for swim lessons on 6/12/2023.",
    "Caroline moved into her new apartment on 2023-6-1.",
    "陈静在2024年3月13日跑步时扭伤了脚踝。",
    "许磊3月20号要去深圳出差见客户。",
    "陈静于二〇二四年三月一日领养了橘猫馒头。",
    "陈静在2024/03/01领养了一只三岁的橘猫。",
])
def test_a_day_not_written_yyyy_mm_dd_is_rejected(fact):
    v = ZH if "陈" in fact or "许" in fact else EN
    problems = _dated(fact, v)
    assert any("YYYY-MM-DD" in p for p in problems), problems


@pytest.mark.parametrize("fact", [
    "Caroline attended an LGBTQ support group for the first time on 2023-05-07.",
    "Melanie and her kids are thinking about going camping in June 2023.",
    "Jon took a short trip to Rome in mid-June 2023.",
    "Melanie is currently overwhelmed by managing kids and work.",
    "Gina created a new website last week before 2023-07-21.",  # dated beside the relative words
    "Melanie may 5 times a week swim at the pool near her home.",  # "may" is no month
    "Caroline ran three days in a row before the race in 2023-08.",
    "陈静于2024-03-01从宠物救助站领养了三岁的橘猫馒头。",
    "许磊将在2024年4月去深圳出差，与客户对接需求。",
    "陈静一直想养猫，2024年初搬进了允许养宠物的新家。",
    "陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。",
    "陈静家附近最近的公园有一条五公里的跑道。",  # 最近的: the nearest
    "林悦以前天天跑步，报名了半程马拉松。",
])
def test_dated_and_undated_state_facts_pass(fact):
    v = ZH if any(ch in fact for ch in "陈许林") else EN
    assert _dated(fact, v) == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200)
       | st.text(alphabet="昨天最近上周年月日号0123456789-/ 前后两三几", max_size=40))
def test_the_date_readers_take_any_text(text):
    for fn in (says_relative_time, undated_relative_time, day_not_iso, first_person):
        found = fn(text)
        assert found is None or isinstance(found, str)
    share, covered = quoted_share(text, "Melanie and her kids are thinking about going camping in June 2023.",
                                  ["Melanie"])
    assert 0 <= share <= 1 and covered >= 0


def test_a_lone_surrogate_or_emoji_in_a_fact_is_read_not_raised():
    assert undated_relative_time("Caroline \ud800 went 🏳️‍🌈 yesterday") == "yesterday"
    assert day_not_iso("陈静\u200f在2024年3月13日😺领养了猫") == "3月13日"


# --- "yesterday" dated as the session's own day (extract) ------------------------------------

SESSION_EN = {**EN, "date": "2023-05-08", "turns": [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I'm off to go swimming with the kids today!"],
    "notes": ["Caroline attended an LGBTQ support group recently."]}
SESSION_ZH = {**ZH, "date": "2024-03-02", "turns": [
    "陈静: 我昨天去宠物救助站领养了一只三岁的橘猫，叫馒头。", "许磊: 今天部门开会，我被调去负责新项目了。"], "notes": []}


def _extracted(fact: str, about: str) -> ExtractedMemories:
    return ExtractedMemories(memories=[{"fact": fact, "about": about}])


@pytest.mark.parametrize(("fact", "about", "v", "ok"), [
    ("Caroline went to her first LGBTQ support group on 2023-05-08.", "Caroline", SESSION_EN, False),
    ("Caroline attended an LGBTQ support group on 2023-05-07.", "Caroline", SESSION_EN, True),
    ("Melanie went swimming with her kids on 2023-05-08.", "Melanie", SESSION_EN, True),
    ("As of 2023-05-08, Caroline feels accepted by her LGBTQ support group.", "Caroline", SESSION_EN, True),
    ("陈静于2024-03-02从宠物救助站领养了一只三岁的橘猫馒头。", "陈静", SESSION_ZH, False),
    ("陈静于2024-03-01从宠物救助站领养了一只三岁的橘猫馒头。", "陈静", SESSION_ZH, True),
    ("许磊在2024-03-02被调去负责部门的新项目。", "许磊", SESSION_ZH, True),
])
def test_yesterday_is_the_day_before_the_session(fact, about, v, ok):
    assert (list(checks.yesterday_dated(_extracted(fact, about), v)) == []) is ok


@pytest.mark.parametrize(("fact", "about", "v", "ok"), [
    ("Caroline wants to work in counselling on 2023-05-08.", "Melanie", EN, False),  # held-out r7
    ("Caroline wants to work in counselling on 2023-05-08.", "Caroline", EN, True),
    ("Caroline told Melanie about her adoption plans on 2023-05-08.", "Melanie", EN, True),  # both named
    ("许磊小时候家里养过猫，后来发现自己对猫毛有点过敏。", "陈静", ZH, False),  # held-out r4
    ("许磊小时候家里养过猫，后来发现自己对猫毛有点过敏。", "许磊", ZH, True),
    ("馒头是陈静在2024-03-01领养的橘猫。", "馒头", ZH, False),  # no speaker at all
])
def test_a_fact_is_about_the_one_speaker_it_names(fact, about, v, ok):
    """"Set `about` to the person the fact is about": the speaker it names, when it names one."""
    assert (list(checks.known_speakers(_extracted(fact, about), v)) == []) is ok


# --- a query that quotes a memory with a few words changed ------------------------------------

MEMORIES_EN = {**EN, "human": "Caroline", "virtual_person": "Melanie", "memories": [
    {"number": 13, "fact": "Melanie and her kids are thinking about going camping in June 2023."},
    {"number": 10, "fact": "Melanie ran a charity race for mental health on 2023-05-20."}]}
MEMORIES_ZH = {**ZH, "human": "许磊", "virtual_person": "陈静", "memories": [
    {"number": 9, "fact": "陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。"},
    {"number": 15, "fact": "陈静的猫馒头不爱吃干粮，试了三种猫粮都只舔两口。"}]}


@pytest.mark.parametrize(("query", "v", "ok"), [
    ("So you and your kids were thinking about going camping in June 2023, did that happen?", MEMORIES_EN, False),
    ("You ran a charity race for mental health back on 2023-05-20, right? How did it go?", MEMORIES_EN, False),
    ("你在2024-03-13跑步时扭伤了脚踝，医生让你歇两周，现在好点了吗？", MEMORIES_ZH, False),
    ("你的猫馒头还是不爱吃干粮吗？试了三种猫粮都只舔两口？", MEMORIES_ZH, False),
    ("Did you and the kids end up going camping this month?", MEMORIES_EN, True),
    ("How are you feeling after that charity race — still running?", MEMORIES_EN, True),
    ("脚踝现在恢复得怎么样了？五月那场比赛还来得及准备吗？", MEMORIES_ZH, True),
    ("馒头现在肯好好吃饭了吗？之前换的那几种猫粮有它爱吃的吗？", MEMORIES_ZH, True),
])
def test_a_query_that_restates_a_memory_is_a_quote(query, v, ok):
    assert (list(checks.does_not_quote_memories(UserQuery(query=query, targets=[1]), v)) == []) is ok


@pytest.mark.parametrize(("query", "v", "ok"), [
    ("Caroline here — did you and the kids go camping yet?", MEMORIES_EN, False),
    ("对了许磊，你表姐那边帮我问了吗？", MEMORIES_ZH, False),
    ("Melanie, did you and the kids go camping yet?", MEMORIES_EN, True),
    ("陈静，馒头现在肯吃干粮了吗？", MEMORIES_ZH, True),
])
def test_a_query_never_names_its_own_speaker(query, v, ok):
    assert (list(said_by_the_speaker(UserQuery(query=query, targets=[1]), v)) == []) is ok


OWN_EN = {**EN, "human": "Caroline", "virtual_person": "Melanie", "memories": [
    {"number": 1, "fact": "Caroline plans to explore career options in counseling."},
    {"number": 2, "fact": "Melanie painted a lake sunrise in 2022."}]}
OWN_ZH = {**ZH, "human": "许磊", "virtual_person": "陈静", "memories": [
    {"number": 1, "fact": "许磊的新领导人很好，但对工作要求很高。"},
    {"number": 2, "fact": "陈静的猫馒头不爱吃干粮，试了三种猫粮都只舔两口。"}]}


@pytest.mark.parametrize(("query", "targets", "v", "ok"), [
    # The speaker's own life asked of "you": the character asking the speaker, the wrong way round.
    ("So are you still thinking of moving into counseling after all?", [1], OWN_EN, False),
    ("新领导要求那么高，没让你又连着加班吧？", [1], OWN_ZH, False),
    ("I'm still torn about counseling. Do you think I'd be any good at it?", [1], OWN_EN, True),
    ("我那个新领导要求可高了，你说我该怎么跟他相处？", [1], OWN_ZH, True),
    ("Is that lake sunrise still your favourite painting?", [2], OWN_EN, True),
    ("新领导要求那么高，馒头肯吃干粮了没？你说呢？", [1, 2], OWN_ZH, True),
    # the speaker's own people called the character's (held-out r6, r10)
    ("对了，你新领导那边有回音了吗？我还挺发愁的。", [2], OWN_ZH, False),
    ("我新领导要求挺高的，你说我该怎么办？", [1], OWN_ZH, True),
])
def test_a_query_asks_the_character_not_the_speaker_about_their_own_life(query, targets, v, ok):
    assert (list(asks_the_character(UserQuery(query=query, targets=targets), v)) == []) is ok


@pytest.mark.parametrize(("query", "ok"), [
    ("脚踝现在恢复得怎么样了？五月那场比赛还来得及准备吗？", True),
    ("馒头真会享受！它现在肯吃干粮了吗？你的脚踝好利索了没？半马训练恢复了吗？", False),
    ("How are the kids? Did the camping trip happen? And the race??", False),
    ("Did you and the kids ever make it out camping?", True),
])
def test_a_query_asks_one_question_or_one_and_its_follow_up(query, ok):
    assert (list(one_question(UserQuery(query=query, targets=[1]), ZH)) == []) is ok


@settings(max_examples=150, deadline=None)
@given(query=st.text(alphabet=st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["你？？？", "ｙｏｕ?", "我\u202e你", "\ud800你", "\x00?"]), targets=st.lists(st.integers(0, 3), max_size=3))
def test_the_query_form_readers_take_any_text(query, targets):
    for v in (OWN_EN, OWN_ZH):
        q = UserQuery.model_construct(query=query, targets=targets)
        assert all(isinstance(p, str) for p in [*one_question(q, v), *asks_the_character(q, v)])


# --- sentence counts the prompts state ---------------------------------------------------------

def _check(stage, name):
    return next(c for c in stage.checks if c.name == name)


@pytest.mark.parametrize(("rationale", "ok"), [
    ("The question asks about the camping plan, and this is that plan.", True),
    ("The question asks about the camping plan. This memory is that plan.", False),
    ("问题问的是馒头挑食的事，这条记忆正好说明了它不爱吃干粮。", True),
    ("问题问的是馒头挑食的事。这条记忆正好说明了它不爱吃干粮。", False),
])
def test_a_rationale_is_one_sentence(rationale, ok):
    labels = RoleLabels(labels=[{"index": 1, "role": "must", "rationale": rationale}])
    v = {"language": "zh" if "问" in rationale else "en"}
    assert (list(_check(LABEL, "sentences_labels_rationale")(labels, v)) == []) is ok


@pytest.mark.parametrize(("analysis", "ok"), [
    ("The reply answers with the race date and nothing else.", True),
    ("The reply answers with the race date. It adds nothing else.", True),
    ("The reply answers with the race date. It then brings up painting. The link is weak.", False),
    ("回复只用了扭伤这条记忆，回答得体。", True),
    ("回复用了扭伤的记忆。又提到了馒头。这与问题无关。", False),
])
def test_an_miq_analysis_is_a_sentence_or_two(analysis, ok):
    score = IntegrationScore(failures=[], analysis=analysis, score=5)
    v = {"language": "zh" if "回复" in analysis else "en"}
    assert (list(_check(MIQ, "sentences_analysis")(score, v)) == []) is ok


def _persona(summary: str, style: list[str] | None = None, name: str = "Melanie") -> VirtualPersona:
    return VirtualPersona(virtual_person_name=name, summary=summary, traits=["warm"] * 6,
                          style=style or ["casual"] * 5, domains=["art"] * 4, values=["family"] * 5)


@pytest.mark.parametrize(("summary", "ok"), [
    ("Melanie is a busy mom. She paints. She runs.", True),
    ("Melanie is a busy mom. She paints.", False),
    ("Melanie is a busy mom. She paints. She runs. She reads. She swims. She plays violin.", False),
    ("陈静是一名护士。她性格开朗。她喜欢跑步。", True),
    ("陈静是一名护士。她性格开朗。", False),
])
def test_a_persona_summary_is_three_to_five_sentences(summary, ok):
    name = "陈静" if "陈静" in summary else "Melanie"
    v = {"language": "zh" if name == "陈静" else "en", "virtual_person": name}
    assert (list(_check(PERSONA, "sentences_summary")(_persona(summary, name=name), v)) == []) is ok


@pytest.mark.parametrize(("summary", "style", "ok"), [
    ("I'm Melanie, a busy mom of two. I paint to relax. I love camping with my kids.", None, False),
    ("Melanie is a busy mom of two. She paints to relax. My kids and camping are her joy.", None, False),
    ("我是陈静，一名护士。我喜欢跑步。我养了一只橘猫。", None, False),
    ("陈静是一名护士，性格开朗。她喜欢跑步。我平时最爱和朋友聊猫。", None, False),
    ("Melanie is a busy mom of two. She paints to relax. She loves camping with her kids.",
     ["Often says \"I mean\" before a point", "Calls friends 'my dear'", "casual", "warm", "brief"], True),
    ("陈静是一名护士，性格开朗，我行我素。她喜欢跑步。她注重自我成长。",
     ["常说“我觉得”", "语气轻快", "爱用“啦”", "常说“哈哈”", "直来直去"], True),
])
def test_a_persona_describes_the_character_not_speaks_as_them(summary, style, ok):
    name = "陈静" if "陈静" in summary else "Melanie"
    v = {"language": "zh" if name == "陈静" else "en", "virtual_person": name}
    assert (list(persona_described(_persona(summary, style, name), v)) == []) is ok


# --- a persona's traits and domains --------------------------------------------------------------

_SESSIONS_ZH = [{"time": "2024年3月2日 19:20", "notes": ["许磊在为一家连锁药店开发会员小程序，压力较大。",
                                                      "陈静昨天领养了一只橘猫，取名馒头。"],
                 "lines": ["哇，什么项目？", "我昨天去宠物救助站领养了一只三岁的橘猫，叫馒头。"]}]


@pytest.mark.parametrize(("domains", "ok"), [
    (["养猫与宠物照顾", "朋友的工作近况"], True),
    (["养猫与宠物照顾", "小程序开发与上线"], False),
    (["养猫与宠物照顾", "连锁药店的压力"], False),
])
def test_a_domain_is_the_character_s_not_the_other_speaker_s(domains, ok):
    from flows.stratmem.form_checks import domains_of_the_character

    persona = VirtualPersona.model_construct(domains=domains, traits=[])
    v = {**ZH, "human": "许磊", "virtual_person": "陈静", "sessions": _SESSIONS_ZH}
    found = list(domains_of_the_character(persona, v))
    assert (found == []) is ok, found
    if not ok:
        assert "是许磊的话题" in found[0]


@pytest.mark.parametrize(("traits", "v", "ok"), [
    (["热情开朗", "爱开玩笑"], ZH, True),
    (["对朋友热情开朗，见面第一句就关心对方最近过得怎么样"], ZH, False),
    (["curious about others' experiences"], EN, True),
    (["warm and friendly to everyone she meets at the support group on Sundays"], EN, False),
])
def test_a_trait_is_a_short_phrase(traits, v, ok):
    from flows.stratmem.form_checks import short_traits

    assert (list(short_traits(VirtualPersona.model_construct(traits=traits, domains=[]), v)) == []) is ok


@settings(max_examples=150, deadline=None)
@given(items=st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=20) | st.sampled_from(
    ["小程序开发", "ｐａｉｎｔｉｎｇ", "🙂", "\u202e许磊", "\ud800", "\x00"]), max_size=5))
def test_the_persona_readers_take_any_text(items):
    from flows.stratmem.form_checks import domains_of_the_character, short_traits

    persona = VirtualPersona.model_construct(domains=items, traits=items)
    for v in (ZH, EN):
        v = {**v, "human": "许磊", "virtual_person": "陈静", "sessions": _SESSIONS_ZH}
        assert all(isinstance(p, str) for p in [*short_traits(persona, v), *domains_of_the_character(persona, v)])
