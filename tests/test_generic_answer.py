"""The simulator answers a stage no recipe taught it from the stage's schema and variables:
counts, ids, dates, lengths and enums inside their bounds, text in the stage's language,
distinct items; and a recipe with no simulated.py builds on it."""

from __future__ import annotations

import datetime as dt
import json
import random
import re
import textwrap
from pathlib import Path
from typing import Literal

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from memsynth.simulator.generic import GenericAnswer
from memsynth.simulator.text import TextMaker
from tests.conftest import cli_json

CJK = re.compile(r"[\u4e00-\u9fff]")


class Event(BaseModel):
    event_id: str
    date: dt.date
    title: str = Field(min_length=2, max_length=40)
    kind: Literal["visit", "purchase", "trip"]
    people: int = Field(ge=2, le=4)


class Plan(BaseModel):
    events: list[Event] = Field(min_length=1, max_length=12)
    tags: list[Literal["a", "b", "c"]] = Field(min_length=3, max_length=3)
    notes: list[str] = Field(min_length=2, max_length=9)
    question: str
    score: float = Field(gt=0, lt=1)
    note_ids: list[str] = Field(min_length=1, max_length=5)


VARIABLES = {"slots": [{"event_id": f"ev{i}"} for i in range(5)], "start_date": "2023-03-01",
             "end_date": "2023-03-20", "n_notes": 7, "note_ids": ["n1", "n2", "n3"]}


def _answer(seed: int, language: str, variables=VARIABLES) -> dict:
    text = TextMaker(random.Random(seed), language)
    return GenericAnswer(text, {**variables, "language": language}).generate(Plan.model_json_schema())


def test_an_answer_fits_the_schema_and_the_variables_in_both_languages():
    for language in ("en", "zh"):
        for seed in range(40):
            answer = _answer(seed, language)
            plan = Plan.model_validate(answer)
            # one event per id the variables list, each once, in date order inside the window
            assert [e.event_id for e in plan.events] == [f"ev{i}" for i in range(5)] or \
                sorted(e.event_id for e in plan.events) == [f"ev{i}" for i in range(5)]
            dates = [e.date for e in plan.events]
            assert dates == sorted(dates) and all(dt.date(2023, 3, 1) <= d <= dt.date(2023, 3, 20) for d in dates)
            assert len(plan.notes) == 7 and len(set(plan.notes)) == 7  # the count asked, distinct
            assert sorted(plan.tags) == ["a", "b", "c"]  # enum items without repeats
            assert set(plan.note_ids) <= {"n1", "n2", "n3"} and len(set(plan.note_ids)) == len(plan.note_ids)
            texts = [*plan.notes, plan.question, *(e.title for e in plan.events)]
            if language == "zh":
                assert all(CJK.search(t) and not re.search(r"[A-Za-z]", t) for t in texts)
            else:
                assert not any(CJK.search(t) for t in texts) and plan.question.endswith("?")


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=12), st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12), max_size=8), st.sampled_from(["en", "zh"]), st.integers(0, 10**6))
def test_any_variables_give_a_valid_answer(variables, language, seed):
    """Whatever a recipe's variables hold (CJK, emoji, lone surrogates, odd dates or counts, deep
    nesting), the answer is still valid against the schema."""
    Plan.model_validate(_answer(seed, language, variables))


