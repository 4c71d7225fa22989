"""pal's checks against mistakes nobody tuned them to (issue 51, the first held-out round): each
rule a held-out mistake slipped past is checked as a rule, on violations written here in en and
zh (other wordings than the held-out ones), beside answers that keep the rule."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flows.pal import prose_checks as pp
from flows.pal.rules import RULES
from flows.pal.stages import STAGES
from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR
from memsynth.generation.rules import prompt_lines
from memsynth.quality.textrules import clock
from schemas.pal import AspectPreferences, Experience, SessionRequirements, Timeline

RULE = {r.id: r for r in RULES}


def _lang(v: dict, language: str) -> dict:
    return {**v, "language": language}


# --- the-user: every stage whose prompt says "the user, never by name" checks it ----------


def _stages_tagged(rule_id: str) -> set[str]:
    tagged = set()
    for template in (DEFAULT_PROMPTS_DIR / "pal").glob("*.j2"):
        if any(rule_id in line.ids for line in prompt_lines(template.read_text(encoding="utf-8"))):
            tagged.add(template.name.split(".")[0])
    return tagged


def test_every_stage_whose_prompt_forbids_the_name_checks_it():
    stages = {s.name: s for s in STAGES}
    tagged = _stages_tagged("the-user")
    assert {"timeline", "preferences", "experience", "dialogue"} <= tagged
    for name in tagged:
        assert "user_not_named" in {c.name for c in stages[name].checks}, name
        assert f"{name}.user_not_named" in RULE["the-user"].checks, name


MONTHS = ("2024-10", "2024-11")
ZH_OK = "用户本月在车间值了三次夜班。妻子陪女儿去参加了钢琴考级。用户周末去太湖边钓了一次鱼。腰痛复发后他去社区医院做了理疗。月底公司开了年度质量总结会。"


@pytest.mark.parametrize(("summary", "language", "ok"), [
    (ZH_OK, "zh", True),
    (ZH_OK.replace("用户周末", "孙立伟周末"), "zh", False),
    (ZH_OK.replace("月底公司", "月底同事们喊着“老孙”，公司"), "zh", False),
    ("The user worked three night shifts. His wife took their daughter to a piano exam. He went fishing once. "
     "His back pain came back. The plant held its year-end review.", "en", True),
    ("The user worked three night shifts. His wife took their daughter to a piano exam. Liwei went fishing once. "
     "His back pain came back. The plant held its year-end review.", "en", False),
])
def test_timeline_names_no_user(summary, language, ok):
    out = Timeline(months=[{"month": m, "summary": summary} for m in MONTHS])
    v = _lang({"profile": {"name": "孙立伟" if language == "zh" else "Liwei Sun"}, "months": list(MONTHS)}, language)
    problems = pp.user_not_named(out, v)
    assert (problems == []) is ok, problems


@pytest.mark.parametrize(("pos", "ok"), [
    ("用户喜欢能在工位上完成的小动作。用户愿意用手环提醒自己起身。用户接受按步骤写好的康复计划。", True),
    ("老孙喜欢能在工位上完成的小动作。用户愿意用手环提醒自己起身。用户接受按步骤写好的康复计划。", False),
])
def test_preferences_name_no_user(pos, ok):
    out = AspectPreferences(items=[{"requirement_id": "health-1", "analysis": "用户久坐。", "pos": pos,
                                    "neg": "用户不想去健身房。用户不愿花钱请私教。用户反感需要请假的疗程。"}])
    problems = pp.user_not_named(out, {"profile": {"name": "孙立伟"}, "language": "zh"})
    assert (problems == []) is ok, problems


# --- experience-ends: the span's end is when the dialogue starts, so a time at it is too late --

SPAN = {"profile": {"name": "孙立伟"}, "time_span": "2024-11-06 09:00 ~ 2024-11-11 20:00",
        "span_end": "2024-11-11 20:00"}


@pytest.mark.parametrize(("text", "ok"), [
    ("11月11日周一下午，用户在车间抽检卡钳。傍晚六点半他开车回家，七点多吃了晚饭。", True),
    ("11月11日周一下午，用户在车间抽检卡钳，赶在晚上八点前回到了家。", True),
    ("11月11日周一下午，用户在车间抽检卡钳。晚上八点，他坐在沙发上打开手机想问问该怎么办。", False),
    ("11月11日周一下午，用户在车间抽检卡钳。20:00，他打开了手机。", False),
    ("On Monday 11 November the user checked calipers on the line and was home before 8 pm.", True),
    ("On Monday 11 November the user checked calipers on the line. At 8 pm he sat down with his phone.", False),
    # a deadline past the span, with its weekday in brackets (held-out r9's acceptable experience)
    ("11月7日上午，用户和王建国商定11月15日（星期五）前把整改报告提交给客户。", True),
    ("11月7日上午，用户和王建国商定11月15日前把整改报告提交给客户。", True),
    ("11月7日上午，用户开会。11月15日（星期五），他把整改报告交给了客户。", False),
])
def test_nothing_at_the_spans_end(text, ok):
    problems = pp.stays_in_span(Experience(experience=text), _lang(SPAN, "zh" if "用户" in text else "en"))
    assert (problems == []) is ok, problems


# --- evidences: facts without dates; vague-query: no day, figure or person in the query ----


def _framework(query: str, evidences: list[str]) -> SessionRequirements:
    return SessionRequirements(topics=[{
        "requirement_id": "health-1", "user_query": query, "requirement": "找到工作日里能随时做的护腰办法",
        "implicit_needs": [{"need": "不占时间的护腰动作", "evidences": evidences},
                           {"need": "能坚持的提醒方式", "evidences": ["用户常常忘记起身"]}]}])


@pytest.mark.parametrize(("evidence", "ok"), [
    ("用户连续几天加班到晚上十点", True),
    ("经理要求周三前补齐验证数据", True),  # a deadline is the fact, not a date
    ("用户每周三晚上去打羽毛球", True),
    ("用户周一到周五都在车间站班", True),
    ("用户一周三次在工位上吃午饭", True),
    ("The user worked late every Wednesday", True),
    ("The report is due by Friday", True),
    ("11月8日用户在电脑前坐了一整天", False),
    ("用户上周五在车间站了三个小时", False),
    ("2024-11-08 用户腰痛发作", False),
    ("用户昨天去社区医院做了理疗", False),
    ("2024年11月用户做了两次理疗", False),
    ("On Nov 8 the user sat at the computer all day", False),
    ("On 8 November the user sat at the computer all day", False),
    ("Last Tuesday the user stood on the line for three hours", False),
    ("The user saw the physio the next day", False),
    # a27: the day of a named event is no date; a day said as that day, of someone, is
    ("抽检当天傍晚用户的腰又疼了起来", True),
    ("用户当天去社区医院做了理疗", False),
    ("用户和老周一起核对了量具台账", True),
])
def test_evidences_carry_no_date(evidence, ok):
    problems = pp.undated_evidences(_framework("腰又疼了怎么办？", ["用户腰椎间盘突出", evidence]),
                                    _lang({}, "zh" if "用户" in evidence else "en"))
    assert (problems == []) is ok, problems
    if not ok:
        assert "evidence 2" in problems[0] or "第 2 条" in problems[0]


@pytest.mark.parametrize(("evidence", "ok"), [
    ("用户连续几天在电脑前整理检验记录到晚上十点", True),
    ("医生建议减少久坐、每小时起身活动", True),
    ("The user stood on the line for three hours", True),
    # held-out r3, r4, r8, r10: a conclusion drawn from the fact
    ("用户连续几天在电脑前整理检验记录到晚上十点，说明久坐是这次腰痛复发的主要诱因", False),
    ("医生建议减少久坐、每小时起身活动，说明用户需要能在工位上随时做的简单动作", False),
    ("The user stood on the line for three hours, which shows standing is the trigger", False),
])
def test_evidences_are_facts_without_analysis(evidence, ok):
    problems = pp.evidences_are_facts(_framework("腰又疼了怎么办？", ["用户腰椎间盘突出", evidence]),
                                      _lang({}, "zh" if "用户" in evidence or "医生" in evidence else "en"))
    assert (problems == []) is ok, problems
    if not ok:
        assert ("只写事实" in problems[0]) == ("用户" in evidence or "医生" in evidence)


@pytest.mark.parametrize(("query", "ok"), [
    ("腰又开始疼了，怎么办好？", True),
    ("找个心理医生有用吗？", True),
    ("项目经理总催我，怎么办？", True),
    ("My back hurts again, any ideas?", True),
    ("王经理让我周三前补数据，怎么弄？", False),
    ("报告下周一要交，怎么写快？", False),
    ("腰疼了3天了，怎么办？", False),
    ("Dr Patel wants it redone, what now?", False),
    ("The report is due Friday, how do I finish it?", False),
])
def test_the_opening_query_carries_no_detail(query, ok):
    problems = pp.query_without_details(_framework(query, ["用户腰椎间盘突出"]), {"language": "zh"})
    assert (problems == []) is ok, problems


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_dates_and_query_details_take_any_text(text):
    assert all(isinstance(d, str) and d for d in clock.dates(text))
    assert all(isinstance(d, str) and d for d in pp.query_details(text))


# --- profile-example: no profile copies the prompt's example ------------------------------


def _pal_profile(**over) -> dict:
    base = dict(name="覃小满", gender="女", age=28, occupation="用户在百色一家芒果合作社做电商直播。旺季常忙到凌晨。",
                health_status="用户有慢性咽炎。她还有轻度贫血。", family_members="用户和男友同居。弟弟在县城读高中。",
                hobbies="用户喜欢刷短视频。她也爱去KTV唱歌。",
                personality=dict(openness="high", conscientiousness="medium", extraversion="high",
                                 agreeableness="low", neuroticism="medium"))
    return {**base, **over}


@pytest.mark.parametrize("language", ["zh", "en"])
def test_no_profile_copies_the_example(language):
    from flows.pal.checks import profile_example, unlike_the_example
    from schemas.pal import PalProfiles

    example = profile_example(language)
    assert example["name"] and example["personality"]  # read from the template the model is shown
    v = {"language": language}
    assert unlike_the_example(PalProfiles(profiles=[_pal_profile()]), v) == []
    # The example's Big Five levels alone are no copy a check rejects (the shared corpus's acceptable
    # profiles carry them; the audit judge reads it, rule profile-example-substance).
    assert unlike_the_example(PalProfiles(profiles=[_pal_profile(personality=example["personality"])]), v) == []
    copied_job = example["occupation"].replace("十二", "十五").replace("twelve", "fifteen")
    for over in ({"name": example["name"]}, {"occupation": copied_job}, {"hobbies": example["hobbies"]}):
        assert unlike_the_example(PalProfiles(profiles=[_pal_profile(**over)]), v), over


# --- eval-proposal / candidates: one solution, not a list of them ----------------------------


@pytest.mark.parametrize(("text", "ok"), [
    ("把腰靠固定在办公椅后腰处，配合每小时的起身提醒，每次站起来做两分钟后伸。", True),
    ("用番茄工作法安排报告修改；每25分钟专注一段，休息5分钟。", True),  # one ； elaborates
    ("第一步先固定腰靠，第二步设置每小时提醒。", True),  # the steps of one plan
    ("Fix the cushion to your chair first, then set an hourly reminder to stand.", True),
    ("Buy a 2-in-1 cushion for 30 dollars and use it at 10:30 every day.", True),
    ("办法一：用好腰靠；办法二：每小时起身；办法三：垫抗疲劳垫。", False),
    ("其一是用好腰靠，其二是每小时起身活动。", False),
    ("一来用好腰靠，二来每小时起身活动一下。", False),
    ("用好腰靠；每小时起身活动；车间里垫抗疲劳垫。", False),
    ("(1) 用好腰靠 (2) 每小时起身活动", False),
    ("Firstly, use the cushion; secondly, stand up every hour.", False),
    ("Option A: a lumbar cushion, option B: an hourly alarm.", False),
    ("Use the cushion; stand up every hour; put a mat on the shop floor.", False),
])
def test_one_solution_is_no_list(text, ok):
    from flows.pal.evaluation import one_solution
    from schemas.pal import ProposedSolution

    language = "en" if text[0].isascii() else "zh"
    problems = one_solution(ProposedSolution(solution=text), {"language": language})
    assert (problems == []) is ok, problems
    assert _one_candidate(text, language) is ok


def _one_candidate(text: str, language: str) -> bool:
    """Whether one_solution_each passes `text` among seven other, distinct candidates."""
    from schemas.pal import Candidates

    candidates = Candidates(topics=[{"requirement_id": "health-1", "solutions": [text] + [
        f"另一条彼此不同的方案{k}号。" for k in "ABCDEFG"]}])
    return pp.one_solution_each(candidates, {"language": language}) == []


@pytest.mark.parametrize(("text", "ok"), [
    # two means of one step name what it acts on in both halves (held-out r26, a29)
    ("把办公椅换成带腰托的人体工学椅，或者在现有椅子上加一个可调节高度的腰靠。", True),
    ("请家人晚上帮忙按摩腰部，或者用按摩枪放松腰背肌肉。", True),
    ("Swap the chair for one with lumbar support, or add a lumbar cushion to the chair you have.", True),
    # two plans share nothing of it (r15)
    ("把写整改报告的一部分工作改成站着做，比如把笔记本电脑架到高台面上，或者先用语音输入口述初稿。", False),
    ("每天做十分钟拉伸，或者周末去游泳。", False),
    ("Stretch for ten minutes a day, or alternatively join a weekend swimming class.", False),
])
def test_two_means_of_one_step_are_one_candidate(text, ok):
    language = "en" if text[0].isascii() else "zh"
    assert _one_candidate(text, language) is ok


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_enumerated_takes_any_text(text):
    from memsynth.quality.textrules.forms import enumerated

    assert all(isinstance(m, str) for m in enumerated(text))


# --- choices-verbatim: a reason from the user's point of view -------------------------------


@pytest.mark.parametrize(("reason", "ok"), [
    ("I'd rather stay another night than have a colleague pick holes in my report.", True),
    ("If they get their own template back line by line, there is nothing left to reject.", True),
    ("照着客户的模板一项项填，就不会再因为格式被退回。", True),
    ("让同事来挑我报告的毛病，我宁可自己多熬一晚。", True),
    ("She would rather stay another night than let a colleague pick holes in her report.", False),
    ("The user dislikes asking the customer for favours before the report is ready.", False),
    ("他宁可自己多熬一晚，也不想让同事挑毛病。", False),
    ("用户不愿意去求客户通融。", False),
])
def test_a_reason_speaks_as_the_user(reason, ok):
    from schemas.pal import SolutionPreferences

    good = {"solution": "x", "reason": "我最放心。"}
    out = SolutionPreferences(analysis="-", liked=[good, good], disliked=[good, {"solution": "y", "reason": reason}])
    problems = pp.reasons_in_users_voice(out, {"language": "en"})
    assert (problems == []) is ok, problems


def _types(**aspects: list[str]):
    from schemas.pal import RequirementTypes

    base = {a: [f"{a} need {i}" for i in range(4)] for a in ("work", "health", "family", "leisure")}
    return RequirementTypes(**{**base, **aspects})


@pytest.mark.parametrize(("phrase", "language"), [("在11月15日前交出整改报告", "zh"), ("finish the audit report by 15 November", "en"),
                                                  ("准备周三前的季度汇报", "zh"), ("准备12月年终质量总结会的数据汇报", "zh"),
                                                  ("prepare the December year-end review", "en")])
def test_a_requirement_type_that_is_a_dated_task_is_rejected(phrase, language):
    """"Covers the user's long-term situation, not a one-off request" (requirement_types.j2)."""
    problems = list(pp.lasting_requirement_types.fn(_types(work=["keeping work and rest in balance", phrase,
                                                                   "w2", "w3"]), {"language": language}))
    assert len(problems) == 1 and phrase in problems[0]


@pytest.mark.parametrize(("phrase", "language", "ok"), [
    ("准备年终质量数据汇报", "zh", False), ("按期提交本次审核的整改报告", "zh", False),  # held-out r5, r6
    ("应对这次客户审核", "zh", False), ("prepare this year's audit report", "en", False),
    ("meet the upcoming audit deadline", "en", False), ("年度质量目标的持续跟进", "zh", True),
    ("应对客户审核带来的工作压力", "zh", True), ("keeping up with yearly audits", "en", True),
    ("handling recurring quality audits", "en", True),
    ("处理年会后脚趾红肿", "zh", False), ("聚餐后控制尿酸", "zh", True),  # held-out r15, r17; a recurring meal
    ("处理年会饮酒后的脚趾红肿", "zh", False),  # held-out r18
    ("出差期间坚持锻炼", "zh", True)])
def test_a_requirement_type_naming_one_occasion_is_rejected(phrase, language, ok):
    """One occasion named without a date ("本次", "年终", "this year's") is a one-off task too;
    a recurring one ("年度", "yearly") is a lasting kind of help."""
    problems = list(pp.lasting_requirement_types.fn(_types(work=["keeping work and rest in balance", phrase,
                                                                   "w2", "w3"]), {"language": language}))
    assert (problems == []) is ok, problems
    if not ok:
        assert "一次" in problems[0] if language == "zh" else "one-off" in problems[0]


@pytest.mark.parametrize(("phrase", "language", "ok"), [
    ("在长期加班久坐和车间站立检验的工作状态下缓解腰椎间盘突出引起的腰部酸胀疼痛", "zh", False),  # held-out r4
    ("兼顾繁重质检工作与腰椎健康的长期平衡需求", "zh", True),  # 20 characters: the bound
    ("兼顾繁重质检工作与腰椎健康的长期平衡需求啊", "zh", False),
    ("easing the back pain that long shifts standing at the inspection bench bring on", "en", False),
    ("keeping work and rest in balance", "en", True),
])
def test_a_requirement_type_that_is_no_short_phrase_is_rejected(phrase, language, ok):
    """"Each is a short abstract phrase" (requirement_types.j2): at most 20 characters, 10 words."""
    problems = list(pp.short_requirement_types.fn(_types(health=[phrase, "h1", "h2", "h3"]), {"language": language}))
    assert (problems == []) is ok, problems
    if not ok:
        assert len(problems) == 1 and phrase in problems[0]


def test_no_released_requirement_type_is_called_a_dated_task():
    """Calibration: PAL-Set's 1,760 released requirement types (100 users × 4 aspects) all pass,
    as dated tasks and as short phrases."""
    import json

    from tests.conftest import ROOT

    released = ROOT.parent / "shared" / "reference-data" / "pal" / "requirement.json"
    if not released.is_file():
        pytest.skip(f"PAL-Set release not found at {released}")
    users = json.loads(released.read_text(encoding="utf-8"))
    for aspects in users.values():
        lists = {a: list(items.values()) for a, items in aspects.items()}
        lists = {a: (v + v)[:max(4, min(5, len(v)))] for a, v in lists.items()}
        assert list(pp.lasting_requirement_types.fn(_types(**lists), {"language": "zh"})) == []
        assert list(pp.short_requirement_types.fn(_types(**lists), {"language": "zh"})) == []


_CANDIDATES = {"candidates": [{"id": i} for i in range(1, 9)]}


@pytest.mark.parametrize(("analysis", "chosen", "ok"), [
    ("……8. 抗疲劳垫只管车间久站。综合来看，2 和 6 最贴合他的情况和习惯。", [2, 7], False),  # held-out r4
    ("……8. 抗疲劳垫只管车间久站。综合来看，2 和 6 最贴合他的情况和习惯。", [2, 6], True),
    ("手环每45分钟提醒、做2分钟后伸。综合来看，方案6和方案3最合适。", [3, 6], True),  # 45, 2: durations
    ("Options 7 and 8 need approval. Overall, 2 and 6 suit him best.", [1, 5], False),
    ("方案7和8不合适，所以选2和6。", [2, 6], True),  # the conclusion names the rejected too
    ("每个方案都有道理，很难取舍。", [4, 5], True),  # no conclusion: nothing to compare
    ("……7号要走流程，一般。综合来看，2号和6号最合适。", [1, 5], False),  # held-out r7: ids from zero
    ("……7号要走流程，一般。综合来看，2号和6号最合适。", [2, 6], True),
    ("周三是11月13号，赶不上的都不选。综合来看，选2和6。", [2, 6], True),  # 11月13号 is a day
    # held-out r9: a conclusion that says only 综合来看 and what the two share
    ("……4. 伸展有效但难坚持，次选。综合来看，2和6最省时、最能融入他的工作日。", [2, 4], False),
    ("……4. 伸展有效但难坚持，次选。综合来看，2和6最省时、最能融入他的工作日。", [2, 6], True),
    ("……第8个只解决车间站立。因此选择第2和第6个方案。", [1, 5], False),  # held-out r10: ordinals
    ("……第8个只解决车间站立。因此选择第2和第6个方案。", [2, 6], True),
])
def test_the_ids_chosen_are_those_the_analysis_concludes_on(analysis, chosen, ok):
    """"Weigh the candidates … in `analysis`, then give the ids of the two that suit them best"."""
    from flows.pal.evaluation import choice_as_concluded
    from schemas.pal import SolutionChoice

    language = "en" if analysis.isascii() else "zh"
    problems = list(choice_as_concluded.fn(SolutionChoice(analysis=analysis, selected_solutions=chosen),
                                           {**_CANDIDATES, "language": language}))
    assert (problems == []) is ok, problems


@given(st.text(st.characters() | st.sampled_from("0123456789。，.;最合适选best"), max_size=200))
def test_a_conclusion_is_read_from_any_text_without_a_crash(analysis):
    """Any Unicode (CJK, full-width digits, emoji, RTL, lone surrogates): the ids it reads are
    listed candidates."""
    from flows.pal.evaluation import concluded_choice

    assert concluded_choice(analysis, set(range(1, 9))) <= set(range(1, 9))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=12) | st.sampled_from(
    ["说明", "ｗｈｉｃｈ ｓｈｏｗｓ", "🙂", "\u202e", "\ud800", "\x00", "考虑到你不太想", "那要不"]), max_size=6).map("".join))
def test_the_evidence_and_dialogue_readers_take_any_text(text):
    """CJK, full-width, emoji, RTL, NUL, lone surrogates: a verdict in the build's language, never a crash."""
    for language in ("zh", "en"):
        v = _lang({}, language)
        found = pp.evidences_are_facts(_framework("腰又疼了怎么办？", [text or "x"]), v)
        assert all(isinstance(p, str) for p in found)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_profile_calls_its_person_the_user_past_the_occupation(language):
    """The occupation may open with the name (as 10 of PAL-Set's 100 released profiles do); another
    field that names the person, by whole name or by given name, breaks "call them the user"."""
    from flows.pal.checks import profile_problems
    from schemas.pal import PalProfile

    name, given = ("覃小满", "小满") if language == "zh" else ("Daniel Okafor", "Daniel")
    base = _pal_profile(name=name)
    opened = {**base, "occupation": (f"{name}在光伏电站做运维工程师。" if language == "zh"
                                     else f"{name} runs maintenance at a solar farm.")}
    assert list(profile_problems(0, PalProfile(**opened), False, {"language": language})) == []
    for field in ("health_status", "family_members", "hobbies"):
        named = {**base, field: (f"{given}休班时喜欢去青海湖边露营。" if language == "zh"
                                 else f"{given} camps by the lake on his days off.")}
        problems = list(profile_problems(0, PalProfile(**named), False, {"language": language}))
        assert problems and field in problems[0], (field, problems)


