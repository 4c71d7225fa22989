"""Emotion annotation and `memsynth eval`, end to end on the simulator over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import openai
import pytest

from memsynth.llm.cache import ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.request import EmbeddingRequest
from memsynth.llm.settings import EngineSettings
from memsynth.quality.evaluation.emotional import EMOTIONS
from tests.conftest import ROOT, cli_json_here, memsynth_cli, write_config

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("evaluation")

REFERENCE = Path(os.environ.get("MEMSYNTH_REFERENCE_DATA", ROOT.parent / "shared" / "reference-data"))
STRATMEM = REFERENCE / "stratmem" / "StratMemBench.json"
RETRIEVERS = ["bm25", "dense", "emotional-C-A", "emotional-C-M", "emotional-S-S", "emotional-S-E"]


def query(wh: Path, dataset: str, sql: str) -> list[dict]:
    return cli_json_here("query", sql, "--dataset", dataset, "--warehouse", str(wh), "--format", "json")


@pytest.fixture(scope="module")
def zh_build(tmp_path_factory) -> Path:
    """A zh enpmr build that scores emotions as it goes (recipe_options.emotions)."""
    wh = tmp_path_factory.mktemp("zh")
    config = write_config(wh / "zh.yaml", dataset="zh", language="zh", personas={"count": 2},
                          recipe_options={"emotions": True, "dialogues_per_persona": 3})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(wh), "--format", "json")
    return wh


def test_a_zh_build_scores_every_memory_and_query_on_all_eight_emotions(zh_build):
    counts = query(zh_build, "zh", """
        SELECT (SELECT count(*) FROM memories) AS memories,
               (SELECT count(*) FROM benchmark) AS queries,
               (SELECT count(*) FROM memories m JOIN emotions e ON e.item_kind = 'memory' AND e.item_id = m.memory_id) AS scored_memories,
               (SELECT count(*) FROM benchmark b JOIN emotions e ON e.item_kind = 'query' AND e.item_id = b.dialogue_id) AS scored_queries,
               (SELECT count(*) FROM emotions) AS rows""")[0]
    assert counts["memories"] > 50 and counts["queries"] > 0
    assert counts["scored_memories"] == counts["memories"] and counts["scored_queries"] == counts["queries"]
    assert counts["rows"] == counts["memories"] + counts["queries"]
    out_of_range = " OR ".join(f"{e} NOT BETWEEN 1 AND 10 OR {e} IS NULL" for e in EMOTIONS)
    assert query(zh_build, "zh", f"SELECT count(*) AS n FROM emotions WHERE {out_of_range}")[0]["n"] == 0
    # The zh prompt was used: the stage's calls name the zh template's hash in the version.
    version = cli_json_here("versions", "zh", "--warehouse", str(zh_build), "--format", "json")[-1]
    assert "emotions/score.zh.j2" in version["prompt_hashes"]


def test_eval_retrieval_scores_bm25_dense_and_the_four_emotional_strategies(zh_build, tmp_path):
    out = tmp_path / "report.md"
    run = cli_json_here("eval", "retrieval", "--dataset", "zh", "--llm", "simulator", "--warehouse", str(zh_build),
                        "--out", str(out), "--format", "json")
    overall = {(s["system"], s["metric"]): s["value"] for s in run["scores"] if s["scope"] == "all"}
    assert sorted({system for system, _ in overall}) == sorted(RETRIEVERS)
    for system in RETRIEVERS:
        assert 0 <= overall[system, "TMR"] <= 1
        for k in (1, 3, 5, 10):
            assert 0 <= overall[system, f"recall@{k}"] <= 100
            assert overall[system, f"precision@{k}"] == pytest.approx(overall[system, f"recall@{k}"] / k)
        assert overall[system, "recall@1"] <= overall[system, "recall@10"]
    needs = {s["scope"] for s in run["scores"]} - {"all"}
    assert needs and needs <= {"need:PN", "need:LB", "need:EN", "need:SA"}
    assert "| emotional-S-E |" in out.read_text(encoding="utf-8")
    stored = query(zh_build, "zh", f"SELECT r.task, r.version, count(*) AS n FROM eval_runs r JOIN eval_scores s "
                                   f"USING (run_id) WHERE run_id = '{run['run_id']}' GROUP BY 1, 2")
    assert stored == [{"task": "retrieval", "version": run["version"], "n": len(run["scores"])}]


def test_eval_response_grades_base_cot_and_golden_replies(zh_build):
    run = cli_json_here("eval", "response", "--dataset", "zh", "--llm", "simulator", "--warehouse", str(zh_build),
                        "--limit", "3", "--audit-rate", "1", "--format", "json")
    s = {(x["system"], x["metric"], x["scope"]): x for x in run["scores"]}
    # Every grade the judge gave, and every reply of the model under test, was audited against its
    # prompt's rules: the judge's error rate, and how far the model under test followed its prompt.
    audited = {k: x for k, x in s.items() if k[2] == "audit"}
    assert set(audited) == {("audit:enpmr.eval_judge", "eval-grades", "audit"),
                            ("audit:enpmr.eval_respond", "eval-companion", "audit"),
                            ("audit:enpmr.eval_respond", "eval-reply", "audit"),
                            ("audit:enpmr.eval_respond", "eval-chooses-memory", "audit")}
    assert {x["n"] for x in audited.values()} == {3 * 3}  # 3 dialogues x 3 settings
    assert run["settings"]["audit_rate"] == 1.0
    calls = query(zh_build, "zh", "SELECT count(*) AS n FROM llm_calls WHERE stage = 'enpmr.audit_eval_judge'")
    assert calls == [{"n": 0}]  # an evaluation's calls are in its run, not in the version's tables
    for setting in ("base", "cot", "golden"):
        for dim in ("fluency", "humanoid", "information", "empathy", "avg"):
            assert 1 <= s[setting, dim, "all"]["value"] <= 5 and s[setting, dim, "all"]["n"] == 3
    assert 0 <= s["base", "TMR", "all"]["value"] <= 1 and ("golden", "TMR", "all") not in s
    assert sum(x["n"] for (setting, metric, scope), x in s.items()
               if setting == "base" and metric == "empathy" and scope.startswith("need:")) == 3


def test_annotate_publishes_the_next_version_and_repairs_bad_scores(tmp_path, simulator, monkeypatch):
    config = write_config(tmp_path / "en.yaml", dataset="en", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 2})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path), "--format", "json")
    # Without emotion scores, the emotional retrievers refuse, in one line.
    refused = memsynth_cli("eval", "retrieval", "--dataset", "en", "--llm", "simulator", "--warehouse", str(tmp_path))
    assert refused.returncode != 0 and "memsynth annotate emotions" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    doubled = [{"dim": e if e != "anger" else "joy", "analysis": "x", "score": 3} for e in EMOTIONS]
    too_high = [{"dim": e, "analysis": "x", "score": 11 if e == "fear" else 2} for e in EMOTIONS]
    simulator.simulator.script("emotions_score", [json.dumps({"scores": doubled}), json.dumps({"scores": too_high})])
    monkeypatch.setenv("OPENAI_BASE_URL", simulator.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    from memsynth.quality.annotate import annotate_version

    summary = annotate_version(tmp_path, "en", None, progress=False)
    assert summary["version"] == 2 and summary["parent_version"] == 1 and summary["failed"] == 0
    calls = query(tmp_path, "en", "SELECT outcome, error FROM llm_calls WHERE stage = 'emotions.score' "
                                  "AND outcome <> 'ok'")
    assert {c["outcome"] for c in calls} == {"check_failed", "invalid_schema"}
    assert any("every_emotion_once" in c["error"] for c in calls)
    same = query(tmp_path, "en", "SELECT (SELECT count(*) FROM emotions) AS scored, "
                                 "(SELECT count(*) FROM memories) + (SELECT count(*) FROM benchmark) AS items, "
                                 "(SELECT count(*) FROM support_dialogues) AS dialogues")[0]
    assert same["scored"] == same["items"] == summary["items"]
    parent = cli_json_here("query", "SELECT count(*) AS n FROM support_dialogues", "--dataset", "en", "--version", "1",
                           "--warehouse", str(tmp_path), "--format", "json")[0]
    assert parent["n"] == same["dialogues"]
    other = memsynth_cli("eval", "stratmem", "--dataset", "en", "--llm", "simulator", "--warehouse", str(tmp_path))
    assert other.returncode != 0 and "does not apply to en (a enpmr dataset" in other.stderr


@pytest.mark.skipif(not STRATMEM.is_file(), reason=f"StratMem-Bench release not found at {STRATMEM}")
def test_eval_stratmem_runs_on_the_real_file(tmp_path):
    cli_json_here("import", "stratmem", str(STRATMEM), "--dataset", "smb", "--warehouse", str(tmp_path), "--format", "json")
    run = cli_json_here("eval", "stratmem", "--dataset", "smb", "--llm", "simulator", "--warehouse", str(tmp_path),
                        "--format", "json")
    assert run["items"] == 657
    s = {x["metric"]: x for x in run["scores"]}
    assert [s[f"SMC {k}"]["n"] for k in ("must-only", "nice-only", "must+nice")] == [50, 132, 475]
    weighted = sum(s[f"SMC {k}"]["value"] * s[f"SMC {k}"]["n"] for k in ("must-only", "nice-only", "must+nice")) / 657
    assert s["SMC all"]["value"] == pytest.approx(weighted)
    for name in ("PES", "CIR", "SMC all"):
        assert 0 <= s[name]["value"] <= 100
    assert 1 <= s["MIQ"]["value"] <= 5
    judged = query(tmp_path, "smb", "SELECT count(*) AS n FROM eval_scores")[0]["n"]
    assert judged == len(run["scores"])


def test_eval_pal_runs_on_a_pal_build(tmp_path):
    config = write_config(tmp_path / "pal.yaml", dataset="p", recipe="pal", personas={"count": 2})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path), "--format", "json")
    run = cli_json_here("eval", "pal", "--dataset", "p", "--llm", "simulator", "--warehouse", str(tmp_path),
                        "--format", "json")
    s = {x["metric"]: x["value"] for x in run["scores"]}
    assert run["items"] > 0
    for n in (1, 2, 3, 4):
        assert 0 <= s[f"restatement BLEU-{n}"] <= 100 and 0 <= s[f"generation BLEU-{n}"] <= 100
    assert s["restatement BLEU-1"] >= s["restatement BLEU-4"]
    assert 0 <= s["restatement G-Score"] <= 100 and -100 <= s["selection S-Score"] <= 100


def test_the_simulator_serves_deterministic_embeddings_that_the_engine_caches(simulator, tmp_path):
    client = openai.OpenAI(base_url=simulator.base_url, api_key="x")
    first = client.embeddings.create(model="m", input=["my sister", "我的姐姐"]).data
    again = client.embeddings.create(model="m", input="my sister").data
    assert first[0].embedding == again[0].embedding and len(first[0].embedding) == 256
    assert first[0].embedding != first[1].embedding

    async def twice() -> tuple[list[float], list[float], int]:
        engine = LLMEngine(EngineSettings(base_url=simulator.base_url, api_key_env="X"),
                           ResponseCache(tmp_path / "cache"), api_key="x")
        a = await engine.embed(EmbeddingRequest("m", "my sister"))
        b = await engine.embed(EmbeddingRequest("m", "my sister"))
        await engine.aclose()
        return a, b, engine.counters.cached

    a, b, cached = asyncio.run(twice())
    assert a == b == pytest.approx(first[0].embedding) and cached == 1
