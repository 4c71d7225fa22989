"""The false rejections and misses model-written answers showed, each fixed at its cause.

One test per cause: each fails if its fix is undone (see issue 29, section 2).
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, ValidationError

from flows.enpmr import checks as enpmr
from flows.enpmr.leaks import person_forms
from flows.pal import checks as pal
from flows.pal import evaluation as pal_eval
from flows.stratmem import checks as stratmem
from flows.stratmem.evaluation import evidence_is_quoted
from memsynth.core.textmatch import near_duplicates, sentences
from memsynth.generation.prompts import PromptLibrary
from memsynth.generation.stage import _validation_problems
from schemas.enpmr import (
    Faithfulness,
    LifeTheme,
    LifeThemes,
    PersonaDescription,
    ScenarioCheck,
    Scene,
    SupportDialogue,
)
from schemas.pal import Candidates, Dialogue, Experience, ProposedSolution, Restatement, SessionRequirements
from schemas.stratmem import ExtractedMemories, UseJudgment, UserQuery, VirtualPersona

ZH = {"language": "zh"}
EN = {"language": "en"}


# --- sentences --------------------------------------------------------------------------


def test_a_semicolon_joins_clauses_of_one_chinese_sentence():
    assert len(sentences("用户喜欢安静的运动；不喜欢人多的场合。")) == 1
    assert len(sentences("他先去了医院。然后回家了！累吗？还好……就这样")) == 5


def test_an_end_inside_quotation_marks_ends_the_quote_not_the_sentence():
    assert len(sentences("家属当众说她“年纪轻轻没经验！”，要求换人。")) == 1
    assert len(sentences("他说：“不行！”然后走了。她哭了。")) == 2


def test_english_abbreviations_do_not_end_a_sentence():
    assert len(sentences("Mr. Park likes quiet options, e.g. a walk in the park.")) == 1
    assert len(sentences("He likes walks. He hates crowds!")) == 2


def test_a_one_sentence_reason_with_a_semicolon_or_e_g_is_one_sentence():
    reason = "用户觉得这个方案太耗时间；而且要和陌生人打交道。"
    assert not list(pal._sentence_range(ZH, "reason", reason, 1, 1))
    assert not list(pal._sentence_range(EN, "reason", "It fits his habits, e.g. his hourly reminders.", 1, 1))


def test_preferences_count_semicolon_joined_statements_as_released_preferences_do():
    one_sentence_four_clauses = "用户倾向于A；他偏好B；他接受C；他愿意尝试D。"
    assert not list(pal._sentence_range(ZH, "pos", one_sentence_four_clauses, *pal.PREFERENCE_SENTENCES, clauses=True))
    six = "甲。乙。丙。丁。戊。己。"
    assert list(pal._sentence_range(ZH, "pos", six, *pal.PREFERENCE_SENTENCES, clauses=True))


# --- dates and relative time next to Chinese ---------------------------------------------


def test_an_iso_date_glued_to_chinese_text_is_checked():
    v = {**ZH, "span_end": "2024-11-11 20:00"}
    late = Experience(experience="11月11日晚上七点半，用户到家吃完晚饭。2024-11-12上午，用户把报告交给了经理。")
    assert any("2024-11-12" in p for p in pal.ends_before_session(late, v))
    assert not list(pal.ends_before_session(Experience(experience="2024-11-11上午，用户交了报告。"), v))


def test_chinese_relative_time_is_matched_on_words_not_inside_them():
    assert not stratmem.says_relative_time("林悦以前天天跑步，2024年报名了半马。")
    assert stratmem.says_relative_time("林悦前天领养了一只短毛猫。")
    assert list(stratmem.fact_problems("林悦前天领养了一只短毛灰猫。", ZH))
    assert not list(stratmem.fact_problems("林悦以前天天跑步，报名了半程马拉松。", ZH))
    assert list(stratmem.fact_problems("陈静上周初搬家后，终于可以养猫了。", ZH))  # jieba: 上/周初


# --- quotes and questions ------------------------------------------------------------------


def test_evidence_quoted_with_straight_apostrophes_from_a_curly_reply_is_quoted():
    v = {**EN, "response": "You’ve got this – remember Pebble’s first night?"}
    judged = UseJudgment(verdicts=[{"index": 1, "used": True, "evidence": "remember Pebble's first night"}])
    assert not list(evidence_is_quoted(judged, v))
    made_up = UseJudgment(verdicts=[{"index": 1, "used": True, "evidence": "Pebble slept all night"}])
    assert list(evidence_is_quoted(made_up, v))


def test_a_chinese_question_may_end_on_its_particle_and_a_tilde():
    for query in ("脚踝现在好点了，能跑了吗～", "馒头最近还挑食吗~换了猫粮没有呀", "五月那场比赛准备得怎么样了呢"):
        assert not list(stratmem.a_question(UserQuery(query=query, targets=[1]), ZH)), query
    assert list(stratmem.a_question(UserQuery(query="我想问一下那个比赛的事情然后", targets=[1]), ZH))


# --- English log formats as loose as the Chinese ones ----------------------------------------


@pytest.mark.parametrize(("kind", "content"), [
    ("message_sending", "The user texted his wife: 'Working late again.'"),
    ("message_sending", "The user messaged Mark in the metrology lab on Teams: 'Certificates by Friday?'"),
    ("web_search", "The user searched Amazon for 'lumbar support cushion' and viewed several models."),
    ("web_search", "The user used Google to search '8D corrective action example'."),
    ("device_operation", "The user shut down his work computer after saving the report."),
])
def test_natural_english_log_wording_passes(kind, content):
    assert pal.log_format_matches(kind, content, "en")


@pytest.mark.parametrize(("kind", "content"), [
    ("message_sending", "The user received a message from Mark: 'Got them.'"),
    ("web_search", "The user bought a lumbar cushion on Amazon."),
    ("message_receiving", "The user sent a message to his wife: 'Late again.'"),
])
def test_a_log_of_another_type_still_fails(kind, content):
    assert not pal.log_format_matches(kind, content, "en")


# --- repair messages state their bounds, in the answer's language ----------------------------


class _Bounded(BaseModel):
    items: list[int] = Field(min_length=2, max_length=3)
    title: str = Field(min_length=4, max_length=8, pattern=r"^[A-Z]")
    score: int = Field(ge=1, le=5)


@pytest.mark.parametrize(("data", "bound"), [
    ({"items": [1], "title": "Abcd", "score": 3}, "至少要有 2 个，实际 1 个"),
    ({"items": [1, 2, 3, 4], "title": "Abcd", "score": 3}, "至多 3 个，实际 4 个"),
    ({"items": [1, 2], "title": "Ab", "score": 3}, "至少要有 4 个字符"),
    ({"items": [1, 2], "title": "Abcdefghijk", "score": 3}, "至多 8 个字符"),
    ({"items": [1, 2], "title": "abcd", "score": 3}, "^[A-Z]"),
    ({"items": [1, 2], "title": "Abcd", "score": 0}, "不能小于 1"),
    ({"items": [1, 2], "title": "Abcd", "score": 9}, "不能大于 5"),
])
def test_every_chinese_schema_message_states_the_bound_it_enforces(data, bound):
    with pytest.raises(ValidationError) as caught:
        _Bounded.model_validate(data)
    problems = _validation_problems(caught.value, ZH)
    assert any(bound in p for p in problems), problems


def test_a_chinese_check_message_states_its_bound():
    v = {**ZH, "min_themes": 10, "window_start": "2019-12-02", "reference_date": "2024-12-02"}
    few = LifeThemes.model_construct(themes=[LifeTheme(theme=f"主题{i}", description="描述", start_date="2020-01-01")
                                             for i in range(3)])
    assert any("至少给出 10 个" in p for p in enpmr.enough_themes(few, v))


# --- enpmr: the memory leaks a model slips in --------------------------------------------------

TARGET_ZH = {"name": "张立新", "text": "在“教研组”期间，张立新（用户的师父，语文教研组长）与用户关系良好："
             "他每周听她两节课，逐字改她的教案，公开课前陪她磨了三遍。",
             "details": "张立新: 他每周听她两节课，逐字改她的教案，公开课前陪她磨了三遍。"}
V_ZH = {**ZH, "target": TARGET_ZH, "category": "relationship", "profile_summary": "{\"name\": \"林晓\"}",
        "scene": "林晓的公开课被校长当众点评为“缺乏设计”，她下课后躲在办公室里。", "need_description": "用户自卑",
        "theme_name": "教研组", "negatives": ["在“教研组”期间，王芳（用户的同事，数学老师）与用户关系良好：两人常一起吃午饭，聊家常。"]}


def _dialogue(*turns: str, memory_turn: int) -> SupportDialogue:
    return SupportDialogue(turns=[{"role": "user" if i % 2 == 0 else "ai", "content": t} for i, t in enumerate(turns)],
                           memory_turn=memory_turn)


def test_a_person_is_known_by_surname_and_title():
    assert {"张老师", "老张", "立新"} <= person_forms("张立新")
    assert "陈大爷" in person_forms("陈大爷") and "bennett" in person_forms("Mr Bennett")
    assert person_forms("进修中心考核组") == set() and person_forms("his daughter") == set()


def test_the_user_naming_the_targets_person_by_role_gives_the_memory_away():
    leak = _dialogue("今天的公开课砸了，要是张老师还在就好了。", "听起来你很难过。", "嗯。", "还记得他每周听你两节课吗？",
                     memory_turn=4)
    assert any("张老师" in p for p in enpmr.user_never_states_memory(leak, V_ZH))
    clean = _dialogue("今天的公开课被校长当众批评了。", "当众被这样说，一定很难受。", "我是不是不适合当老师？",
                      "还记得张立新每周听你两节课、逐字改教案吗？你是一步步磨出来的。", memory_turn=4)
    assert not list(enpmr.user_never_states_memory(clean, V_ZH))
    assert not list(enpmr.no_recall_before_memory_turn(clean, V_ZH))


def test_the_user_paraphrasing_the_memorys_details_gives_it_away():
    paraphrase = _dialogue("以前有人每周听我两节课、逐字改我的教案，现在没人管我了。", "这种感觉很孤单。", "是啊。",
                           "还记得张立新陪你磨了三遍公开课吗？", memory_turn=4)
    assert list(enpmr.user_never_states_memory(paraphrase, V_ZH))


def test_an_ai_turn_before_the_memory_turn_may_not_recall_it():
    early = _dialogue("公开课被批评了。", "想想张老师当年怎么带你的。", "我不知道。", "还记得张立新陪你磨了三遍公开课吗？",
                      memory_turn=4)
    assert any("turns[1]" in p for p in enpmr.no_recall_before_memory_turn(early, V_ZH))


def test_the_recall_may_not_use_a_negative():
    mixed = _dialogue("公开课被批评了。", "难受是正常的。", "我是不是不行？",
                      "还记得张立新陪你磨课吗？王芳也常陪你吃午饭聊家常。", memory_turn=4)
    assert list(enpmr.recall_avoids_negatives(mixed, V_ZH))


def test_a_judge_flag_needs_grounds_and_a_score_that_agrees():
    turns = [{"role": "user", "content": "公开课被批评了。"}, {"role": "ai", "content": "还记得张立新陪你磨了三遍公开课吗？"}]
    v = {**V_ZH, "turns": turns, "memory_turn": 2}
    base = {"grounded_in_target": True, "uses_negatives": False, "user_reveals_target": False,
            "recalled_early": False, "score": 2, "reason": "x"}
    assert list(enpmr.verdict_has_grounds(Faithfulness(**{**base, "user_reveals_target": True}), v))
    assert list(enpmr.verdict_has_grounds(Faithfulness(**{**base, "uses_negatives": True}), v))
    assert not list(enpmr.verdict_has_grounds(Faithfulness(**base), v))
    assert list(enpmr.faithfulness_score_agrees(Faithfulness(**{**base, "uses_negatives": True, "score": 5}), v))
    scene = {"fits_target": True, "expresses_need": True, "fits_a_negative": True, "score": 5, "reason": "x"}
    assert list(enpmr.scenario_score_agrees(ScenarioCheck(**scene), v))
    assert not list(enpmr.scenario_score_agrees(ScenarioCheck(**{**scene, "score": 3}), v))


def test_a_scene_is_two_to_four_sentences_and_names_none_of_the_targets_people():
    assert any("张" in p for p in enpmr.scene_form(Scene(scene="张老师退休了。林晓很失落，公开课也砸了。"), V_ZH))
    assert any("1" in p for p in enpmr.scene_form(Scene(scene="林晓的公开课被批评了"), V_ZH))
    assert not list(enpmr.scene_form(Scene(scene="林晓的公开课被校长批评。她躲进办公室，怀疑自己。"), V_ZH))


@pytest.mark.parametrize(("text", "said", "named"), [
    ("recognised by Mr Okafor's daughter: she sent a card", "I keep thinking about Mr Okafor.", True),
    ("recognised by Mr Okafor's daughter: she sent a card", "Mr Okafor's room was quiet.", True),
    ("recognised by Mr Okafor's daughter: she sent a card", "I sat with a patient all night.", False),
    ("得到欧阳大爷女儿的认可：家属寄来感谢卡", "我又想起了老欧阳。", True),
    ("得到欧阳大爷女儿的认可：家属寄来感谢卡", "欧阳大爷那天夜里睡不着。", True),
    ("得到欧阳大爷女儿的认可：家属寄来感谢卡", "我女儿今天放学早。", False),
])
def test_a_highlights_person_is_whom_the_recogniser_belongs_to(text, said, named):
    """Mr Okafor's daughter recognised it: the memory's person is Mr Okafor (and 欧阳, a
    two-character surname, is 老欧阳), never the bare kin word."""
    from flows.enpmr.leaks import Giveaway

    people = Giveaway.of({"text": text}, [], "highlight").people
    assert bool(Giveaway(people, frozenset()).in_text(said)) is named


def test_a_persona_is_prose_not_a_form():
    form = PersonaDescription(description="Occupation: nurse. Age: 30-34. Region: Leeds. Likes: singing, baking.")
    assert list(enpmr.persona_is_prose(form, EN))
    prose = PersonaDescription(description="Amira is a night-shift nurse in Leeds who sings in a choir; she worries "
                                           "about her mother, who lives alone.")
    assert not list(enpmr.persona_is_prose(prose, EN))


def test_near_duplicate_themes_under_two_titles_are_one_theme():
    v = {**ZH}
    others = [{"theme": t, "description": d, "start_date": "2023-05-01"} for t, d in [
        ("照顾父亲", "父亲轻度脑梗后，每周回家陪他复查"), ("学游泳", "每周两次去游泳馆练蛙泳"), ("搬家", "从城西搬到单位附近"),
        ("考职称", "准备中级职称考试"), ("带实习生", "第一次带两个实习治疗师"), ("学做菜", "跟着视频学川菜"),
        ("存钱买车", "每月存两千块"), ("组织同学会", "牵头组织大学十年同学会"), ("学摄影", "周末去公园拍鸟")]]
    twin = {"theme": "省医院进修学习", "description": "在省医院神经康复科进修一年，学习减重步态训练技术", "start_date": "2022-03-02"}
    first = {"theme": "神经康复专科进修", "description": "在省医院神经康复科进修一年，学习减重步态训练", "start_date": "2022-03-01"}
    assert any("themes[1]" in p for p in enpmr.distinct_themes(LifeThemes(themes=[first, twin, *others]), v))
    assert not list(enpmr.distinct_themes(LifeThemes(themes=[first, *others]), v))


# --- pal -----------------------------------------------------------------------------------


def test_a_candidate_that_rewords_another_is_a_duplicate():
    solutions = ["每小时起身活动五分钟，缓解腰部压力。", "每隔一小时起身活动五分钟，缓解腰部的压力。", *[f"方案{i}：不同的做法{i}" for i in range(6)]]
    assert any("第 1 条和第 2 条" in p for p in pal.distinct_candidates(
        Candidates(topics=[{"requirement_id": "health-1", "solutions": solutions}]), ZH))
    assert near_duplicates(["Stand up every hour for five minutes.", "Stand up for five minutes every hour."])
    assert not near_duplicates(["Stand up every hour for five minutes.", "Put a lumbar cushion on the office chair."])


def test_the_opening_query_is_brief():
    long = "我是汽车零部件厂的质量工程师，这周客户审核开了两项不符合项，整改报告初稿被经理退回要补验证数据，周三前要交，怎么办？"
    framework = {"requirement_id": "work-1", "user_query": long, "requirement": "r",
                 "implicit_needs": [{"need": "a", "evidences": ["e"]}, {"need": "b", "evidences": ["e"]}]}
    assert list(pal.brief_query(SessionRequirements(topics=[framework]), ZH))
    assert not list(pal.brief_query(SessionRequirements(topics=[{**framework, "user_query": "整改报告怎么写才能过？"}]), ZH))


def test_the_evaluation_restates_in_one_sentence_and_proposes_one_solution():
    assert list(pal_eval.one_sentence_requirement(Restatement(requirement="用户腰疼。建议他使用腰靠。"), ZH))
    assert not list(pal_eval.one_sentence_requirement(Restatement(requirement="用户想缓解久坐引起的腰痛。"), ZH))
    assert list(pal_eval.one_solution(ProposedSolution(solution="1. 使用腰靠；2. 每小时起身活动；3. 周末理疗。"), ZH))
    assert not list(pal_eval.one_solution(ProposedSolution(solution="把腰靠放到工位椅子上，每小时起身活动。"), ZH))


FRAMEWORK = [{"label": "T1_S1", "kind": "solution", "text": "s", "feedback": "neg", "reason": "r"},
             {"label": "T1_S2", "kind": "solution", "text": "s", "feedback": "pos", "reason": "r"}]


def _pal_dialogue(user: str, assistant: str, user_action="方案反馈", assistant_action="反馈回应") -> Dialogue:
    return Dialogue(turns=[{"user": {"action": user_action, "reference": "T1_S1", "content": user},
                            "assistant": {"action": assistant_action, "reference": "T1_S1", "content": assistant}}])


def test_a_rejection_is_direct_and_its_response_proposes_nothing_new():
    v = {**ZH, "framework": FRAMEWORK}
    assert list(pal.direct_rejection(_pal_dialogue("听起来不错，但是我还是有点顾虑。", "抱歉。"), v))
    assert not list(pal.direct_rejection(_pal_dialogue("不行，我不想去求人。", "抱歉。"), v))
    assert list(pal.direct_rejection(_pal_dialogue("这法子倒也不是不行，就是我宁可自己多熬一晚。", "抱歉。"), v))  # r19
    assert list(pal.response_offers_nothing_new(_pal_dialogue("不行。", "抱歉。那你可以试试每天做瑜伽。"), v))
    assert not list(pal.response_offers_nothing_new(_pal_dialogue("不行。", "抱歉，这个建议不合适。"), v))
    assert not list(pal.response_offers_nothing_new(_pal_dialogue("不行。", "明白了，有需要你可以随时告诉我。"), v))
    # a new plan put as a question for approval (held-out r17), beside the question that only moves on
    assert list(pal.response_offers_nothing_new(_pal_dialogue("不去。", "抱歉。那平时每坐一小时起来走走，你看行吗？"), v))
    assert not list(pal.response_offers_nothing_new(_pal_dialogue("不去。", "好的，抱歉这个不太适合你。还有别的想问的吗？"), v))
    assert list(pal.response_offers_nothing_new(_pal_dialogue(  # held-out r18: a routine, told
        "不去。", "好的，那就不报班了。其实每天睡前在床上做几组小燕飞，十来分钟就够。"), v))
    assert list(pal.response_offers_nothing_new(_pal_dialogue(
        "No.", "Sorry. A ten-minute walk after lunch instead, would that work?", "solution_feedback",
        "feedback_response"), {**EN, "framework": FRAMEWORK}))
    assert list(pal.direct_rejection(_pal_dialogue("That sounds good, but I'd rather not.", "Sorry.",
                                                    "solution_feedback", "feedback_response"), {**EN, "framework": FRAMEWORK}))


@pytest.mark.parametrize(("user", "softened"), [
    ("你说的有道理，可是我真的抽不出时间。", True), ("这个主意听起来挺好的，只是我没时间。", True),
    ("这个建议其实不错，就是太贵了。", True), ("我觉得不太好，但是谢谢你。", False), ("不行，太贵了。", False),
    ("这个方法听起来不错，但我更想要明确的计划。", False),  # as PAL-Set's users say it (flows/pal/dialogue_checks._SOFTENED)
])
def test_a_refusal_that_agrees_first_is_softened(user, softened):
    v = {**ZH, "framework": FRAMEWORK}
    assert bool(list(pal.direct_rejection(_pal_dialogue(user, "抱歉。"), v))) is softened


@pytest.mark.parametrize(("response", "proposes"), [
    ("明白了，这个不适合你；也可以请同事帮忙分担一部分。", True), ("抱歉，这个不合适，或者试试周末集中处理。", True),
    ("Understood, that one doesn't suit you, or alternatively you could book a specialist.", True),
    ("明白了，这个不适合你。", False), ("Understood, I'll drop that one.", False),
    # held-out r9: "那不如…" after an apology
    ("明白，是我考虑得不周到，抱歉。那不如每天早晚在家做两组麦肯基伸展。", True),
    ("Sorry, that was a poor fit. What about ten minutes of stretching each morning?", True),
    ("明白，是我考虑得不周到，抱歉。还有别的想聊的吗？", False),
    ("抱歉，是我没考虑到你的时间。那要不每天睡前在床上做几组小燕飞？", True),  # held-out r10
    # the subject left out: "…的时候，可以在脚下垫一块…" (held-out r8); "有什么可以帮你" offers nothing
    ("好的，抱歉这个建议不合适。那平时抽检的时候，可以在脚下垫一块抗疲劳垫。", True),
    ("明白，抱歉。下班路上也可以换成走楼梯。", True),
    ("好的，抱歉这个不合适。还有什么可以帮你的吗？", False),
    # "那…也行" (held-out r11, read after it was measured); "那你有需要也可以随时找我" offers nothing
    ("抱歉，这个不太适合你。那平时在家睡前趴着做几组小燕飞也行，十分钟就够。", True),
    ("好的，抱歉。那你有需要也可以随时找我。", False),
])
def test_a_response_to_a_rejection_offers_no_alternative(response, proposes):
    v = {**ZH, "framework": FRAMEWORK}
    assert bool(list(pal.response_offers_nothing_new(_pal_dialogue("不行。", response), v))) is proposes


def test_the_assistant_does_not_presume_the_users_preferences():
    v = {**ZH, "framework": FRAMEWORK}
    presumed = _pal_dialogue("好。", "我知道你不太喜欢和人打交道，不过可以报个小班课。", "方案反馈", "方案提议")
    assert list(pal.preferences_not_presumed(presumed, v))
    assert not list(pal.preferences_not_presumed(_pal_dialogue("好。", "可以报个小班课。", "方案反馈", "方案提议"), v))
    assert not list(pal.preferences_not_presumed(_pal_dialogue("好。", "我知道你想尽快解决，先列个表吧。", "方案反馈",
                                                               "方案提议"), v))


@pytest.mark.parametrize(("user", "assistant", "presumed"), [
    # the held-out rounds' presumptions, each in its own form
    ("好。", "你做事讲究简单直接，不喜欢为这种事改变自己的工作习惯，那就加个腰靠。", True),
    ("好。", "考虑到你不太想为这事改变现在的工作习惯，可以先加个腰靠。", True),
    ("好。", "明白。你做事一向喜欢一条一条列清楚，那就做张表。", True),
    ("好。", "我知道你做事习惯按条款一条条对照，那不如做张表。", True),
    ("好。", "你不愿意为了护腰打乱工作习惯，那就在椅子上加个腰靠。", True),
    ("Sure.", "Since you prefer quick fixes, try a lumbar cushion.", True),
    ("好。", "你肯定不想为了腰专门改变干活的习惯，那就加个腰靠。", True),  # r19: as a certainty
    ("好。", "你肯定不想再熬夜了吧？", False),  # asked, not presumed
    # background the assistant knows, a question, an apology, what the user just said
    ("好。", "考虑到你经常出差和加班，可以先从十分钟的拉伸开始。", False),
    ("好。", "你不想吃药的话，有没有试过热敷？", False),
    ("好。", "抱歉，是我没考虑到你现在的时间安排。", False),
    ("我不想靠吃药撑着。", "明白，既然你不想吃药，那我们换个思路。", False),
])
def test_a_presumed_preference_is_rejected_in_every_form(user, assistant, presumed):
    v = {**ZH, "framework": FRAMEWORK}
    found = list(pal.preferences_not_presumed(_pal_dialogue(user, assistant, "方案反馈", "方案提议"), v))
    assert bool(found) is presumed, found


def test_the_assistant_does_not_tell_the_users_reason_before_the_user_does():
    """The framework's reason is the user's to give: said in the proposal before the feedback
    (held-out r24), it is a preference presumed whatever the phrasing; said after, or only in the
    words the framework's public text shares, it is not."""
    framework = [{"label": "T1_S1", "kind": "solution", "text": "下班后去小区泳池游二十分钟。", "feedback": "neg",
                  "reason": "泳池要排队换衣服，我嫌折腾，不想下班还往外跑。"}]
    v = {**ZH, "framework": framework}

    def dialogue(proposal: str, feedback: str = "不去，太麻烦。") -> Dialogue:
        return Dialogue(turns=[
            {"user": {"action": "需求确认", "reference": "T1_N1", "content": "对。"},
             "assistant": {"action": "方案提议", "reference": "T1_S1", "content": proposal}},
            {"user": {"action": "方案反馈", "reference": "T1_S1", "content": feedback},
             "assistant": {"action": "反馈回应", "reference": "T1_S1", "content": "明白，抱歉。"}}])

    told = dialogue("泳池那边虽然排队换衣服有点折腾，下班后去小区泳池游二十分钟也能放松。")
    assert "理由" in next(iter(pal.preferences_not_presumed(told, v)))
    assert not list(pal.preferences_not_presumed(dialogue("下班后可以去小区泳池游二十分钟，放松一下。"), v))
    # once the user has said it, the assistant may say it back
    said_first = Dialogue(turns=[
        {"user": {"action": "需求确认", "reference": "T1_N1", "content": "对，可我嫌折腾，排队换衣服太麻烦。"},
         "assistant": {"action": "方案提议", "reference": "T1_S1", "content": "不用排队换衣服折腾的话，下班后去小区泳池游二十分钟？"}},
        {"user": {"action": "方案反馈", "reference": "T1_S1", "content": "不去。"},
         "assistant": {"action": "反馈回应", "reference": "T1_S1", "content": "明白。"}}])
    assert not list(pal.preferences_not_presumed(said_first, v))


