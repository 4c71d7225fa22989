"""The shared `language` rule, checked on every stage (memsynth/generation/language.py): an
English value in CJK script, a Chinese value in English, English words mixed into Chinese, or
traditional characters, are rejected with a line in the build's language; released data and
values copied from a stage's inputs are not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.generation.language import NAME, off_language
from memsynth.generation.registry import evaluation_stages, names, recipe_class
from memsynth.generation.stage import evaluate
from memsynth.quality.answer_check import find_stage

SHARED = Path(__file__).resolve().parent.parent.parent / "shared"
REFERENCE = SHARED / "reference-data"
needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason=f"reference data not at {REFERENCE}")


# PAL-Set's listed values (pos, neu, neg): our schema's Literal, which the check does not read.
LISTED_KEYS = {"feedback"}


def _leaves(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in LISTED_KEYS:
                yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)


def problems(recipe: str, stage: str, answer: dict, **variables) -> list[str]:
    _out, found, outcome = evaluate(find_stage(recipe, stage), json.dumps(answer, ensure_ascii=False), "stop",
                                    variables)
    assert outcome in ("ok", "check_failed"), found  # the answer is of the stage's shape
    return [p for p in found if p.startswith(f"[{NAME}]")]


def test_every_stage_of_every_recipe_runs_it():
    for name in names():
        for stage in (*recipe_class(name).all_stages(), *evaluation_stages(name)):
            assert NAME in {c.name for c in stage.checks}, stage.qualified_name


@needs_reference
def test_released_data_is_in_its_own_language():
    """PAL-Set's Chinese users (every string: profiles, logs, dialogues, ids) and LoCoMo's and
    StratMem-Bench's English conversations: nothing is taken for another language."""
    zh = [t for f in sorted((REFERENCE / "pal" / "users_zh").glob("*.json"))
          for t in _leaves(json.loads(f.read_text(encoding="utf-8")))]
    en = [t for f in (REFERENCE / "locomo" / "locomo10.json", REFERENCE / "stratmem" / "StratMemBench.json")
          for t in _leaves(json.loads(f.read_text(encoding="utf-8")))]
    assert len(zh) > 20_000 and len(en) > 50_000
    assert [t for t in zh if off_language(t, "zh")] == []
    assert [t for t in en if off_language(t, "en")] == []


SCENE_CHECK = {"fits_target": True, "fits_a_negative": False, "expresses_need": True, "score": 5}


@pytest.mark.parametrize("reason, bad", [
    ("The scene is a hospital ward where the user's patient finally stands without help.", False),
    ("The scene mentions the ward, the 'Bennett' case and a 10 a.m. round — all about the target.", False),
    ("场景发生在病房，正好对应目标记忆。", True),
    ("The scene fits the target: 病人第一次独立走路 in the ward.", True),
])
def test_an_english_value_in_chinese_is_rejected(reason, bad):
    found = problems("enpmr", "scenario_consistency", {**SCENE_CHECK, "reason": reason}, language="en")
    assert bool(found) is bad, found
    if bad:
        assert "reason" in found[0] and "English" in found[0]


@pytest.mark.parametrize("analysis, bad, says", [
    ("理解抓住了久坐和加班两项需求，但漏了“不占用额外时间”，给 1 分。", False, ""),
    ("理解提到了 App 和 Excel 表格，用 PDF 记录，也算抓住了需求。", False, ""),  # words Chinese writing uses
    ("The restatement catches both needs the user has, so it earns full marks.", True, "英文写的"),
    ("理解基本对，但是 it misses the point about time，所以只给 1 分。", True, "夹杂了英文单词"),
    ("理解抓住了兩項需求，說得很清楚，給 2 分。", True, "繁体字"),
    # held-out r14-r16: one English word is mixing already; a file's extension is part of its name,
    # a unit part of its measure, an acronym is Chinese writing's own
    ("理解完全grounded在记录上，也没有用到negatives，给 2 分。", True, "夹杂了英文单词"),
    ("理解抓住了他想稳住配速的pace，给 2 分。", True, "夹杂了英文单词"),
    ("理解提到用户把“整改报告.docx”和“数据.xlsx”发给了经理，抓住了需求，给 2 分。", False, ""),
    ("理解提到他晨跑心率92bpm、用过NSAID药膏，抓住了需求，给 2 分。", False, ""),
    # held-out r21: an account's name is a name ("账号sunliwei", an address, a handle with digits);
    # the same word outside a name is still mixing
    ("理解提到他用账号liuhaoran登录了质量系统，也提到邮箱liu_hr@corp.cn，抓住了需求，给 2 分。", False, ""),
    ("理解提到他用户 ID: chenjing 收到了提醒，给 2 分。", False, ""),
    ("理解提到他想把报告发给liuhaoran看看，给 2 分。", True, "夹杂了英文单词"),
    ("理解说他总想avoid加班，给 1 分。", True, "夹杂了英文单词"),
    # held-out r23: a loanword Chinese writing keeps in lower case is Chinese writing's own
    ("理解提到他周末常拍vlog、去citywalk，抓住了需求，给 2 分。", False, ""),
])
def test_a_chinese_value_in_english_or_traditional_characters_is_rejected(analysis, bad, says):
    found = problems("pal", "eval_judge_restatement", {"analysis": analysis, "score": 1}, language="zh")
    assert bool(found) is bad, found
    if bad:
        assert says in found[0] and "简体中文" in found[0]


