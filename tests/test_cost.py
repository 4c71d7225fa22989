"""Cost before spending: `build --estimate`, and `llm.budget_usd` stopping a build cleanly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memsynth.core.config import Price
from tests.conftest import cli_json_here, memsynth_cli, start_simulator, write_config

PRICES = {"test-model": {"input_per_1m": 0.15, "output_per_1m": 0.60}}


def test_estimate_is_within_a_fifth_of_the_real_build_and_calls_nothing(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", personas={"count": 8},
                          llm={"model": "test-model", "stage_variables": True, "prices": PRICES})
    # No endpoint exists at this address: an estimate that called one would fail.
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}
    estimate = cli_json_here("build", str(config), "--estimate", "--warehouse", str(tmp_path / "w"),
                             "--format", "json", env=env)
    assert estimate["dry_run_personas"] == 4 and estimate["personas"] == 8
    assert not (tmp_path / "w" / "t").exists()  # nothing published where the config points
    real = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "real"),
                         "--no-progress", "--format", "json")
    tokens = real["llm"]["prompt_tokens"] + real["llm"]["completion_tokens"]
    guessed = estimate["prompt_tokens"] + estimate["completion_tokens"]
    assert abs(guessed - tokens) <= 0.2 * tokens, (guessed, tokens)
    assert abs(estimate["calls"] - real["llm"]["calls"]) <= 0.2 * real["llm"]["calls"]
    # Audits are sampled by item (quality.audit_rate), so which audit stages a few personas
    # happen to call may differ; every writer stage must be in both.
    def writers(stages):
        return {s for s in stages if not s.split(".")[1].startswith("audit_")}
    assert writers(s["stage"] for s in estimate["stages"]) == writers(real["stages"])
    cost = estimate["cost_usd"]
    expected = (estimate["prompt_tokens"] * 0.15 + estimate["completion_tokens"] * 0.60) / 1e6
    assert cost["online"] == pytest.approx(expected, abs=0.01)
    assert cost["batch"] == pytest.approx(cost["online"] / 2, abs=0.01)


def test_a_budget_stops_the_build_before_it_is_passed_and_a_rerun_goes_on(tmp_path: Path):
    # $1,000 a million tokens: each call costs about a dollar, so $30 buys a few dozen.
    prices = {"test-model": {"input_per_1m": 1000, "output_per_1m": 1000}}
    sim = start_simulator(latency_ms=5)
    try:
        env = {"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        config = write_config(tmp_path / "c.yaml", llm={"model": "test-model", "stage_variables": True,
                                                        "concurrency": 4, "max_tokens": 1024,
                                                        "prices": prices, "budget_usd": 30})
        stopped = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "w"), "--no-progress", env=env)
        assert stopped.returncode != 0 and "Traceback" not in stopped.stderr
        assert "the budget of $30 is reached" in stopped.stderr.strip().splitlines()[-1]
        assert not (tmp_path / "w" / "t" / "catalog.ducklake").exists()  # nothing published
        records = [json.loads(line) for f in (tmp_path / "w" / "_cache").glob("*.jsonl")
                   for line in f.read_text().splitlines()]
        spent = sum(r["response"]["prompt_tokens"] + r["response"]["completion_tokens"] for r in records) / 1e3
        assert records and spent <= 30, spent  # every answer it paid for is cached, under the budget
        # And the capability probe's one small request, whose answer is kept apart (_cache/endpoints).
        assert sim.simulator.counters.requests == len(records) + 1

        config = write_config(tmp_path / "c.yaml", llm={"model": "test-model", "stage_variables": True,
                                                        "concurrency": 4, "max_tokens": 1024,
                                                        "prices": prices, "budget_usd": 100_000})
        summary = cli_json_here("build", str(config), "--warehouse", str(tmp_path / "w"), "--no-progress",
                                "--format", "json", env=env)
        assert summary["llm"]["cache_hits"] >= len(records)
        assert summary["llm"]["requests"] == summary["llm"]["calls"] - summary["llm"]["cache_hits"]
    finally:
        sim.stop()


def test_a_budget_without_a_price_is_refused(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", llm={"model": "test-model", "budget_usd": 5})
    result = memsynth_cli("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "w"))
    assert result.returncode != 0
    assert "budget_usd needs the price of test-model in llm.prices" in result.stderr
    assert Price(input_per_1m=1, output_per_1m=4).batch() == (0.5, 2.0)
    assert Price(input_per_1m=1, output_per_1m=4, batch_input_per_1m=0.7).batch() == (0.7, 2.0)


def test_the_simulator_s_prompt_cache_serves_shared_prefixes_of_long_prompts():
    from memsynth.simulator.prompt_cache import PrefixCache

    cache = PrefixCache()
    shared = "instructions and profile " * 200  # 5,000 characters: 1,250 tokens
    assert cache.read("m", shared + "item one") == 0  # the first sees nothing cached
    assert cache.read("m", shared + "item two") == 1152  # 128-token steps of the shared 1,250
    assert cache.read("other-model", shared + "item two") == 0  # per model
    assert cache.read("m", "short prompt " + shared[:3000]) == 0  # under 1,024 tokens: never cached
    assert cache.read("m", "x" + shared) == 0  # a different first character: a different prefix


def test_cached_prompt_tokens_are_recorded_per_call_and_priced(tmp_path: Path):
    from memsynth.simulator.prompt_cache import PrefixCache

    prices = {"test-model": {"input_per_1m": 1.0, "output_per_1m": 4.0, "cached_input_per_1m": 0.25}}
    # The simulator's stand-in profiles are short: cache from 256 tokens, in 64-token steps.
    sim = start_simulator(prompt_cache=PrefixCache(min_tokens=256, step_tokens=64))
    try:
        env = {"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        config = write_config(tmp_path / "c.yaml", llm={"model": "test-model", "stage_variables": True,
                                                        "prices": prices})
        summary = cli_json_here("build", str(config), "--warehouse", str(tmp_path / "w"), "--no-progress",
                                "--format", "json", env=env)
        rows = cli_json_here("query", "SELECT stage, sum(prompt_tokens) p, sum(cached_prompt_tokens) c FROM llm_calls "
                             "WHERE NOT cache_hit GROUP BY stage", "--dataset", "t", "--warehouse", str(tmp_path / "w"),
                             "--format", "json")
        estimate = cli_json_here("build", str(config), "--estimate", "--warehouse", str(tmp_path / "e"),
                                 "--format", "json", env=env)
    finally:
        sim.stop()
    cached = {r["stage"]: r["c"] for r in rows}
    # A persona's prompts of a stage share their instructions and profile, then differ.
    for stage in ("enpmr.goal", "enpmr.power", "enpmr.memory_session", "enpmr.support_dialogue"):
        assert cached[stage] > 0, rows
    assert all(r["c"] < r["p"] for r in rows)
    llm = summary["llm"]
    assert llm["cached_prompt_tokens"] == sum(cached.values())
    price = Price(**prices["test-model"])
    expected = price.cost(llm["prompt_tokens"], llm["completion_tokens"], llm["cached_prompt_tokens"])
    assert llm["estimated_cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert expected < price.cost(llm["prompt_tokens"], llm["completion_tokens"])
    # The estimate's dry run is on the built-in simulator (a provider's 1,024-token floor).
    assert estimate["cached_prompt_tokens"] == sum(s["cached_prompt_tokens"] for s in estimate["stages"])
    assert estimate["cost_usd"]["online"] == pytest.approx(price.cost(
        estimate["prompt_tokens"], estimate["completion_tokens"], estimate["cached_prompt_tokens"]), abs=0.01)