# --- stratmem ---------------------------------------------------------------------------------


def test_a_fact_names_its_person():
    v = {**EN, "speakers": ["Caroline", "Melanie"]}
    bad = ExtractedMemories(memories=[{"fact": "She went to a support group on 2023-05-07.", "about": "Caroline"},
                                      {"fact": "I'm keen on counseling or mental health work.", "about": "Caroline"}])
    assert len(list(stratmem.names_the_person(bad, v))) == 2
    good = ExtractedMemories(memories=[{"fact": "Melanie sets aside me-time each day for running.", "about": "Melanie"}])
    assert not list(stratmem.names_the_person(good, v))


@pytest.mark.parametrize(("fact", "ok"), [
    ("许磊约定周末陪陈静跑步，也想借此重新开始跑步。", True), ("许磊在自我介绍时说自己爱跑步。", True),
    ("陈静说起教练那句“我相信你能跑完”，备受鼓舞。", True),
    ("许磊约定周末陪我跑步，也想借此重新开始跑步。", False), ("她在2024-03-02跑完了半程马拉松。", False),
])
def test_a_zh_fact_never_says_i(fact, ok):
    v = {**ZH, "speakers": ["陈静", "许磊"]}
    assert (list(stratmem.names_the_person(ExtractedMemories(memories=[{"fact": fact, "about": "许磊"}]), v)) == []) is ok