PROFILE = {"name": "韩志强", "age": 38, "occupation": "用户是汽车零部件厂的质量工程师。",
           "health_status": "用户有腰椎间盘突出。", "family_members": "用户已婚，有一个上小学的儿子。",
           "hobbies": "用户周末偶尔钓鱼。", "personality": {"openness": "medium", "conscientiousness": "high",
           "extraversion": "low", "agreeableness": "medium", "neuroticism": "medium"}}


@pytest.mark.parametrize("gender, bad", [("男", False), ("male", True), ("Female", False), ("full time", True),
                                         ("M", False), ("iPhone", False), ("sleep_quality", False)])
def test_a_chinese_field_left_as_an_english_word_is_rejected(gender, bad):
    """`gender: "male"` in a Chinese profile (a held-out answer): one plain English word is a field
    left in English; a capitalised name, a letter, an identifier are not."""
    found = problems("pal", "profile", {"profiles": [{**PROFILE, "gender": gender}]}, language="zh",
                     user_ids=["u1"], batch_size=1, allow_students_retirees=False)
    assert bool(found) is bad, found
    if bad:
        assert "profiles[0].gender" in found[0] and "英文写的" in found[0]


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.from_regex(r"[a-z]{1,9}", fullmatch=True), min_size=1, max_size=2))
def test_a_chinese_value_of_plain_english_words_is_english(words):
    text = " ".join(words)
    expected = any(len(w) >= 3 for w in words) and text not in ("user", "assistant", "system")
    assert (off_language(text, "zh") is not None) is expected


def test_a_value_copied_from_the_inputs_keeps_its_language():
    """A Chinese build over English sessions quotes them as they are: the quote passes, the
    judgement written around it must still be Chinese."""
    memories = [{"number": 1, "text": "Melanie plans to go camping in June."}]
    reply = "We're going camping in June with the kids!"
    base = {"language": "zh", "memories": memories, "response": reply}
    quoted = {"verdicts": [{"index": 1, "evidence": reply, "used": True}]}
    found = problems("stratmem", "eval_detect", quoted, **base)
    assert found == [], found
    written = {"verdicts": [{"index": 1, "evidence": "She says they are going camping in June.", "used": True}]}
    assert problems("stratmem", "eval_detect", written, **base)


def test_listed_values_are_not_read():
    """`relationship_quality: "good"` in a Chinese answer is a listed value, not English."""
    from memsynth.generation.language import in_language
    from schemas.enpmr import Relationship

    item = Relationship.model_validate({
        "name": "刘卫东", "relationship_type": "科室主任", "relationship_quality": "good", "occupation": "康复科主任",
        "characteristic": "严格但护短，会在病例讨论会上当众表扬肯下功夫的人", "date": "2024-03-01"})
    assert list(in_language(item, {"language": "zh"})) == []
    wrong = item.model_copy(update={"characteristic": "strict but fair, praises people who work hard"})
    assert list(in_language(wrong, {"language": "zh"}))


_TEXT = st.text(alphabet=st.characters(codec="utf-8") | st.sampled_from(
    ["好", "們", "ｆ", "🙂", "\u202e", "\u0301", "\ud800", " ", "a", "Z", "'"]), max_size=80)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, language=st.sampled_from(["en", "zh", "fr"]))
def test_any_text_is_read_without_failing(text, language):
    found = off_language(text, language)
    assert found is None or (isinstance(found, tuple) and len(found) == 2)


@settings(max_examples=200, deadline=None)
@given(words=st.lists(st.from_regex(r"[A-Za-z]{1,9}", fullmatch=True), max_size=30),
       punctuation=st.sampled_from([" ", ", ", ". ", " — "]))
def test_plain_english_is_english(words, punctuation):
    assert off_language(punctuation.join(words), "en") is None


_SIMPLIFIED = "我们这个时候说话会对你好的人在家里工作学习生活很开心今天明天中国朋友"


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from([*_SIMPLIFIED, "，", "。", "“", "”", "1", "A"]), min_size=1, max_size=60))
def test_plain_simplified_chinese_is_chinese(text):
    assert off_language(text, "zh") is None


@settings(max_examples=200, deadline=None)
@given(base=st.from_regex(r"[A-Za-z ]{10,60}", fullmatch=True),
       cjk=st.text(alphabet=st.sampled_from(list(_SIMPLIFIED)), min_size=2, max_size=6),
       at=st.integers(min_value=0, max_value=60))
def test_chinese_characters_in_english_are_always_seen(base, cjk, at):
    assert off_language(base[:at] + cjk + base[at:], "en") is not None
