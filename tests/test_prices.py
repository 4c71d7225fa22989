"""Every model a shipped config names has a price, so `--estimate` shows a cost and
`budget_usd` can be set: the config's own, or memsynth's list price (memsynth.core.prices)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from memsynth.core.config import LLMConfig, read_config
from memsynth.core.prices import DEFAULT_PRICES
from tests.conftest import ROOT, cli_json_here, write_config

CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def _named_models(path: Path) -> list[str]:
    llm = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("llm") or {}
    return [llm.get("model", LLMConfig.model_fields["model"].default),
            *(alias["model"] for alias in (llm.get("models") or {}).values())]


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_every_shipped_config_prices_every_model_it_names(path: Path):
    config = read_config(path)
    for model in _named_models(path):
        assert model in config.llm.prices, f"{path.name}: {model} has no price"
    # budget_usd is refused for an unpriced model: every shipped config can take one.
    LLMConfig.model_validate({**config.llm.model_dump(mode="json"), "budget_usd": 10})


def test_a_config_without_prices_gets_the_list_price_of_its_model_and_its_own_wins(tmp_path: Path):
    bare = LLMConfig.model_validate({"model": "qwen-max", "budget_usd": 5})
    assert bare.prices["qwen-max"].input_per_1m == DEFAULT_PRICES["qwen-max"]["input_per_1m"]
    assert LLMConfig().prices["gpt-4o-mini"].output_per_1m == 0.60  # as docs/configuration.md lists it
    own = LLMConfig.model_validate({"model": "qwen-max", "prices": {"qwen-max": {"input_per_1m": 9, "output_per_1m": 9}}})
    assert own.prices["qwen-max"].input_per_1m == 9
    unknown = LLMConfig.model_validate({"model": "my-local-model"})
    assert "my-local-model" not in unknown.prices  # no made-up price for a model memsynth does not know


def test_the_estimate_of_the_chinese_pal_config_shows_a_cost(tmp_path: Path):
    config = yaml.safe_load((ROOT / "configs" / "pal-set.yaml").read_text(encoding="utf-8"))
    config["llm"].pop("prices")  # the list price alone is enough
    path = write_config(tmp_path / "pal-set.yaml", **config)
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "OPENAI_API_KEY": "x"}  # nothing may be called
    estimate = cli_json_here("build", str(path), "--estimate", "--personas", "2", "--warehouse", str(tmp_path / "w"),
                             "--format", "json", env=env)
    assert estimate["cost_usd"] is not None and estimate["cost_usd"]["online"] > 0
