"""The review app, run by `memsynth review` as `streamlit run` of this file.

Its settings come from the environment (`MEMSYNTH_REVIEW`, JSON written by the CLI), so
Streamlit's own command line stays untouched. Every answer is recorded the moment it is
clicked (AnnotationLog: the annotator's own file, fsynced), and the page is rebuilt from
those files on every run: a restarted app, or the same annotator in two tabs, shows what
is on disk.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from memsynth.generation.offers import Item, Question, Rows, Text, Turns
from memsynth.quality.review.items import APP_SETTINGS, AUDIT_CRITERION, COMMENT, ReviewSource
from memsynth.warehouse.annotations import AnnotationLog, Judgment, check_annotator
from memsynth.warehouse.ducklake import dataset_dir

# The app's own words; a zh dataset is reviewed in Chinese throughout.
WORDS = {
    "en": {"item": "Item {n} of {total}", "stratum": "stratum", "judgment": "Your judgment",
           "comment": "Comment (optional)", "previous": "← Previous", "next": "Next →",
           "mine": "Your judgments in this sample", "none": "none yet", "memory_turn": "⟵ memory turn",
           "version": "version", "task": "task", "annotator": "annotator", "progress": "{done} of {total} items judged",
           "keys": "Keys: the letter or number on an answer answers the marked question; ← and → move between "
                   "items. Answers are saved as you click.",
           "columns": ("item", "criterion", "value"),
           "audits": "Audit judge's verdicts",
           "audits_hidden": "Shown once you have judged every audit rule of this item (so they cannot sway you).",
           "audit_columns": ("item", "stage", "rule", "verdict", "reason", "judge model")},
    "zh": {"item": "第 {n} 条，共 {total} 条", "stratum": "分层", "judgment": "你的判断",
           "comment": "备注（可选）", "previous": "← 上一条", "next": "下一条 →",
           "mine": "你在本样本中的判断", "none": "暂无", "memory_turn": "⟵ 唤起记忆的一轮",
           "version": "版本", "task": "任务", "annotator": "标注者", "progress": "已判断 {done} / {total} 条",
           "keys": "快捷键：答案上标出的字母或数字回答带 ▶ 的问题；← 和 → 切换条目。点击即保存。",
           "columns": ("条目", "标准", "取值"),
           "audits": "审核评审的结论",
           "audits_hidden": "你判断完本条目的每条审核规则后才会显示（以免影响你的判断）。",
           "audit_columns": ("条目", "步骤", "规则", "结论", "理由", "评审模型")},
}


@dataclass(frozen=True)
class Settings:
    warehouse: str
    dataset: str
    annotator: str
    version: int | None = None
    task: str | None = None
    size: int = 20
    seed: int = 0


def settings() -> Settings:
    """The app's settings, from `$MEMSYNTH_REVIEW` (JSON)."""
    raw = os.environ.get(APP_SETTINGS)
    if not raw:
        raise SystemExit(f"{APP_SETTINGS} is not set: start the app with `memsynth review`")
    s = Settings(**json.loads(raw))
    check_annotator(s.annotator)
    return s


@st.cache_resource(show_spinner=False)
def open_source(warehouse: str, dataset: str, version: int | None) -> ReviewSource:
    return ReviewSource(Path(warehouse), dataset, version)


@st.cache_data(show_spinner=False)
def sample(warehouse: str, dataset: str, version: int | None, task: str | None, size: int,
           seed: int) -> list[tuple[str, str]]:
    source = open_source(warehouse, dataset, version)
    return source.sample(source.task(task), size, seed)


@st.cache_data(show_spinner=False)
def load_item(warehouse: str, dataset: str, version: int | None, task: str | None, item_id: str,
              stratum: str) -> Item:
    source = open_source(warehouse, dataset, version)
    return source.item(source.task(task), item_id, stratum)


@st.cache_data(show_spinner=False)
def load_audits(warehouse: str, dataset: str, version: int | None, item_id: str) -> list[dict]:
    return open_source(warehouse, dataset, version).audits(item_id)


def draw_audits(item: Item, answers: dict[tuple[str, str], str], s: Settings, w: dict) -> None:
    """The audit judge's verdicts on the item as a table, once the annotator judged its rules."""
    asked = [q for q in item.questions if q.criterion.startswith(AUDIT_CRITERION)]
    if not asked:
        return
    st.subheader(w["audits"])
    if not all((q.item_id, q.criterion) in answers for q in asked):
        st.caption(w["audits_hidden"])
        return
    rows = load_audits(s.warehouse, s.dataset, s.version, item.item_id)
    st.table([dict(zip(w["audit_columns"], (a["item"], a["stage"], a["rule"], a["verdict"], a["reason"],
                                              a["judge_model"]))) for a in rows])


def shortcut_keys(options: tuple[str, ...]) -> list[str | None]:
    """A key per option: its first letter where that is unique (yes → Y, no → N), else its
    position (1, 2, 3); never C or R, which Streamlit keeps for itself."""
    firsts = [o[:1].upper() for o in options]
    if len(set(firsts)) == len(firsts) and all(f.isalnum() and f not in "CR" for f in firsts):
        return list(firsts)
    return [str(i + 1) if i < 9 else None for i in range(len(options))]


