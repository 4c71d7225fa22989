"""A model per stage (llm.models, llm.stages): each alias on its own endpoint, with its own
probe and limits, one account for the counts and the budget, recorded per stage."""

from __future__ import annotations

import pytest

from memsynth.core.errors import ConfigError
from memsynth.generation.registry import load_config
from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import cli_json_here, memsynth_cli, write_config

JUDGES = {"enpmr.scenario_consistency", "enpmr.faithfulness", "enpmr.blri"}


def test_two_aliases_on_two_servers_each_answer_their_stages_and_the_version_says_which(tmp_path):
    """Bulk stages on a cheap model, dialogues on a strong one, judges from another family on
    a second server (llama.cpp's, so its own probe finds its own structured output)."""
    with SimulatorThread(Simulator(models=("cheap", "strong"))) as main, \
            SimulatorThread(Simulator(profile="llamacpp", models=("judge",))) as other:
        main.simulator.record = other.simulator.record = True
        config = write_config(
            tmp_path / "c.yaml", dataset="mixed", personas={"count": 1},
            recipe_options={"dialogues_per_persona": 1},
            llm={"model": "cheap", "stage_variables": True, "concurrency": 8, "retry_base_s": 0.01,
                 "models": {"strong": {"model": "strong"},
                            "judge": {"model": "judge", "base_url": other.base_url, "concurrency": 2}},
                 "stages": {"support_dialogue": "strong", "judges": "judge"}})
        summary = cli_json_here("build", str(config), "--warehouse", str(tmp_path / "wh"), "--format", "json",
                                env={"OPENAI_BASE_URL": main.base_url, "OPENAI_API_KEY": "x"})
        assert summary["version"] == 1 and summary["row_counts"]["support_dialogues"] > 0
        sent = {(b["model"], b["memsynth"]["stage"]) for b in main.simulator.recorded if "memsynth" in b}
        judged = {(b["model"], b["memsynth"]["stage"]) for b in other.simulator.recorded if "memsynth" in b}
        # Audit judges are judges too: they go to the judge's model (memsynth.generation.audit).
        assert {s for m, s in judged if not s.startswith("enpmr.audit_")} <= JUDGES
        assert "enpmr.audit_support_dialogue" in {s for _, s in judged}
        assert not {s for _, s in sent if s.startswith("enpmr.audit_")}
        assert {m for m, _ in judged} == {"judge"} and judged
        assert ("strong", "enpmr.support_dialogue") in sent
        assert {s for m, s in sent if m == "strong"} == {"enpmr.support_dialogue"}
        assert not {s for _, s in sent} & JUDGES
        # The judges' server takes no json_schema: its probe chose llama-cpp-python's field.
        assert all(b["response_format"]["type"] == "json_object" for b in other.simulator.recorded if "memsynth" in b)
        # One account: the summary counts both servers' requests.
        assert summary["llm"]["requests"] == main.simulator.counters.requests + other.simulator.counters.requests - \
            summary["llm"]["probe_requests"]
        shown = cli_json_here("versions", "mixed", "--warehouse", str(tmp_path / "wh"), "--show", "1", "--format", "json")
        assert shown["stage_models"]["enpmr.support_dialogue"] == ["strong"]
        assert shown["stage_models"]["enpmr.blri"] == ["judge"] and shown["stage_models"]["enpmr.profile"] == ["cheap"]
        assert shown["config"]["llm"]["models"]["judge"]["response_mode"] == "json_object_schema"
        text = memsynth_cli("versions", "mixed", "--warehouse", str(tmp_path / "wh"), "--show", "1")
        assert "enpmr.support_dialogue: strong" in text.stdout and "enpmr.faithfulness: judge" in text.stdout


def test_stage_names_and_aliases_are_checked_when_the_config_loads(tmp_path):
    unknown_alias = write_config(tmp_path / "a.yaml", llm={"models": {"big": {"model": "m"}},
                                                          "stages": {"judges": "huge"}})
    with pytest.raises(ConfigError, match="stages.judges: 'huge' is not a model alias"):
        load_config(unknown_alias)
    unknown_stage = write_config(tmp_path / "b.yaml", llm={"models": {"big": {"model": "m"}},
                                                          "stages": {"support_dialog": "big"}})
    with pytest.raises(ConfigError, match="llm.stages.support_dialog: the recipe enpmr has no stage so named"):
        load_config(unknown_stage)


def test_the_estimate_prices_each_stage_at_its_own_model(tmp_path):
    prices = {"cheap": {"input_per_1m": 1, "output_per_1m": 1}, "dear": {"input_per_1m": 100, "output_per_1m": 100}}
    base = {"model": "cheap", "prices": prices}
    one = write_config(tmp_path / "one.yaml", personas={"count": 1}, llm=base)
    two = write_config(tmp_path / "two.yaml", personas={"count": 1},
                       llm={**base, "models": {"big": {"model": "dear"}}, "stages": {"judges": "big"}})
    flat = cli_json_here("build", str(one), "--estimate", "--format", "json", "--warehouse", str(tmp_path / "w1"))
    split = cli_json_here("build", str(two), "--estimate", "--format", "json", "--warehouse", str(tmp_path / "w2"))
    judged = [s for s in split["stages"] if s["stage"] in JUDGES]
    assert judged and all(s["model"] == "dear" for s in judged) and split["models"] == ["cheap", "dear"]
    judge_tokens = sum(s["prompt_tokens"] + s["completion_tokens"] for s in judged)
    rest = split["prompt_tokens"] + split["completion_tokens"] - judge_tokens
    assert split["cost_usd"]["online"] == pytest.approx((judge_tokens * 100 + rest) / 1e6, abs=0.011)
    assert split["cost_usd"]["online"] > flat["cost_usd"]["online"]