@pytest.mark.parametrize(("fact", "ok"), [
    ("Mira adopted a cat named Pebble on 2023-05-07.", True),
    ("Mira adopted a cat named Pebble on 2023-05-07. She loves it.", False),
    ("林悦在2024-04-01领养了一只短毛灰猫。", True), ("林悦在2024-04-01领养了一只猫。她很喜欢它。", False),
])
def test_a_fact_is_one_sentence(fact, ok):
    assert (list(stratmem.fact_problems(fact, EN)) == []) is ok


def test_a_query_may_not_copy_a_memory():
    v = {**ZH, "memories": [{"number": 9, "fact": "陈静在2024-03-13跑步时扭伤了脚踝，医生让她休息两周。"}]}
    assert list(stratmem.does_not_quote_memories(
        UserQuery(query="你还记得陈静在2024-03-13跑步时扭伤了脚踝这件事吗？", targets=[9]), v))
    assert not list(stratmem.does_not_quote_memories(UserQuery(query="脚踝现在恢复得怎么样了？", targets=[9]), v))


def test_a_persona_states_nothing_the_sessions_do_not():
    v = {**EN, "human": "Caroline", "virtual_person": "Melanie",
         "sessions": [{"time": "8 May 2023", "notes": ["Melanie paints and runs."], "lines": ["I love painting!"]}]}
    persona = {"virtual_person_name": "Melanie", "traits": ["warm"] * 6, "style": ["short"] * 5,
               "domains": ["painting"] * 4, "values": ["family"] * 5}
    invented = VirtualPersona(**persona, summary="Melanie is a 38-year-old art teacher from Portland who paints.")
    assert any("38" in p and "Portland" in p for p in stratmem.persona_from_sessions(invented, v))
    grounded = VirtualPersona(**persona, summary="Melanie is a warm friend to Caroline who paints and runs.")
    assert not list(stratmem.persona_from_sessions(grounded, v))
    # a year the session's "last year" names is stated (a30); another year is not
    v["sessions"][0]["lines"].append("I painted that lake sunrise last year!")
    dated = VirtualPersona(**persona, summary="Melanie paints; a lake sunrise she painted in 2022 is special to her.")
    assert not list(stratmem.persona_from_sessions(dated, v))
    misdated = VirtualPersona(**persona, summary="Melanie paints; a lake sunrise she painted in 2019 is special to her.")
    assert any("2019" in p for p in stratmem.persona_from_sessions(misdated, v))