def record(log: AnnotationLog, s: Settings, version: int, item_id: str, criterion: str, value: str) -> None:
    log.record(Judgment(item_id=item_id, criterion=criterion, value=value, annotator=s.annotator, version=version))


def record_comment(log: AnnotationLog, s: Settings, version: int, item_id: str, key: str) -> None:
    record(log, s, version, item_id, COMMENT, st.session_state[key].strip())


def draw_section(section: Text | Turns | Rows, w: dict) -> None:
    st.subheader(section.title)
    if isinstance(section, Text):
        st.write(section.body or "—")
    elif isinstance(section, Turns):
        for i, (speaker, text) in enumerate(section.turns):
            line = f"**{speaker}**: {text}"
            if i == section.highlight:
                st.success(f"{line}  {w['memory_turn']}")
            else:
                st.markdown(line)
        if not section.turns:
            st.write("—")
    elif section.rows:
        st.table([{k: _cell(v) for k, v in row.items()} for row in section.rows])
    else:
        st.write("—")


def _cell(value: object) -> str:
    return ", ".join(map(str, value)) if isinstance(value, list | tuple) else str(value)


def draw_questions(item: Item, answers: dict[tuple[str, str], str], log: AnnotationLog, s: Settings,
                   version: int, w: dict) -> None:
    """A row of buttons per question; the first unanswered question takes the shortcuts."""
    open_questions = [q for q in item.questions if (q.item_id, q.criterion) not in answers]
    current: Question | None = open_questions[0] if open_questions else None
    st.subheader(w["judgment"])
    for n, q in enumerate(item.questions):
        chosen = answers.get((q.item_id, q.criterion))
        st.markdown(f"{'▶ ' if q is current else ''}**{q.criterion}** — {q.prompt}")
        keys = shortcut_keys(q.options) if q is current else [None] * len(q.options)
        columns = st.columns(max(len(q.options), 4))
        for col, option, key in zip(columns, q.options, keys):
            col.button(option, key=f"q{n}-{option}", type="primary" if option == chosen else "secondary",
                       shortcut=key, on_click=record, args=(log, s, version, q.item_id, q.criterion, option))
    key = f"comment-{item.item_id}"
    if key not in st.session_state:
        st.session_state[key] = answers.get((item.item_id, COMMENT), "")
    st.text_input(w["comment"], key=key, on_change=record_comment, args=(log, s, version, item.item_id, key))


def main() -> None:
    if "settings" not in st.session_state:  # fixed for the session when it starts
        st.session_state.settings = settings()
    s = st.session_state.settings
    st.set_page_config(page_title=f"review · {s.dataset}", layout="wide")
    source = open_source(s.warehouse, s.dataset, s.version)
    task = source.task(s.task)
    items = sample(s.warehouse, s.dataset, s.version, s.task, s.size, s.seed)
    log = AnnotationLog(dataset_dir(Path(s.warehouse), s.dataset))
    mine = log.judgments(annotator=s.annotator)
    answers = {(j.item_id, j.criterion): j.value for j in mine}

    shown = [load_item(s.warehouse, s.dataset, s.version, s.task, i, stratum) for i, stratum in items]
    # An item is judged when the task's criteria are; its audit rules are asked after them, optional.
    done = [all((q.item_id, q.criterion) in answers for q in item.questions
                if not q.criterion.startswith(AUDIT_CRITERION)) for item in shown]
    if "position" not in st.session_state:  # start at the first item not yet fully judged
        st.session_state.position = done.index(False) if False in done else 0
    position = st.session_state.position
    item, stratum = shown[position], items[position][1]
    judged = sum(done)

    w = WORDS.get(source.language, WORDS["en"])
    with st.sidebar:
        st.header("memsynth review")
        st.write(f"**{s.dataset}** {w['version']} {source.version} ({source.recipe})")
        st.write(f"{w['task']} **{task.name}**: {task.description}")
        st.write(f"{w['annotator']} **{s.annotator}**")
        st.progress(judged / len(items), text=w["progress"].format(done=judged, total=len(items)))
        st.caption(w["keys"])

    st.title(w["item"].format(n=position + 1, total=len(items)))
    st.caption(f"{item.item_id} · {w['stratum']} {stratum}")
    reading, judging = st.columns([3, 2], gap="large")
    with reading:
        for section in item.sections:
            draw_section(section, w)
    with judging:
        draw_questions(item, answers, log, s, source.version, w)
        draw_audits(item, answers, s, w)
        back, forward = st.columns(2)
        back.button(w["previous"], key="previous", shortcut="Left", disabled=position == 0,
                    on_click=lambda: st.session_state.update(position=position - 1))
        forward.button(w["next"], key="next", shortcut="Right", disabled=position == len(items) - 1,
                       on_click=lambda: st.session_state.update(position=position + 1))
        st.subheader(w["mine"])
        in_sample = {i for i, _ in items}
        rows = [dict(zip(w["columns"], (j.item_id, j.criterion, j.value)))
                for j in sorted(mine, key=lambda j: j.at) if j.item_id.split("#")[0] in in_sample]
        if rows:
            st.table(rows)
        else:
            st.write(w["none"])


main()
