"""pal's checks against mistakes nobody tuned them to (issue 51, the first held-out round): each
rule a held-out mistake slipped past is checked as a rule, on violations written here in en and
zh (other wordings than the held-out ones), beside answers that keep the rule."""

from __future__ import annotations

import pytest

from flows.pal import prose_checks as pp
from flows.pal.rules import RULES
from flows.pal.stages import STAGES
from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR
from memsynth.generation.rules import prompt_lines
from schemas.pal import AspectPreferences, Experience, Timeline

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
])
def test_nothing_at_the_spans_end(text, ok):
    problems = pp.stays_in_span(Experience(experience=text), _lang(SPAN, "zh" if "用户" in text else "en"))
    assert (problems == []) is ok, problems
