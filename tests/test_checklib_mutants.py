"""The check library's checks get their mutants from how they were declared
(memsynth.quality.mutants.library): for every kind, in English and Chinese, the good answers
pass and at least 95 % of the mutants derived from each check are rejected by that check."""

from __future__ import annotations

import copy
import json
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from memsynth.generation import checklib as lib
from memsynth.generation.stage import Stage, evaluate
from memsynth.quality.mutants.library import CHECK_RULE, check_mutants, derive, rejected_by, stage_aims


class Item(BaseModel):
    title: str
    detail: str
    date: str


class Turn(BaseModel):
    role: str
    content: str


class Answer(BaseModel):
    summary: str
    items: list[Item]
    tags: list[str]
    turns: list[Turn]
    suggestion: str


WINDOW = {"start": lib.var("window_start"), "end": lib.var("reference_date")}
CHECKS = (
    lib.sentences("summary", min=2, max=4),
    lib.words("items[].title", min=2, max={"en": 6, "zh": 10}),
    lib.characters("suggestion", min=8, max={"en": 160, "zh": 60}),
    lib.items("items", min=lib.var("min_items"), max=4),
    lib.questions("turns[role=assistant].content", max=1),
    lib.one_question("turns[role=user].content"),
    lib.one_item("suggestion"),
    lib.dates_within("items[].date", **WINDOW),
    lib.dates_within("summary", **WINDOW),
    lib.times_within("turns[].content", "07:00", "22:00"),
    lib.chronological("items[].date"),
    lib.distinct("items[].detail"),
    lib.distinct("tags[]"),
    lib.no_leak("turns[role=user].content", people=lib.var("people"), details=lib.var("details")),
    lib.no_leak("summary", people=lib.var("people"), partial_names=True),
    lib.not_copied("turns[role=user].content", lib.var("source")),
    lib.no_mention("turns", lib.var("avoid")),
)
STAGE = Stage("kit", "note", Answer, checks=CHECKS)
KINDS = {c.kind for c in CHECKS}

VARIABLES = {
    "en": {"language": "en", "window_start": "2023-01-01", "reference_date": "2024-06-30", "min_items": 2,
           "people": ["Grace Mensah", "Tom Okafor"], "details": ["repaired the harbour boat with her grandfather"],
           "source": "Every spring she walked along the canal before the bakery opened its doors to the street",
           "avoid": ["guitar", "violin lessons", "cat"]},
    "zh": {"language": "zh", "window_start": "2023-01-01", "reference_date": "2024-06-30", "min_items": 2,
           "people": ["刘卫东", "陈静怡"], "details": ["和爷爷一起修好了港口那条旧渔船"],
           "source": "每年春天面包店开门之前她都会沿着运河慢慢走上一圈再回家", "avoid": ["吉他", "小提琴"]},
}