# --- candidates-fit: a candidate does not move the deadline its need fixes ---------------------
@pytest.mark.parametrize("language,need,moved,kept", [
    ("zh", "用户需要在周三前补齐验证数据，以便11月15日前按期完成整改。",
     ["向经理申请把整改报告的提交期限延后一周。", "跟客户商量把截止日期推迟到月底。", "请求宽限几天再交报告。"],
     ["把剩下的工作拆成每天的小任务，避免最后延期。", "今晚先把抽检数据录完，不必推迟其他安排。"]),
    ("en", "The user needs the verification data in by Wednesday so the report goes out on time.",
     ["Ask the manager to push the deadline back a week.", "Request an extension of three days from the client.",
      "Postpone the submission until the data is complete."],
     ["Split the remaining work into daily tasks to avoid asking for an extension.",
      "Finish the data tonight rather than postpone anything else."]),
])
def test_no_candidate_moves_the_deadline_its_need_fixes(language, need, moved, kept):
    from flows.pal.candidate_checks import keeps_the_deadline
    from schemas.pal import Candidates

    v = {"language": language, "topics": [{"requirement_id": "work-1", "requirement": need},
                                          {"requirement_id": "health-1", "requirement": "缓解腰痛。" if language == "zh"
                                           else "Ease the back pain."}]}
    filler = ["方案。" if language == "zh" else "A plan."] * 7

    def topics(solution, rid="work-1"):
        return Candidates(topics=[{"requirement_id": rid, "solutions": [solution, *filler]}])

    for text in moved:
        assert keeps_the_deadline(topics(text), v), text
        # A need that fixes no deadline: nothing to move.
        assert keeps_the_deadline(topics(text, "health-1"), v) == [], text
    for text in kept:
        assert keeps_the_deadline(topics(text), v) == [], text
