"""The `llm` block of a build config: the model, its endpoint and limits, other models by alias,
prices, and what an endpoint's probe learnt; plain data, as the rest of the config is."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from memsynth.core.limits import AUTO_CONCURRENCY_MAX
from memsynth.core.prices import with_defaults
from memsynth.core.redaction import redacted


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Price(_Strict):
    """US dollars per million tokens."""

    input_per_1m: float = Field(ge=0)
    output_per_1m: float = Field(ge=0)
    # The provider's batch price; unset: half the online price (OpenAI's and most others' discount).
    batch_input_per_1m: float | None = Field(None, ge=0)
    batch_output_per_1m: float | None = Field(None, ge=0)
    # Prompt tokens the provider read from its prompt cache; unset: the input price (no
    # discount assumed: OpenAI's is 50-90 % depending on the model).
    cached_input_per_1m: float | None = Field(None, ge=0)

    def batch(self) -> tuple[float, float]:
        """(input, output) dollars per million tokens in batch mode."""
        return (self.input_per_1m / 2 if self.batch_input_per_1m is None else self.batch_input_per_1m,
                self.output_per_1m / 2 if self.batch_output_per_1m is None else self.batch_output_per_1m)

    def rates(self, *, batch: bool = False) -> tuple[float, float, float]:
        """(input, output, cached input) dollars per million tokens, online or in batch mode
        (where cached input is counted at the batch input price)."""
        if batch:
            per_in, per_out = self.batch()
            return per_in, per_out, per_in
        cached = self.input_per_1m if self.cached_input_per_1m is None else self.cached_input_per_1m
        return self.input_per_1m, self.output_per_1m, cached

    def cost(self, prompt: int, completion: int, cached: int = 0, *, batch: bool = False) -> float:
        """US dollars for these tokens (`cached` being part of `prompt`)."""
        per_in, per_out, per_cached = self.rates(batch=batch)
        return ((prompt - cached) * per_in + cached * per_cached + completion * per_out) / 1e6


class BatchConfig(_Strict):
    """llm.batch: how batch mode gathers requests and watches batches (see memsynth.llm.batch)."""

    gather_s: float = Field(2.0, gt=0)  # send once no request has joined for this long
    max_wait_s: float = Field(60.0, gt=0)  # or once the first has waited this long
    max_requests: int = Field(50_000, ge=1, le=50_000)  # the API's limit per file
    max_mb: float = Field(190, gt=0, le=200)
    poll_s: float = Field(30.0, gt=0)  # first wait before asking about a batch; x1.5 after
    poll_cap_s: float = Field(600.0, gt=0)


ResponseMode = Literal["auto", "json_schema", "json_object_schema", "json_object", "text"]
STAGE_KINDS = ("writers", "judges")


def _endpoint_url(value: str | None) -> str | None:
    """An http(s) URL with a host, nothing that cannot be sent: refused here, not after the
    probe's retries."""
    if value is None:
        return value
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value)
        host = parts.hostname
    except ValueError:
        host = None
    else:
        if parts.scheme not in ("http", "https"):
            host = None
    if not host or not value.isprintable() or any(c.isspace() for c in value):
        raise ValueError(f"expected an http(s):// URL with a host (such as http://127.0.0.1:8080/v1), "
                         f"got {redacted(value)[:80]!r}")
    return value


def _concurrency_auto(data: Any) -> Any:
    """`concurrency: auto` as the most it may reach, with concurrency_auto set."""
    if isinstance(data, dict) and data.get("concurrency") == "auto":
        data = {**data, "concurrency": AUTO_CONCURRENCY_MAX, "concurrency_auto": True}
    return data


class ModelAlias(_Strict):
    """llm.models.<alias>: another model (on another endpoint, if need be) that stages can use;
    what it leaves unset is the llm section's own."""

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    response_mode: ResponseMode | None = None
    concurrency: int | None = Field(None, ge=1, le=4096)
    concurrency_auto: bool = False  # `concurrency: auto`, for this alias's endpoint

    _url = field_validator("base_url")(_endpoint_url)
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    timeout_s: float | None = Field(None, gt=0)

    @model_validator(mode="before")
    @classmethod
    def _auto_concurrency(cls, data: Any) -> Any:
        return _concurrency_auto(data)


class Learnt(_Strict):
    """What an endpoint's probe settled in an llm block, and for which endpoint: a version's
    block keeps its response_mode and seed only on that endpoint; on another they go back
    to what was written, and that endpoint is probed (memsynth.generation.session)."""

    endpoint: str  # base URL (a password in it masked) and model; "" when not known
    response_mode: ResponseMode  # as written, before the probe settled it
    seed: int | None = None  # as written (a server that refuses `seed` clears llm.seed)
    # alias -> (endpoint, response_mode as written; None: the section's)
    models: dict[str, tuple[str, ResponseMode | None]] = Field(default_factory=dict)