ANSWERS = {
    "en": [
        {"summary": "Ana moved to Porto in March 2023. She started baking bread for the neighbours.",
         "items": [{"title": "Moved to Porto", "detail": "She took a job at a bakery near the river.", "date": "2023-03-04"},
                   {"title": "First half marathon", "detail": "She ran the city half marathon in the rain.",
                    "date": "2023-10-16"},
                   {"title": "Adopted a grey cat", "detail": "A shelter cat called Miso now sleeps on her desk.",
                    "date": "2024-02-11"}],
         "tags": ["baking", "running", "cats"],
         "turns": [{"role": "user", "content": "Could you suggest a breakfast I can eat at 7:30 am on the tram?"},
                   {"role": "assistant", "content": "Overnight oats travel well. Make them the evening before."}],
         "suggestion": "Try overnight oats with grated apple."},
        {"summary": "Ben learned to swim last year. He now goes to the pool twice a week.",
         "items": [{"title": "Swimming lessons begin", "detail": "He booked ten lessons at the public pool.",
                    "date": "2023-05-02"},
                   {"title": "A new job", "detail": "He joined a small design studio as a junior.", "date": "2023-09-18"}],
         "tags": ["swimming", "design"],
         "turns": [{"role": "user", "content": "What should I pack for an evening swim at 19:00?"},
                   {"role": "assistant", "content": "A towel, goggles and a warm layer for the walk home. Do you swim outdoors?"}],
         "suggestion": "Pack a small bag the night before."},
        {"summary": "Chloe finished her nursing exams. She is looking for a flat near the hospital. "
                    "Her sister helps her with the search.",
         "items": [{"title": "Passed the final exams", "detail": "Chloe passed every nursing exam on the first try.",
                    "date": "2023-06-30"},
                   {"title": "Began night shifts", "detail": "The ward put her on nights for the winter months.",
                    "date": "2023-11-01"},
                   {"title": "Flat hunting", "detail": "She visits flats near the hospital on weekends.",
                    "date": "2024-04-20"}],
         "tags": ["nursing", "housing", "family"],
         "turns": [{"role": "user", "content": "How do I compare two flats fairly?"},
                   {"role": "assistant", "content": "List the rent, the commute and the light in each one."}],
         "suggestion": "Write down the three things that matter most to you."},
    ],
    "zh": [
        {"summary": "安娜二零二三年春天搬到了杭州。她开始给邻居们烤面包。",
         "items": [{"title": "搬到杭州", "detail": "她在河边的一家面包店找到了工作。", "date": "2023-03-04"},
                   {"title": "第一次半程马拉松", "detail": "她冒着大雨跑完了城市半程马拉松。", "date": "2023-10-16"},
                   {"title": "领养了灰猫", "detail": "一只叫米索的流浪猫现在睡在她的书桌上。", "date": "2024-02-11"}],
         "tags": ["烘焙", "跑步", "猫"],
         "turns": [{"role": "user", "content": "能推荐一个早上七点半在地铁上吃的早餐吗？"},
                   {"role": "assistant", "content": "隔夜燕麦很方便。前一天晚上做好就行。"}],
         "suggestion": "试试加了苹果丝的隔夜燕麦。"},
        {"summary": "小北去年学会了游泳。他现在每周去游泳馆两次。",
         "items": [{"title": "开始上游泳课", "detail": "他在公共游泳馆报了十节课。", "date": "2023-05-02"},
                   {"title": "换了新工作", "detail": "他加入了一家小设计工作室当助理。", "date": "2023-09-18"}],
         "tags": ["游泳", "设计"],
         "turns": [{"role": "user", "content": "晚上七点去游泳要带些什么？"},
                   {"role": "assistant", "content": "毛巾、泳镜，再带件外套回家路上穿。你是在室外游吗？"}],
         "suggestion": "前一天晚上把小包收拾好。"},
        {"summary": "晓雯通过了护士资格考试。她正在医院附近找房子。她姐姐在帮她一起找。",
         "items": [{"title": "通过了资格考试", "detail": "晓雯一次就通过了全部护理考试。", "date": "2023-06-30"},
                   {"title": "开始上夜班", "detail": "病房让她整个冬天都上夜班。", "date": "2023-11-01"},
                   {"title": "找房子", "detail": "她周末去看医院附近的出租房。", "date": "2024-04-20"}],
         "tags": ["护理", "租房", "家人"],
         "turns": [{"role": "user", "content": "怎么公平地比较两套房子？"},
                   {"role": "assistant", "content": "把房租、通勤时间和采光都列出来比一比。"}],
         "suggestion": "先写下你最在意的三件事。"},
    ],
}


def _problems(answer, variables):
    return evaluate(STAGE, json.dumps(answer, ensure_ascii=False), "stop", variables)[1]


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_good_answers_pass_every_check(language):
    for answer in ANSWERS[language]:
        assert _problems(answer, VARIABLES[language]) == []


def rates(language: str) -> dict[str, tuple[int, int, list[str]]]:
    """Per check kind: (killed by the check it is derived from, mutants, the survivors' notes)."""
    kind_of = {c.name: c.kind for c in CHECKS}
    out: dict[str, list] = defaultdict(lambda: [0, 0, []])
    for i, answer in enumerate(ANSWERS[language]):
        for name, rows in check_mutants(STAGE, answer, VARIABLES[language], f"{language}{i}").items():
            row = out[kind_of[name]]
            for mutant, problems in rows:
                row[1] += 1
                if rejected_by(name, problems):
                    row[0] += 1
                else:
                    row[2].append(f"{name}: {mutant.mutator} {mutant.note}")
    return {k: tuple(v) for k, v in out.items()}