# --- one number in the prompt and the check ------------------------------------------------------


def _prompt(stage: str, language: str, variables: dict) -> str:
    suffix = "" if language == "en" else f".{language}"
    messages = PromptLibrary().render(f"{stage}{suffix}.j2", {"language": language, "reference_date": "2024-01-01",
                                                            **variables})
    return "\n".join(m["content"] for m in messages)


def test_stratmem_prompts_ask_for_the_bounds_their_checks_enforce():
    query = {"human": "A", "virtual_person": "B", "memories": [], "given_type": "A", "query_time": "t", "history": []}
    low, high = stratmem.QUERY_WORDS
    assert f"{low} to {high} words" in _prompt("stratmem/query", "en", query)
    low, high = stratmem.QUERY_CHARS_ZH
    assert f"{low} 到 {high} 字" in _prompt("stratmem/query", "zh", query)
    persona = {"human": "A", "virtual_person": "B", "sessions": []}
    for field, (low, high) in stratmem.PERSONA_ITEMS.items():
        assert f"`{field}` ({low} to {high}" in _prompt("stratmem/persona", "en", persona), field
        assert f"`{field}`（{low} 到 {high}" in _prompt("stratmem/persona", "zh", persona), field
    extract = {"speakers": ["A", "B"], "date": "d", "time": "t", "turns": [], "notes": [], "session": 1}
    assert "{} to {} words".format(*stratmem.FACT_WORDS) in _prompt("stratmem/extract", "en", extract)
    assert "{} 到 {} 字".format(*stratmem.FACT_CHARS_ZH) in _prompt("stratmem/extract", "zh", extract)


