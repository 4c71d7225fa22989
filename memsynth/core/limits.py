"""Bounds the config and the command line share (kept here so the CLI reads them without pydantic)."""

# A million personas is about 300 million calls: past any real build, and a bound keeps
# a typo (10^20) from filling memory before the first call.
MAX_PERSONAS = 1_000_000

# What `llm.concurrency: auto` may reach.
AUTO_CONCURRENCY_MAX = 512
