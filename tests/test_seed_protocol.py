"""Prompts as the seeds wrote them: the protocol points that read differently in our prompts
(issue 30), each pinned by a test."""

from __future__ import annotations

import pytest

from flows.enpmr.options import RECALL_LIMIT, REPLY_LIMIT
from memsynth.generation.prompts import PromptLibrary


def _prompt(stage: str, language: str, variables: dict) -> str:
    suffix = "" if language == "en" else f".{language}"
    messages = PromptLibrary().render(f"{stage}{suffix}.j2", {"language": language, "reference_date": "2024-01-01",
                                                            **variables})
    return "\n".join(m["content"] for m in messages)


RESPOND = {"profile": {"name": "A"}, "memories": [{"number": 1, "date": "2023-01-01", "text": "m"}], "history": []}


def test_the_evaluation_reply_is_at_most_100_words_as_the_seed_asks():
    assert REPLY_LIMIT["en"] == 100
    for mode in ("base", "cot", "golden"):
        assert "at most 100 words" in _prompt("enpmr/eval_respond", "en", {**RESPOND, "mode": mode})
        assert f"不超过 {REPLY_LIMIT['zh']} 个字" in _prompt("enpmr/eval_respond", "zh", {**RESPOND, "mode": mode})


@pytest.mark.parametrize(("language", "need_words"), [("en", ("missing", "need")), ("zh", ("缺失", "需要", "需求"))])
def test_the_base_setting_gets_no_need_aware_hint(language, need_words):
    base = _prompt("enpmr/eval_respond", language, {**RESPOND, "mode": "base"})
    cot = _prompt("enpmr/eval_respond", language, {**RESPOND, "mode": "cot"})
    assert not any(w in base for w in need_words), base
    assert any(w in cot for w in need_words)  # the need analysis belongs to the CoT setting


DIALOGUE = {"profile_summary": "{}", "theme_name": "t", "need_name": "n", "need_description": "d",
            "category": "highlight", "target": {"name": "x", "text": "x", "details": "x"}, "negatives": [],
            "scene": "s", "min_turns": 2, "max_turns": 6}


def test_dialogue_length_is_counted_in_utterances_in_both_languages():
    en = _prompt("enpmr/support_dialogue", "en", {**DIALOGUE, "recall_limit": RECALL_LIMIT["en"]})
    zh = _prompt("enpmr/support_dialogue", "zh", {**DIALOGUE, "recall_limit": RECALL_LIMIT["zh"]})
    assert "2 to 6 utterances" in en and "共 2 到 6 条发言" in zh
    assert "轮" not in zh.split("turns：")[1].split("\n")[0]  # no "rounds", which a Chinese reader counts in pairs


def test_the_recall_limit_is_on_the_whole_memory_turn():
    en = _prompt("enpmr/support_dialogue", "en", {**DIALOGUE, "recall_limit": RECALL_LIMIT["en"]})
    zh = _prompt("enpmr/support_dialogue", "zh", {**DIALOGUE, "recall_limit": RECALL_LIMIT["zh"]})
    assert f"That whole AI turn is at most {RECALL_LIMIT['en']} words" in en
    assert f"这一整条 AI 发言不超过 {RECALL_LIMIT['zh']} 个字" in zh


def test_the_scene_keeps_the_memorys_own_people_out():
    variables = {k: v for k, v in DIALOGUE.items() if k not in ("scene", "min_turns", "max_turns")}
    assert "Keep the memory's own people and events out of the scene" in _prompt("enpmr/scene", "en", variables)
    zh = _prompt("enpmr/scene", "zh", variables)
    assert "场景里不要出现那段记忆本身的人和事" in zh and "涉及的人" not in zh


def test_the_stratmem_responder_is_not_told_when_to_use_a_memory():
    variables = {"human": "Ana", "virtual_person": "Bo", "persona": {}, "memories": [], "history": [],
                 "query": "q", "query_time": "t"}
    assert "only where it serves" not in _prompt("stratmem/eval_respond", "en", variables)
    assert "有帮助时才提起" not in _prompt("stratmem/eval_respond", "zh", variables)


def test_a_stratmem_fact_is_scored_as_felt_by_the_speaker_it_is_about():
    from flows.stratmem.emotions import about

    assert about("Caroline went to a support group on 2023-05-07.", "Caroline", "Melanie") == "Caroline"
    assert about("Melanie paints sunrises; Caroline loves them.", "Caroline", "Melanie") == "Melanie"
    assert about("许磊的表姐是宠物医生。", "许磊", "陈静") == "许磊"
    assert about("The dog Max died.", "Caroline", "Melanie") == "Melanie"


def test_pal_situations_and_experiences_are_written_without_the_personality():
    from tests.golden import recorded_requests

    _, _, recorded = recorded_requests("pal", "en")
    seen = {b["memsynth"]["stage"]: b["memsynth"]["variables"] for b in recorded}
    assert "personality" not in seen["pal.situations"]["profile"]
    assert "personality" not in seen["pal.experience"]["profile"]
    assert "personality" in seen["pal.requirement_types"]["profile"]  # the preferences still rest on it


def test_pal_prompts_say_what_the_authors_code_says():
    from tests.golden import rendered

    history = rendered("pal", "dialogue", "en")
    assert "tries to persuade them of it" in history
    assert "preferences above" not in history  # no preferences are shown: the framework's feedback rules
    assert "knows the user's background" in history and "never presume them" in history
    assert "one that fails either is disliked" in rendered("pal", "solution_preferences", "en")
    assert "两条中有一条不符合的，就是不喜欢的方案" in rendered("pal", "solution_preferences", "zh")
    assert "no need to dwell on the dates" in rendered("pal", "situations", "en")
    assert "他" not in rendered("pal", "requirement_types", "zh").split("### user")[1].split("近几个月")[-1]