def test_pal_and_enpmr_prompts_ask_for_the_limits_their_checks_enforce():
    from flows.enpmr.options import REPLY_LIMIT

    requirements = {"profile": {}, "situation": "s", "experience": "e", "topics": []}
    assert f"at most {pal.QUERY_LIMIT['en']} words" in _prompt("pal/requirements", "en", requirements)
    assert f"不超过 {pal.QUERY_LIMIT['zh']} 个字" in _prompt("pal/requirements", "zh", requirements)
    respond = {"profile": {}, "memories": [], "history": [], "mode": "base"}
    assert f"at most {REPLY_LIMIT['en']} words" in _prompt("enpmr/eval_respond", "en", respond)
    assert f"不超过 {REPLY_LIMIT['zh']} 个字" in _prompt("enpmr/eval_respond", "zh", respond)


def test_an_evaluation_reply_keeps_to_the_limit_its_prompt_states():
    from flows.enpmr.evaluation import reply_length
    from flows.enpmr.options import REPLY_LIMIT
    from schemas.enpmr import SupportReply

    long = SupportReply(memory=1, response="我" * (REPLY_LIMIT["zh"] + 1))
    assert any(str(REPLY_LIMIT["zh"]) in p for p in reply_length(long, ZH))
    assert not list(reply_length(SupportReply(memory=1, response="还记得陈大爷吗？三周真的还早。"), ZH))