RECIPE = '''
"""A recipe with no simulated.py: dated events for given ids, in the build's language."""
import datetime as dt
import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from memsynth.core.records import PERSONAS
from memsynth.core.tables import Table
from memsynth.generation.recipe import Recipe
from memsynth.generation.stage import Stage, check


class Options(BaseModel):
    events: int = Field(4, ge=1, description="events per persona")


class Event(BaseModel):
    event_id: str
    date: dt.date
    title: str = Field(min_length=2, max_length=30)
    kind: Literal["visit", "trip"]


class Plan(BaseModel):
    events: list[Event] = Field(min_length=1, max_length=10)


class EventRow(BaseModel):
    event_id: str
    persona_id: str
    date: dt.date
    title: str


@check("ids_and_window")
def ids_and_window(out, variables):
    wanted = [s["event_id"] for s in variables["slots"]]
    if sorted(e.event_id for e in out.events) != sorted(wanted):
        yield "one event per given id"
    start, end = dt.date.fromisoformat(variables["start_date"]), dt.date.fromisoformat(variables["end_date"])
    if any(not start <= e.date <= end for e in out.events):
        yield "dates inside the window"
    if [e.date for e in out.events] != sorted(e.date for e in out.events):
        yield "in date order"
    if variables["language"] == "zh" and any(not re.search("[\\u4e00-\\u9fff]", e.title) for e in out.events):
        yield "titles in Chinese"


PLAN = Stage("bare", "plan", Plan, checks=(ids_and_window,))
EVENTS = Table("bare_events", EventRow, key="event_id")


class BareRecipe(Recipe):
    """Events on given ids."""

    name = "bare"
    options_model = Options
    stages = (PLAN,)
    tables = (PERSONAS, EVENTS)
    prompts_dir = Path(__file__).parent / "prompts"

    async def generate(self, ctx):
        pid = ctx.persona.persona_id
        ctx.emit(PERSONAS, [ctx.persona])
        slots = [{"event_id": f"{pid}-e{i}"} for i in range(self.options.events)]
        result = await ctx.run(PLAN, {"persona": ctx.persona.description, "slots": slots,
                                      "start_date": "2024-01-10", "end_date": "2024-01-19"}, f"{pid}/plan")
        if result.usable:
            ctx.emit(EVENTS, [EventRow(event_id=e.event_id, persona_id=pid, date=e.date, title=e.title)
                              for e in result.output.events])


RECIPE = BareRecipe
'''
PROMPT = '''{% block system %}{% include "_language.j2" %}{% endblock %}
{% block user %}Plan events {{ slots }} for {{ persona }} between {{ start_date }} and {{ end_date }}.{% endblock %}
'''


def test_a_recipe_with_no_simulated_answers_builds_on_the_simulator(tmp_path: Path):
    site = tmp_path / "site"
    package = site / "bare_recipe"
    (package / "prompts" / "bare").mkdir(parents=True)
    (package / "__init__.py").write_text(textwrap.dedent(RECIPE), encoding="utf-8")
    for name in ("plan.j2", "plan.zh.j2"):
        (package / "prompts" / "bare" / name).write_text(PROMPT, encoding="utf-8")
    dist = site / "bare_recipe-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: bare-recipe\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[memsynth.recipes]\nbare = bare_recipe\n")
    assert not (package / "simulated.py").exists()
    personas = tmp_path / "personas.jsonl"
    personas.write_text("".join(json.dumps({"persona": p}, ensure_ascii=False) + "\n"
                                for p in ["王芳，杭州的一名教师", "李磊，成都的厨师", "陈静，北京的护士"]), encoding="utf-8")
    config = tmp_path / "bare.yaml"
    config.write_text(yaml.safe_dump({
        "dataset": "bare", "recipe": "bare", "seed": 2, "language": "zh",
        "personas": {"count": 3, "files": [str(personas)], "include_seed": False}}), encoding="utf-8")
    summary = cli_json("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"),
                       "--format", "json", env={"PYTHONPATH": str(site)})
    stage = summary["stages"]["bare.plan"]
    assert (stage["items"], stage["ok"], stage.get("dropped", 0)) == (3, 3, 0)
    assert summary["row_counts"]["bare_events"] == 12


def test_a_mention_the_variables_ask_for_lands_in_a_field_so_named():
    from schemas.longmem import Chat

    for language, value in (("en", "whippet"), ("zh", "四川绵阳")):
        for seed in range(20):
            text = TextMaker(random.Random(seed), language)
            answer = GenericAnswer(text, {"language": language, "exchanges": 3,
                                          "mentions": {"assistant": [value], "user": []}}).generate(Chat.model_json_schema())
            chat = Chat.model_validate(answer)
            assert len(chat.exchanges) == 3
            assert sum(value in e.assistant for e in chat.exchanges) == 1 and not any(value in e.user for e in chat.exchanges)