class LLMConfig(_Strict):
    base_url: str | None = None  # default: $OPENAI_BASE_URL, then the OpenAI API
    api_key_env: str = "OPENAI_API_KEY"  # the variable's name; the key never enters config
    model: str = "gpt-4o-mini"
    # How answers are held to their schema. auto: what the endpoint enforces, found by a probe
    # before the first paid request (memsynth.llm.capabilities). json_schema: OpenAI's
    # response_format; json_object_schema: a schema inside json_object (llama-cpp-python);
    # json_object: JSON mode; text: nothing. The last three also put the schema in the prompt.
    response_mode: ResponseMode = "auto"
    temperature: float = Field(0.8, ge=0, le=2)
    max_tokens: int = Field(4096, ge=16)
    # A cut-off answer is asked again with max_tokens doubled up to this; unset: up to the
    # model's context when the endpoint's /models says it, else asked again unchanged.
    max_tokens_ceiling: int | None = Field(None, ge=16)
    # Each stage is first sent its own budget (what its answers need, with room to spare),
    # not max_tokens, which stays the most a first ask gets and, with no ceiling, what a
    # cut-off answer grows back to. false: every stage is sent max_tokens. Not hashed (nor
    # in any request's key: an answer that finished is valid under any budget).
    budgets: bool = True
    # A streamed answer that has produced only whitespace, one fragment repeated or text it already wrote, for this
    # many tokens is stopped and repaired, not read to its limit; 0: never. Not hashed.
    runaway_tokens: int = Field(256, ge=0, le=100_000)
    seed: int | None = None  # sent to endpoints that honour it
    # Requests in flight. `auto`: found while building, from how the server's answers slow
    # (memsynth.llm.limits.AutoConcurrency), for servers that queue instead of answering
    # 429; it is then kept as concurrency_auto: true, concurrency the most it may reach.
    concurrency: int = Field(32, ge=1, le=4096)
    concurrency_auto: bool = False
    rpm: float | None = Field(None, gt=0)
    tpm: float | None = Field(None, gt=0)
    timeout_s: float = Field(120, gt=0)  # an answer not streamed: the wait for all of it
    # Answers come streamed (server-sent events) and time out only on silence: no token for
    # idle_timeout_s, so a slow server that is working is never asked twice; a request still
    # queued waits while the server sends to any other (memsynth.llm.silence). Not hashed.
    stream: bool = True
    idle_timeout_s: float = Field(60, gt=0)
    max_attempts: int = Field(6, ge=1, le=20)  # failures of one request while the endpoint answers others
    outage_wait_s: float = Field(600, gt=0)  # how long a build waits for an endpoint that went away
    rate_limit_wait_s: float = Field(600, gt=0)  # how long one request may keep getting 429s
    retry_base_s: float = Field(0.5, gt=0, le=60)  # first backoff step; doubles per attempt
    repairs: int = Field(2, ge=0, le=10)
    # Send each stage's variables in the request body: only for memsynth's simulator
    # (`--llm simulator` turns it on), which answers from them instead of the prompt.
    stage_variables: bool = False
    prices: dict[str, Price] = Field(default_factory=dict)
    # Stop the build (nothing published, every answer cached) before the estimated cost of
    # what it sent would pass this; needs the model's price in `prices`.
    budget_usd: float | None = Field(None, gt=0)
    # online: one POST per request; batch: OpenAI Batch API files, at the batch price,
    # within 24 hours. Same answers, same rows: not part of the config's hash.
    mode: Literal["online", "batch"] = "online"
    batch: BatchConfig = Field(default_factory=BatchConfig)
    # How online calls are sent: `openai`, the openai client; `direct`, plain POSTs on
    # aiohttp with the same headers and the same errors, about 0.85 ms less CPU a call (for
    # a fast local endpoint, where the client's CPU bounds the build). Not hashed.
    client: Literal["openai", "direct"] = "openai"

    # Models besides `model`, by alias, and which stages use them: a stage's qualified or bare
    # name (`enpmr.support_dialogue`, `support_dialogue`), or a kind (`writers`, `judges`: the
    # quality filter's judges), mapped to an alias. A stage named nowhere uses `model`.
    models: dict[str, ModelAlias] = Field(default_factory=dict)
    stages: dict[str, str] = Field(default_factory=dict)
    # Set by the probe (never written by hand): see `Learnt`. Not hashed.
    learnt: Learnt | None = None

    @model_validator(mode="before")
    @classmethod
    def _auto_concurrency(cls, data: Any) -> Any:
        return _concurrency_auto(data)

    _url = field_validator("base_url")(_endpoint_url)

    @model_validator(mode="before")
    @classmethod
    def _default_prices(cls, data: Any) -> Any:
        # A model the config names but does not price gets its list price (memsynth.core.prices),
        # written into the config so the version records the price its cost was counted at.
        if isinstance(data, dict) and isinstance(data.get("prices", {}), dict):
            aliases = data.get("models") if isinstance(data.get("models"), dict) else {}
            named = [data.get("model", cls.model_fields["model"].default),
                     *(a.get("model") for a in aliases.values() if isinstance(a, dict))]
            data = {**data, "prices": with_defaults(data.get("prices") or {}, [m for m in named if isinstance(m, str)])}
        return data

    @model_validator(mode="after")
    def _budget_needs_a_price(self) -> LLMConfig:
        for model in (self.model, *(a.model for a in self.models.values())):
            if self.budget_usd is not None and model not in self.prices:
                raise ValueError(f"budget_usd needs the price of {model} in llm.prices")
        return self

    @model_validator(mode="after")
    def _stages_name_aliases(self) -> LLMConfig:
        for stage, alias in self.stages.items():
            if alias not in self.models:
                known = ", ".join(self.models) or "none: define them under llm.models"
                raise ValueError(f"stages.{stage}: {alias!r} is not a model alias (aliases: {known})")
        return self

    def alias_for(self, recipe: str, name: str, kind: str) -> str | None:
        """The alias a stage uses (None: `model`): by qualified name, bare name, then kind."""
        for key in (f"{recipe}.{name}", name, f"{kind}s"):
            if key in self.stages:
                return self.stages[key]
        return None