def test_a_memory_session_tells_a_long_title_in_its_own_words():
    from schemas.enpmr import MemorySession

    v = {**ZH, "memory": {"name": "陈大爷扶着助行器走到了病房门口", "details": "d", "date": "2024-01-01"}}
    turns = [{"role": "user" if i % 2 == 0 else "ai", "content": "今天天气不错。"} for i in range(10)]
    quoted = MemorySession(turns=[{"role": "user", "content": "还记得陈大爷扶着助行器走到了病房门口那天吗？"}, *turns[1:]])
    assert list(enpmr.does_not_recite_title(quoted, v))
    told = MemorySession(turns=[{"role": "user", "content": "陈大爷今天自己扶着助行器走到门口了！"}, *turns[1:]])
    assert not list(enpmr.does_not_recite_title(told, v))
    short = {**ZH, "memory": {"name": "学游泳", "details": "d", "date": "2024-01-01"}}
    said = MemorySession(turns=[{"role": "user", "content": "我最近在学游泳。"}, *turns[1:]])
    assert not list(enpmr.does_not_recite_title(said, short))


_ANY = st.lists(st.text(alphabet=st.characters(codec="utf-8"), max_size=10) | st.sampled_from(
    ["我知道你", "考虑到你不太想", "那要不", "since you prefer", "ｗｈａｔ ａｂｏｕｔ", "🙂", "\u202e", "\ud800", "\x00"]),
    min_size=1, max_size=6).map("".join).filter(bool)


