"""The check library (memsynth.generation.checklib): each check accepts what keeps its rule and
rejects what breaks it, in English and Chinese, with a repair message that states the bound;
the counters and the path reader survive any Unicode."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from memsynth.core.textmatch import mentions_term
from memsynth.generation import checklib as lib
from memsynth.generation.checklib.counts import (
    count_characters,
    count_items,
    count_questions,
    count_sentences,
    count_words,
)
from memsynth.generation.checklib.paths import parse_path
from memsynth.generation.checklib.timing import dates_in, times_in
from memsynth.generation.stage import Stage, evaluate

EN = {"language": "en", "window_start": "2020-01-01", "reference_date": "2024-06-01", "n": 3,
      "target": {"people": ["Zhang Lixin", "Maria Rossi"], "details": ["repaired the old harbour boat with grandfather"]},
      "source": "I walked along the river every morning before work that spring", "avoid": ["cat", "work trip"]}
ZH = {**EN, "language": "zh", "target": {"people": ["张立新"], "details": ["和爷爷一起修好了港口那条旧渔船"]},
      "source": "那年春天我每天上班前都沿着河边散步", "avoid": ["猫", "吉他"]}


def problems(check, out, variables):
    return check(out, variables)


# (check, an answer that keeps it, one that breaks it, what the en message must say, what the zh one must)
CASES = {
    "sentences": (lib.sentences("scene", min=2, max=4),
                  ({"scene": "It rained. We stayed in. Dr. Li called."}, {"scene": "雨下了一夜。我们待在家里。"}),
                  ({"scene": "Just one, e.g. this."}, {"scene": "只有一句话。"}),
                  "write 2 to 4 sentences", "请写 2 到 4 句"),
    "words": (lib.words("fact", max={"en": 6, "zh": 10}),
              ({"fact": "Ana bakes bread on Sundays."}, {"fact": "安娜周日烤面包。"}),
              ({"fact": "Ana bakes sourdough bread for the whole street on Sundays."},
               {"fact": "安娜每个星期日都会为整条街的邻居烤酸面包。"}),
              "write at most 6 words", "请写至多 10 个字"),
    "characters": (lib.characters("title", min=2, max=12),
                   ({"title": "New job"}, {"title": "新工作"}),
                   ({"title": "A whole new job at last"}, {"title": "终于开始了一份全新的工作啦"}),
                   "write 2 to 12 characters", "请写 2 到 12 个字符"),
    "items": (lib.items("memories", min=lib.var("n")),
              ({"memories": ["a", "b", "c"]}, {"memories": ["甲", "乙", "丙", "丁"]}),
              ({"memories": ["a"]}, {"memories": []}),
              "give at least 3 items", "请给出至少 3 项"),
    "one_question": (lib.one_question("turns[role=assistant].content"),
                     ({"turns": [{"role": "user", "content": "Why? How?"}, {"role": "assistant", "content": "Which day?"}]},
                      {"turns": [{"role": "assistant", "content": "你想哪天去？"}]}),
                     ({"turns": [{"role": "assistant", "content": "Which day? And where?"}]},
                      {"turns": [{"role": "assistant", "content": "我明白了。"}]}),
                     "ask exactly 1 question", "请提恰好 1 个问题"),
    "one_item": (lib.one_item("proposal"),
                 ({"proposal": "Try a 20-minute walk after lunch."}, {"proposal": "午饭后散步二十分钟。"}),
                 ({"proposal": "Options: 1. walk 2. swim 3. cycle"}, {"proposal": "第一，散步；第二，游泳。"}),
                 "propose exactly one", "请只提出一项"),
    "dates_within": (lib.dates_within("items[].date", start=lib.var("window_start"), end=lib.var("reference_date")),
                     ({"items": [{"date": "2021-03-04"}, {"date": dt.date(2024, 6, 1)}]},
                      {"items": [{"date": "2020年1月1日搬了家"}]}),
                     ({"items": [{"date": "2021-03-04"}, {"date": "2019-12-31"}]},
                      {"items": [{"date": "2025年3月5日，我搬了家"}]}),
                     "keep every date 2020-01-01 … 2024-06-01", "所有日期都要在 2020-01-01 到 2024-06-01 之间"),
    "times_within": (lib.times_within("log", "07:00", "22:00"),
                     ({"log": "Up at 7:30 am, gym at 18:45, bed at 9 pm."}, {"log": "早上七点半起床，晚上9点睡觉。"}),
                     ({"log": "Then a call at 11:30 pm."}, {"log": "凌晨3点还在加班。"}),
                     "is outside 07:00 … 22:00", "不在 07:00 到 22:00 之间"),
    "chronological": (lib.chronological("items[].date"),
                      ({"items": [{"date": "2021-01-01"}, {"date": "2021-01-01"}, {"date": "2022-05-01"}]},
                       {"items": [{"date": "2020-02-01T08:00"}, {"date": "2020-02-01T09:00"}]}),
                      ({"items": [{"date": "2022-01-01"}, {"date": "2021-01-01"}]},
                       {"items": [{"date": "2020-02-01T09:00"}, {"date": "2020-02-01T08:00"}]}),
                      "must be in time order", "必须按时间先后排列"),
    "distinct": (lib.distinct("themes[].name"),
                 ({"themes": [{"name": "Learning the piano"}, {"name": "Caring for my father"}]},
                  {"themes": [{"name": "学习钢琴"}, {"name": "照顾父亲"}]}),
                 ({"themes": [{"name": "Learning the piano"}, {"name": "learning  the PIANO"}]},
                  {"themes": [{"name": "学习钢琴的日子"}, {"name": "学习钢琴的那些日子"}]}),
                 "every one must differ", "是同一件事换了说法"),
    "no_leak": (lib.no_leak("turns[role=user].content", people=lib.var("target.people"),
                            details=lib.var("target.details")),
                ({"turns": [{"role": "user", "content": "I feel stuck at work."},
                            {"role": "ai", "content": "Zhang Lixin would say keep going."}]},
                 {"turns": [{"role": "user", "content": "最近工作很不顺。"}]}),
                ({"turns": [{"role": "user", "content": "I keep thinking of zhang lixin."}]},
                 {"turns": [{"role": "user", "content": "我想起和爷爷在港口修旧渔船的事。"}]}),
                "leave them out", "不要提到它"),
    # every text under `turns`, either speaker's; a whole word ("category" does not say "cat")
    "no_mention": (lib.no_mention("turns", lib.var("avoid")),
                   ({"turns": [{"role": "user", "content": "Which category of catering suits a work lunch?"},
                               {"role": "assistant", "content": "A tray of wraps: it travels well on any trip."}]},
                    {"turns": [{"role": "user", "content": "最近工作很忙，想学一门乐器。"}]}),
                   ({"turns": [{"role": "user", "content": "Help me plan meals."},
                               {"role": "assistant", "content": "Does your CAT need feeding during the Work  Trip?"}]},
                    {"turns": [{"role": "assistant", "content": "你家的猫还好吗？"}]}),
                   "turns must not mention: cat, work trip", "turns 不能提到：猫"),
    "not_copied": (lib.not_copied("query", lib.var("source")),
                   ({"query": "Do you remember my spring walks by the water?"}, {"query": "还记得我春天散步的习惯吗？"}),
                   ({"query": "Remember? I walked along the river every morning before work."},
                    {"query": "你记得我每天上班前都沿着河边散步吗？"}),
                   "sharing at most 7 words in a row", "连续相同的字不超过 9 个"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_check_accepts_its_good_answers_and_rejects_its_bad_ones_in_both_languages(kind):
    check, good, bad, said_en, said_zh = CASES[kind]
    assert isinstance(check, lib.LibraryCheck)
    for out, v in zip(good, (EN, ZH)):
        assert problems(check, out, v) == [], (kind, v["language"], out)
    en_problems, zh_problems = problems(check, bad[0], EN), problems(check, bad[1], ZH)
    assert en_problems and zh_problems, kind
    assert all(p.startswith(f"[{check.name}] ") for p in en_problems + zh_problems)
    assert said_en in en_problems[0], en_problems
    assert said_zh in zh_problems[0], zh_problems


def test_a_library_check_runs_on_a_stage_like_a_written_one():
    class Scene(BaseModel):
        scene: str

    stage = Stage("kit", "scene", Scene, checks=(lib.sentences("scene", min=2, max=4),))
    assert stage in {stage}  # stages are hashed by the runner; a library check must not break that
    out, found, outcome = evaluate(stage, '{"scene": "只有一句话。"}', "stop", {"language": "zh"})
    assert outcome == "check_failed" and found == ["[sentences_scene] scene 有 1 句；请写 2 到 4 句"]
    assert evaluate(stage, '{"scene": "One. Two."}', "stop", {"language": "en"})[2] == "ok"
    assert stage.checks[0].describe() == "sentences(path='scene', min=2, max=4)"


def test_names_paths_and_bounds_are_checked_where_a_recipe_declares_them():
    assert lib.distinct("themes[].name").name == "distinct_themes_name"
    assert lib.sentences("scene", 2, 4, name="scene_form").name == "scene_form"
    for bad in ("", "a..b", "a[", "a[0]", "a b", "turns[role]"):
        with pytest.raises(ValueError):
            lib.sentences(bad, 1, 2)
    with pytest.raises(ValueError):
        lib.words("x")  # no bound at all
    with pytest.raises(ValueError):
        lib.times_within("x", "7 pm", "22:00")
    with pytest.raises(ValueError):
        lib.distinct("x", near=1.5)
    with pytest.raises(ValueError):
        lib.no_leak("x")


def test_a_variable_bound_and_a_filtered_path():
    check = lib.items("situations", min=lib.var("limits.min"), max=lib.var("limits.max"))
    v = {"language": "en", "limits": {"min": 2, "max": 3}}
    assert check({"situations": [1, 2]}, v) == []
    assert check({"situations": [1, 2, 3, 4]}, v) == ["[items_situations] situations has 4 items; give 2 to 3 items"]
    assert lib.select({"turns": [{"role": "user", "content": "a"}, {"role": "ai", "content": "b"}]},
                      "turns[role=ai].content") == [("turns[1].content", "b")]


def test_dates_and_times_in_prose():
    assert [d for _, d in dates_in("moved on 2024-03-05, then 2024年12月1日, 5 March 2023 and March 6, 2023")] == [
        dt.date(2024, 3, 5), dt.date(2024, 12, 1), dt.date(2023, 3, 5), dt.date(2023, 3, 6)]
    assert list(dates_in("2023-02-30")) == [("2023-02-30", None)]
    assert [t for _, t in times_in("7:30 pm, 07:05, 12 am, 下午3点半, 晚上七点, 中午12点, 早上6点一刻")] == [
        19 * 60 + 30, 7 * 60 + 5, 0, 15 * 60 + 30, 19 * 60, 12 * 60, 6 * 60 + 15]
    assert list(times_in("三点建议和两点看法")) == []  # a Chinese numeral hour needs its part of the day
    night = lib.times_within("t", "22:00", "06:00")  # a window past midnight wraps
    assert night({"t": "at 23:30 and 5 am"}, EN) == []
    assert night({"t": "at noon, 12:00"}, EN)


def test_a_check_reports_a_date_that_is_no_date():
    check = lib.dates_within("t", end="2024-01-01")
    assert check({"t": "on 2023-02-30"}, ZH) == ["[dates_within_t] t：“2023-02-30”不是有效的日期"]


TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300)
HOSTILE = st.one_of(TEXT, st.sampled_from(["", "。。。", "？？！", "\u202eabc", "\ud800", "😀😀😀。", "ＡＢＣ。",
                                            "第一第二第三", "1. 2. 3.", "\n- a\n- b", "e.g. Mr. Smith?"]))


@settings(max_examples=300, deadline=None)
@given(HOSTILE)
def test_counters_take_any_unicode(text):
    n_chars = count_characters(text)
    assert n_chars == len("".join(text.split()))
    for counter in (count_sentences, count_words, count_questions, count_items):
        assert counter(text) >= 0
    assert count_questions(text) <= text.count("?") + text.count("？")
    assert count_sentences(text) <= max(1, n_chars)
    assert count_words(text) <= max(1, n_chars)
    list(dates_in(text))
    list(times_in(text))


@settings(max_examples=150, deadline=None)
@given(HOSTILE, HOSTILE, st.sampled_from([EN, ZH]))
def test_every_check_takes_any_unicode_and_says_problems_as_lines(a, b, v):
    answer = {"scene": a, "fact": b, "title": a, "memories": [a, b], "proposal": a, "query": b, "log": a,
              "turns": [{"role": "user", "content": a}, {"role": "assistant", "content": b}],
              "items": [{"date": a}, {"date": b}], "themes": [{"name": a}, {"name": b}]}
    for check, *_ in CASES.values():
        for problem in check(answer, v):
            assert isinstance(problem, str) and problem.startswith(f"[{check.name}] ")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_path_is_read_or_refused_with_a_value_error(path):
    try:
        parse_path(path)
    except ValueError as exc:
        assert "\n" not in str(exc).strip() or "\n" in path
        return
    assert lib.select({"a": [{"b": 1}]}, path) is not None


WORDS = st.text(alphabet=st.characters(categories=["Lu", "Ll", "Lo", "Nd"]), min_size=1, max_size=12)


@settings(max_examples=300, deadline=None)
@given(WORDS, HOSTILE)
@example("ῢ", "")  # its upper case folds back decomposed: NFKC again after folding
def test_a_term_is_mentioned_as_a_whole_word_or_by_its_chinese_characters(term, noise):
    """`no_mention`'s reading: a term inside a longer word is no mention ("cat" in "category"),
    unless it is Chinese (no word breaks); set off by spaces or quotes, in any case or width, it is."""
    cjk = re.search(r"[\u3400-\u9fff\uf900-\ufaff]", unicodedata.normalize("NFKC", term)) is not None
    assert mentions_term(f"{term}zz", term) == cjk
    loud = term.upper() if term.upper().casefold() == term.casefold() else term  # "ı".upper() is "I"
    assert mentions_term(f"{noise} «{loud}» {noise}", term)
    mentions_term(noise, term)
    mentions_term(term, noise)  # any text, lone surrogates and RTL marks included, is read or refused calmly
