"""`memsynth import characters`: role-playing scenes as memory units, annotated with emotions
and scored by Emotional RAG's retrievers, end to end on the simulator.

The fixture `tests/data/characters_sample.zh.json` is written for these tests in
CharacterEval's shape (overlapping contexts, narration, 「」 quotes); it is not copied.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from flows.characters.source import language_of, lines_of, memory_units, read_scenes
from memsynth.core.errors import ConfigError
from memsynth.quality.evaluation.emotional import EMOTIONS
from tests.conftest import ROOT, cli_json_here, memsynth_cli, write_config

SAMPLE = ROOT / "tests" / "data" / "characters_sample.zh.json"
RETRIEVERS = ["bm25", "dense", "emotional-C-A", "emotional-C-M", "emotional-S-S", "emotional-S-E"]


def test_scenes_become_question_answer_fragments_and_queries(tmp_path):
    scenes = read_scenes(SAMPLE)
    fragments, queries = memory_units(scenes)
    assert language_of(scenes) == "zh"
    # Narration is a speaker like any other; the role never answers it here.
    assert {f.asker for f in fragments} == {"周明", "陈阿姨", "小刘"}
    assert len(fragments) == 10 and len(queries) == 7
    first = fragments[0]
    # 「」 come off; a pair repeated by an overlapping context is one fragment of both scenes.
    assert first.answer == "等一位老顾客，他说要来取预订的诗集。" and first.scenes == ["1", "2"]
    assert first.text == "周明：你今天怎么还不关门？\n林晓雨：等一位老顾客，他说要来取预订的诗集。"
    assert [f.fragment_id for f in fragments if f.role == "老赵"] == [f"老赵#{i}" for i in range(1, 6)]
    last = queries[-1]
    assert (last.query_id, last.speaker, last.query) == ("7", "小刘", "您眼圈怎么红了？")
    assert last.context[-1] == "老赵：快，把那碗刚出锅的牛肉面端过去，她从小就爱吃。"
    # A scene ending with the role's own line asks nothing.
    ended = read_scenes_of({"甲": ["乙：你好\n甲：你好啊"]}, tmp_path)
    assert memory_units(ended)[1] == []


def read_scenes_of(data: object, folder: Path) -> list:
    path = folder / "characters_probe.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return read_scenes(path)


def test_the_role_scenes_shape_and_line_continuations(tmp_path):
    assert lines_of(["(night)", "Ann: Where were you?", "Bob: Out.", "  Long story."]) == (
        ("Ann", "Where were you?"), ("Bob", "Out. Long story."))
    assert lines_of("甲：我去了\n很远的地方") == (("甲", "我去了很远的地方"),)
    scenes = read_scenes_of({"Bob": [["Ann: Where were you?", "Bob: Out walking."], "Ann: Alone?\nBob: Always."]}, tmp_path)
    fragments, queries = memory_units(scenes)
    assert [f.text for f in fragments] == ["Ann：Where were you?\nBob：Out walking.", "Ann：Alone?\nBob：Always."]
    assert [f.scenes for f in fragments] == [["Bob#0"], ["Bob#1"]] and queries == []
    assert language_of(scenes) == "en"


@pytest.mark.parametrize("content, says", [
    ("not json", "not JSON"),
    ('[{"id": 1, "role": "", "context": "a：b"}]', "0.role"),
    ('{"甲": "乙：你好"}', "is not a CharacterEval list"),
    ('[{"id": 1, "role": "甲", "context": "no lines here"}]', "no \"speaker: text\" lines"),
])
def test_a_bad_file_is_one_line(tmp_path, content, says):
    path = tmp_path / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=says):
        read_scenes(path)


def test_import_annotate_and_eval_retrieval_on_the_simulator(tmp_path):
    wh = str(tmp_path)
    summary = cli_json_here("import", "characters", str(SAMPLE), "--dataset", "roles", "--warehouse", wh,
                            "--format", "json")
    assert summary["version"] == 1
    assert summary["statistics"] == {"roles": 2, "fragments": 10, "fragments_per_role": 5.0, "queries": 7}
    version = cli_json_here("versions", "roles", "--warehouse", wh, "--format", "json")[-1]
    assert version["config"]["language"] == "zh" and version["recipe"] == "characters"

    annotated = cli_json_here("annotate", "emotions", "--dataset", "roles", "--llm", "simulator", "--warehouse", wh,
                              "--no-progress", "--format", "json")
    assert annotated["version"] == 2 and annotated["by_kind"] == {"memory": 10, "query": 7}
    out_of_range = " OR ".join(f"{e} NOT BETWEEN 1 AND 10" for e in EMOTIONS)
    counts = cli_json_here("query", f"""SELECT count(*) AS n, count(*) FILTER ({out_of_range}) AS bad,
        (SELECT count(*) FROM character_fragments) AS fragments FROM emotions""",
                           "--dataset", "roles", "--warehouse", wh, "--format", "json")[0]
    assert counts == {"n": 17, "bad": 0, "fragments": 10}
    # The zh scoring prompt was the one used: the data was detected as Chinese.
    assert "emotions/score.zh.j2" in cli_json_here("versions", "roles", "--warehouse", wh, "--format", "json")[-1][
        "prompt_hashes"]

    run = cli_json_here("eval", "retrieval", "--dataset", "roles", "--llm", "simulator", "--warehouse", wh,
                        "--k", "1,3", "--format", "json")
    scores = {(s["system"], s["metric"]): s for s in run["scores"]}
    assert run["items"] == 7 and sorted({s for s, _ in scores}) == sorted(RETRIEVERS)
    for system in RETRIEVERS:
        # Every query's scene holds at least one of its role's fragments, so all 7 count.
        assert scores[system, "recall@3"]["n"] == 7
        assert 0 <= scores[system, "recall@1"]["value"] <= scores[system, "recall@3"]["value"] <= 100
        assert 0 <= scores[system, "emotion_distance@3"]["value"] <= 1
    # A role's bank (5) is smaller than the first pass (K = 20), so S-S ranks by emotion alone:
    # its top 3 are the closest in mood of any retriever; S-E ranks by semantics alone: dense.
    distance = {system: scores[system, "emotion_distance@3"]["value"] for system in RETRIEVERS}
    assert distance["emotional-S-S"] == pytest.approx(min(distance.values()))
    assert distance["emotional-S-E"] == pytest.approx(distance["dense"])
    assert scores["emotional-S-E", "ndcg@3"]["value"] == pytest.approx(scores["dense", "ndcg@3"]["value"])


def test_a_characters_dataset_is_imported_not_built(tmp_path):
    config = write_config(tmp_path / "c.yaml", dataset="roles", recipe="characters", recipe_options={})
    result = memsynth_cli("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path))
    assert result.returncode != 0 and len(result.stderr.strip().splitlines()) == 1
    assert "memsynth import characters FILE" in result.stderr
