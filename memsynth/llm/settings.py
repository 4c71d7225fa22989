"""What an engine is told (its transport settings) and what it counts (live totals)."""

from __future__ import annotations

from dataclasses import dataclass, field

from memsynth.llm.batch import BatchSettings
from memsynth.llm.http import Client


@dataclass
class EngineSettings:
    """Transport settings resolved from config and environment (never the key itself)."""

    base_url: str | None
    api_key_env: str
    concurrency: int = 32
    concurrency_auto: bool = False  # concurrency is the most a latency-led ceiling may reach
    rpm: float | None = None
    tpm: float | None = None
    timeout_s: float = 120.0
    # Chat answers come streamed; a streamed answer times out on silence (no token for this
    # long), never on its length.
    stream: bool = True
    idle_timeout_s: float = 60.0
    # A streamed answer that has produced only whitespace, or one fragment repeated, for this
    # many tokens is stopped (memsynth.llm.runaway); 0: read to its limit.
    runaway_tokens: int = 256
    max_attempts: int = 6
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 30.0
    outage_wait_s: float = 600.0  # how long every call waits for an endpoint that went away
    rate_limit_wait_s: float = 600.0  # how long one call may keep being told 429
    # The most max_tokens a cut-off answer is asked again with (doubling each time);
    # None: asked again with the request's own.
    max_tokens_ceiling: int | None = None
    # The model's context in tokens, when the endpoint says (memsynth.llm.capabilities): the
    # ceiling when none is set, less the prompt.
    context_tokens: int | None = None
    # Stop before the cost of what was sent could pass this (US dollars), by `prices`:
    # model -> (input, output) dollars per million tokens.
    budget_usd: float | None = None
    # model -> (input, output, cached input) dollars per million tokens.
    prices: dict[str, tuple[float, float, float]] = field(default_factory=dict)
    # "batch": chat requests go out in OpenAI Batch API files (see memsynth.llm.batch).
    mode: str = "online"
    batch: BatchSettings = field(default_factory=BatchSettings)
    # How chat and embedding POSTs are sent (see memsynth.llm.http).
    client: Client = "openai"


@dataclass
class EngineCounters:
    """Live totals for progress displays and the build summary."""

    requests: int = 0  # sent upstream, including retries
    done: int = 0
    cached: int = 0
    failed: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    in_flight: int = 0
    probe_requests: int = 0  # the capability probe's small chat requests (not in `requests`)
    abandoned: int = 0  # requests given up on after a timeout, their connection closed
    runaways: int = 0  # answers stopped, or cut off, as runaways (memsynth.llm.runaway)
    # model -> [prompt, completion, cached prompt] tokens
    by_model: dict[str, list[int]] = field(default_factory=dict)


@dataclass
class Spend:
    """US dollars answered so far and held by requests in flight, against `budget_usd`."""

    spent: float = 0.0  # by the tokens answered so far, at `prices`
    reserved: float = 0.0  # the most the requests in flight can still cost
