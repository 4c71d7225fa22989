"""List prices of the models the shipped configs and docs name, in US dollars per million
tokens: a config that names one of these models without pricing it gets this price, so
`--estimate` shows a cost and `budget_usd` can be set. A config's own entry always wins
(prices change; check your provider's page before trusting an estimate).

Figures as published by each provider (online, uncached input unless `cached_input_per_1m`
is given) when this table was last revised; batch prices default to half the online ones.
"""

from __future__ import annotations

from typing import Any

REVISED = "2025-06"

DEFAULT_PRICES: dict[str, dict[str, Any]] = {
    # OpenAI (platform.openai.com/docs/pricing)
    "gpt-4o-mini": {"input_per_1m": 0.15, "output_per_1m": 0.60, "cached_input_per_1m": 0.075},
    "gpt-4o": {"input_per_1m": 2.50, "output_per_1m": 10.00, "cached_input_per_1m": 1.25},
    "gpt-4.1-mini": {"input_per_1m": 0.40, "output_per_1m": 1.60, "cached_input_per_1m": 0.10},
    "gpt-4.1": {"input_per_1m": 2.00, "output_per_1m": 8.00, "cached_input_per_1m": 0.50},
    # DeepSeek (api-docs.deepseek.com/quick_start/pricing), cache-miss input
    "deepseek-chat": {"input_per_1m": 0.27, "output_per_1m": 1.10, "cached_input_per_1m": 0.07},
    # Alibaba Cloud Model Studio, international (alibabacloud.com/help/en/model-studio/models)
    "qwen-max": {"input_per_1m": 1.60, "output_per_1m": 6.40},
    "qwen-plus": {"input_per_1m": 0.40, "output_per_1m": 1.20},
}


def with_defaults(prices: dict[str, Any], models: list[str]) -> dict[str, Any]:
    """`prices` plus the default price of each of `models` it does not name."""
    missing = {m: DEFAULT_PRICES[m] for m in models if m not in prices and m in DEFAULT_PRICES}
    return {**prices, **missing} if missing else prices