def test_the_pal_evaluation_memory_is_what_pal_set_releases_logs_and_history_dialogues():
    from flows.pal.evaluation import _records

    rows = {
        "situations": [{"situation_id": "h1", "persona_id": "p", "split": "history", "end_time": "2024-01-05 20:00"},
                       {"situation_id": "q1", "persona_id": "p", "split": "query", "end_time": "2024-02-05 20:00"}],
        "logs": [{"situation_id": "h1", "persona_id": "p", "timestamp": "2024-01-05 09:00", "log_type": "web_search",
                  "content": "The user searched for cushions."},
                 {"situation_id": "q1", "persona_id": "p", "timestamp": "2024-02-05 09:00", "log_type": "web_search",
                  "content": "The user searched for shoes."}],
        "dialogue_turns": [{"situation_id": "h1", "turn_index": 0, "speaker": "assistant", "content": "Try a cushion?"},
                           {"situation_id": "h1", "turn_index": 0, "speaker": "user", "content": "My back hurts."},
                           {"situation_id": "h1", "turn_index": 1, "speaker": "user", "content": "No, I hate pills."},
                           {"situation_id": "q1", "turn_index": 0, "speaker": "user", "content": "Shoes?"}],
        "experiences": [{"situation_id": "h1", "text": "The generator's own account."}],
    }
    records = _records(rows)["p"]
    assert records[0] == "2024-01-05 09:00 web_search: The user searched for cushions."
    assert records[1] == ("2024-01-05 20:00 dialogue\nuser: My back hurts.\nassistant: Try a cushion?\n"
                          "user: No, I hate pills.")
    assert len(records) == 2  # nothing of the query month, no experience text


def test_a_blri_judge_that_reverses_the_negative_items_itself_is_caught():
    from flows.enpmr import checks
    from flows.enpmr.options import BLRI_ITEMS
    from schemas.enpmr import BlriScores

    v = {"language": "en", "items": BLRI_ITEMS, "points": [-3, -2, -1, 1, 2, 3]}
    literal = [(-3 if item["negative"] else 3) for item in BLRI_ITEMS]  # a good dialogue, scored as worded
    assert not list(checks.blri_literal(BlriScores(scores=literal), v))
    reversed_by_judge = [3 for _ in BLRI_ITEMS]  # the judge turned the negative items round itself
    assert list(checks.blri_literal(BlriScores(scores=reversed_by_judge), v))
    poor = [(2 if item["negative"] else -2) for item in BLRI_ITEMS]  # a poor dialogue, scored as worded
    assert not list(checks.blri_literal(BlriScores(scores=poor), v))
    assert "Do not reverse any score yourself" in _prompt("enpmr/blri", "en", {
        "turns": [], "items": [{"en": "x", "zh": "x", "negative": False}], "points": v["points"]})


def _blri_rows():
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE quality_checks (dialogue_id VARCHAR, check_name VARCHAR, score DOUBLE, "
                "passed BOOLEAN, details JSON)")
    rows = [("d1", 1.75, False, "{}"), ("d2", 2.0, True, "{}"), ("d3", 2.5, True, "{}"),
            ("d4", 0.0, False, '{"error": "the judge gave no usable answer"}')]
    con.executemany("INSERT INTO quality_checks VALUES (?, 'blri', ?, ?, ?)", rows)
    con.execute("INSERT INTO quality_checks VALUES ('d1', 'faithfulness', 5, true, '{}')")
    return con


def test_the_build_summary_and_report_show_what_the_blri_threshold_keeps():
    from flows.enpmr.chain import STATISTICS
    from flows.enpmr.report import FIGURES

    con = _blri_rows()  # three judged dialogues and one the judge never scored
    assert con.execute(STATISTICS["blri_kept_pct"]).fetchone()[0] == 66.7
    assert con.execute(STATISTICS["blri_mean_quartiles"]).fetchone()[0] == "1.88 / 2.00 / 2.25"
    figures = {f.title: f for f in FIGURES}
    means = con.execute(figures["BLRI mean per judged dialogue"].sql).fetchall()
    assert sorted(m for m, in means) == [1.75, 2.0, 2.5]
    kept = dict(con.execute(figures["Share of judged dialogues a BLRI threshold keeps"].sql).fetchall())
    assert kept == {"1.0": 1.0, "1.5": 1.0, "2.0": 0.667, "2.5": 0.333}


def test_the_readme_shows_the_blri_means_a_strong_model_gives_good_dialogues():
    import json
    import os
    import re
    from pathlib import Path

    from flows.enpmr import blri_mean

    root = Path(__file__).resolve().parent.parent
    answers = Path(os.environ.get("MEMSYNTH_MODEL_ANSWERS", root.parent / "shared" / "model-answers"))
    if not answers.is_dir():
        pytest.skip(f"model answers not found at {answers}")
    readme = (root / "docs" / "recipes.md").read_text(encoding="utf-8")
    table = {m[1]: (float(m[2]), m[3]) for m in re.finditer(
        r"^\| (blri-\w\w-a\d) \| \w+ \| ([\d.]+) \| (yes|no) \|$", readme, re.MULTILINE)}
    good = {a["id"]: a["answer"]["scores"] for language in ("en", "zh")
            for a in json.loads((answers / "enpmr" / language / "blri.json").read_text(encoding="utf-8"))["answers"]
            if a["label"] == "acceptable"}
    assert set(table) == set(good)
    for answer_id, scores in good.items():
        mean, _ = blri_mean(scores, (-3, 3))
        assert table[answer_id] == (round(mean, 2), "yes" if mean >= 2 else "no"), answer_id