@settings(max_examples=150, deadline=None)
@given(user=_ANY, assistant=_ANY)
def test_the_dialogue_readers_take_any_text(user, assistant):
    """CJK, full-width, emoji, RTL, NUL, lone surrogates: a verdict, never a crash; what the user
    said first is never a presumption when the assistant repeats it."""
    v = {**ZH, "framework": FRAMEWORK}
    try:
        dialogue = _pal_dialogue(user, assistant, "方案反馈", "方案提议")
    except ValueError:  # a lone surrogate: the schema rejects the answer before any check reads it
        assume(False)
    assert all(isinstance(p, str) for p in pal.preferences_not_presumed(dialogue, v))
    assert all(isinstance(p, str) for p in pal.response_offers_nothing_new(_pal_dialogue("不行。", assistant), v))


@pytest.mark.parametrize(("user", "sided"), [
    ("行，腰靠我能接受。就是装上以后，高度该怎么调？", True),  # held-out r5
    ("药膏贴了也就管一时，我不想靠药撑着。再说这种药膏有什么不一样？", True),  # held-out r3
    ("算了，这个太麻烦。", True),
    ("Works for me. How high should the cushion sit?", True),
    ("I don't want to rely on pills. How is this cream different?", True),
    # asking and arguing, the verdict left to the feedback turn
    ("腰靠装上以后，高度该怎么调？", False),
    ("野餐听起来挺好的，但我担心妻子会觉得麻烦。", False),
    ("How high should the cushion sit, and will it fit my chair?", False),
])
def test_a_solution_discussion_saves_the_verdict_for_the_feedback_turn(user, sided):
    v = {**ZH, "framework": FRAMEWORK}
    dialogue = _pal_dialogue(user, "可以调到后腰的位置。", "方案讨论", "方案讨论")
    assert bool(list(pal.discussion_takes_no_side(dialogue, v))) is sided
    # The same words in a feedback turn are its verdict, as asked.
    assert not list(pal.discussion_takes_no_side(_pal_dialogue(user, "好的。"), v))