@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_library_check_kind_rejects_its_derived_mutants(language):
    found = rates(language)
    print(f"\n{language}: " + ", ".join(f"{k} {killed}/{n}" for k, (killed, n, _) in sorted(found.items())))
    assert set(found) == KINDS
    for kind, (killed, n, survivors) in found.items():
        assert n >= 2, (kind, n)
        assert killed / n >= 0.95, (kind, killed, n, survivors)


def test_each_kind_derives_a_mutator_and_the_mutants_change_the_answer():
    for check in CHECKS:
        assert derive(check), check.describe()
    for language in ("en", "zh"):
        answer = ANSWERS[language][0]
        for rows in check_mutants(STAGE, answer, VARIABLES[language]).values():
            assert all(m.answer != answer for m, _ in rows)


def test_a_stage_with_library_checks_has_aims_without_writing_any():
    aims = stage_aims(STAGE)
    assert {a.rule for a in aims} == {f"{CHECK_RULE}note.{c.name}" for c in CHECKS}
    named = stage_aims(STAGE, lambda ref: "summary-form" if ref == "note.sentences_summary" else None)
    assert sum(a.rule == "summary-form" for a in named) == 1


def test_no_leak_without_partial_names_is_aimed_at_whole_names_only():
    """The mutants are those the declared check claims to catch: with partial_names off, a
    surname with a title is not among them (that is the check's stated limit, not a miss)."""
    check = lib.no_leak("turns[role=user].content", people=lib.var("people"))
    stage = Stage("kit", "note", Answer, checks=(check,))
    answer = copy.deepcopy(ANSWERS["en"][0])
    kinds = {m.mutator for m, _ in check_mutants(stage, answer, VARIABLES["en"])[check.name]}
    assert kinds == {"insert_person:full_name", "insert_person:other_case", "insert_person:full_width"}


@settings(max_examples=25, deadline=None)
@given(st.text(max_size=80), st.text(max_size=40), st.sampled_from(["en", "zh"]))
def test_derived_mutators_take_any_text(summary, suggestion, language):
    """Any Unicode (CJK, emoji, RTL, lone surrogates) in the answer: the mutators and the checks
    run, and every mutant differs from its original."""
    answer = copy.deepcopy(ANSWERS[language][0])
    answer["summary"], answer["suggestion"] = summary, suggestion
    for rows in check_mutants(STAGE, answer, VARIABLES[language]).values():
        assert all(m.answer != answer for m, _ in rows)


def test_the_mutation_table_measures_a_recipes_library_checks_with_no_aims_written():
    """longmem declares no AIMS: its library check (the exchange count) still gets mutants in
    the table, under the rule its RULES entry names for that check, killed by that check."""
    from memsynth.quality.mutants import Case, Runner, tally

    runner = Runner()
    rules = {a.rule for a in runner.aims("longmem")}
    assert {"session-exchanges", "avoid-terms"} <= rules
    chat = {"exchanges": [{"user": "Can you help me plan meals for the week?", "assistant": "Sure: what do you like?"},
                          {"user": "Mostly soups; I got a new blender.", "assistant": "Then try a leek soup."}]}
    variables = {"language": "en", "exchanges": 2, "avoid": ["guitar"]}
    case = Case("longmem", "filler", "en", "f1", chat, variables, "test")
    assert runner.problems(case, chat) == []
    rows = tally(runner, runner.outcomes([case]))
    for rule in ("session-exchanges", "avoid-terms"):  # avoids: the library's no_mention, no aim written
        row = rows["longmem", rule]
        assert row.checked and row.mutants >= 2 and row.killed == row.mutants, rule


@pytest.mark.parametrize(("text", "offers"), [
    ("Try a 20-minute walk after lunch.", False),
    ("Choose the colour you like best for the walls.", False),
    ("Try a walk after lunch, or alternatively, a short swim.", True),
    ("Book a physio session; or you could also stretch every morning.", True),
    ("午饭后散步二十分钟。", False),
    ("午饭后散步二十分钟，或者去游泳。", True),
    ("先写下最在意的三件事；也可以请朋友帮你看看。", True),
])
def test_one_item_refuses_an_answer_that_joins_an_alternative(text, offers):
    """The derived `join_alternatives` mutants found one_item blind to a second item offered
    with "or alternatively" / 或者 / 也可以 (it counted list markers only): 0 of 12 rejected."""
    check = lib.one_item("proposal")
    found = check({"proposal": text}, {"language": "zh" if "，" in text or "。" in text else "en"})
    assert bool(found) == offers, found
