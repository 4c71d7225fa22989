"""Build configs: YAML validated by pydantic, resolved against flags and environment; plain data
that knows no recipe."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memsynth.core.errors import ConfigError
from memsynth.core.inputs import loads_yaml
from memsynth.core.limits import AUTO_CONCURRENCY_MAX, MAX_PERSONAS
from memsynth.core.prices import with_defaults

PROJECT_ROOT = Path(__file__).resolve().parents[2]
# How and where a build runs rather than what it builds: left out of the config's hash.
EXECUTION_FIELDS = {"runner", "dask", "catalog_dir", "catalog", "s3"}
LLM_EXECUTION_FIELDS = {"mode", "batch", "client", "stream", "idle_timeout_s", "concurrency_auto", "learnt",
                        "budgets", "runaway_tokens"}
SEED_PERSONAS = PROJECT_ROOT / "data" / "personas" / "seed_personas.jsonl"
# The dates a build may be set at: recipes count years and months back from it (enpmr's five
# years of life themes, pal's timelines), and prompts show them as the calendar people use.
EARLIEST_DATE, LATEST_DATE = dt.date(1900, 1, 1), dt.date(2100, 12, 31)


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
    # A streamed answer that has produced only whitespace, or one fragment repeated, for this
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


class PersonasConfig(_Strict):
    count: int = Field(3, ge=1, le=MAX_PERSONAS)
    files: list[str] = Field(default_factory=list)  # extra JSONL files, relative to the config
    include_seed: bool = True
    include_imported: bool = True


class S3Config(_Strict):
    """How to reach an `s3://` warehouse; unset: AWS_ENDPOINT_URL(_S3) and AWS_REGION.
    Credentials are never read from here: only from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY."""

    endpoint_url: str | None = None  # an S3-compatible server (MinIO, R2, ...); unset: AWS
    region: str | None = None


class DaskConfig(_Strict):
    """Where `runner: dask` runs shards."""

    # A running scheduler to join (tcp://host:8786); unset: a LocalCluster for this build.
    address: str | None = None
    # The LocalCluster's worker processes. With `address`: how many workers the endpoint's
    # limits are divided among (default: those the scheduler has when the build starts).
    workers: int | None = Field(None, ge=1, le=1024)


class QualityConfig(_Strict):
    """Audit judges (memsynth.generation.audit) and what a release may state."""

    # The share of a stage's items an audit judge reads; stages that write gold labels are
    # audited on every item whatever this says.
    audit_rate: float = Field(0.1, ge=0, le=1)
    # `release create` refuses a version where a gold-label rule's 95 % Wilson upper bound on
    # its audited violation rate is above this (unless told to accept it).
    max_violation_rate: float = Field(0.05, ge=0, le=1)


class BuildConfig(_Strict):
    dataset: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    recipe: str = "enpmr"  # an installed recipe (`memsynth recipes` lists them)
    description: str = ""
    seed: int = 0
    reference_date: dt.date = dt.date(2024, 12, 2)
    language: Literal["en", "zh"] = "en"
    personas: PersonasConfig = Field(default_factory=PersonasConfig)
    shard_size: int = Field(8, ge=1, le=1000)
    max_workers: int = Field(4, ge=1, le=64)  # shards running at once (threads, over all Dask workers)
    # Where shards run: threads of this process sharing one event loop, or Dask workers,
    # each with its own engine and a share of the limits. Not part of the config's hash:
    # the same config builds the same rows on either.
    runner: Literal["thread", "dask"] = "thread"
    dask: DaskConfig = Field(default_factory=DaskConfig)
    max_failure_rate: float = Field(0.2, ge=0, le=1)
    warehouse: str | None = None  # a folder, or s3://bucket/prefix (see memsynth.warehouse.location)
    # With an s3:// warehouse: the local folder for its catalogs and cache index
    # (default: ~/.cache/memsynth/warehouses/<bucket>/<prefix>).
    catalog_dir: str | None = None
    # The warehouse's DuckLake catalogs in one PostgreSQL database (postgres://user@host:port/db,
    # a schema per dataset), so many machines can publish at once; the password comes from
    # PGPASSWORD or a service file only. Unset: a catalog file per dataset in the warehouse.
    catalog: str | None = None
    s3: S3Config = Field(default_factory=S3Config)
    cache_dir: str | None = None  # default: <warehouse>/_cache
    llm: LLMConfig = Field(default_factory=LLMConfig)
    quality: QualityConfig = Field(default_factory=QualityConfig)
    # Validated by the recipe's options model when the config loads (memsynth.generation.registry's
    # load_config), and kept resolved (every default filled in), so the published config and
    # its hash say what was built. This module knows no recipe.
    recipe_options: dict[str, Any] = Field(default_factory=dict)

    # Where the YAML came from; relative paths in it are read from there.
    source_dir: Path = Field(default=Path("."), exclude=True)

    @field_validator("reference_date")
    @classmethod
    def _date_in_range(cls, value: dt.date) -> dt.date:
        if not EARLIEST_DATE <= value <= LATEST_DATE:
            raise ValueError(f"{value.isoformat()} is outside {EARLIEST_DATE.isoformat()} … {LATEST_DATE.isoformat()}")
        return value

    @model_validator(mode="after")
    def _batches_gather_in_one_process(self) -> BuildConfig:
        if self.llm.mode == "batch" and self.runner == "dask":
            raise ValueError("llm.mode: batch runs with runner: thread (one process gathers the batches; "
                             "the provider does the parallel work)")
        return self

    def resolve_path(self, value: str) -> Path:
        path = Path(value).expanduser()
        return path if path.is_absolute() else (self.source_dir / path)

    @classmethod
    def of_version(cls, recorded: dict[str, Any], **changes: Any) -> BuildConfig:
        """The config a version records, with `changes`; what an import recorded beside the
        config's own fields (its file and digest) is left out."""
        return cls.model_validate({k: v for k, v in {**recorded, **changes}.items() if k in cls.model_fields})

    def hash(self) -> str:
        """sha256 (first 16 hex) of the redacted config: same config, same hash."""
        excluded: dict[str, Any] = {name: True for name in EXECUTION_FIELDS}
        excluded["llm"] = {name: True for name in LLM_EXECUTION_FIELDS}
        data = self.model_dump(mode="json", exclude=excluded)
        for name in ("models", "stages"):  # unset, they leave the hash what it was before they existed
            if not data["llm"][name]:
                del data["llm"][name]
        text = json.dumps(redacted(data), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read_settings(path: Path) -> dict[str, Any]:
    """A YAML file's top-level mapping; errors become one ConfigError line."""
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        data = loads_yaml(path.read_text(encoding="utf-8"), str(path))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping of settings at the top level")
    return data


def _invalid(path: Path | str, exc: ValidationError, prefix: str = "") -> ConfigError:
    err = exc.errors()[0]
    where = prefix + ".".join(str(p) for p in err["loc"]) or "config"
    more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return ConfigError(f"{path}: {where}: {err['msg'].removeprefix('Value error, ')}{more}")


def read_config(path: Path | str) -> BuildConfig:
    """Read and validate a YAML build config, its recipe options as written (`memsynth.generation.registry.
    load_config` resolves them); errors become one ConfigError line."""
    path = Path(path)
    data = _read_settings(path)
    try:
        config = BuildConfig.model_validate(data)
    except ValidationError as exc:
        raise _invalid(path, exc) from exc
    config.source_dir = path.resolve().parent
    return config


def read_llm_config(path: Path | str) -> LLMConfig:
    """The `llm` block of a YAML file: a build config's, a file holding only `llm:`, or the
    block's fields at the top level; validated as a build's (`concurrency: auto` and all)."""
    path = Path(path)
    data = _read_settings(path)
    block, prefix = (data["llm"], "llm.") if isinstance(data.get("llm"), dict) else (data, "")
    if "learnt" in block:
        raise ConfigError(f"{path}: {prefix}learnt: set by memsynth's probe, not by hand")
    try:
        return LLMConfig.model_validate(block)
    except ValidationError as exc:
        raise _invalid(path, exc, prefix) from exc


def with_llm(llm: LLMConfig, **changes: Any) -> LLMConfig:
    """`llm` with `changes` (None: left as it is), validated as a build's block is: a number
    for `concurrency` turns `auto` off, `auto` turns it on."""
    changes = {k: v for k, v in changes.items() if v is not None}
    data = llm.model_dump()
    if "concurrency" in changes and changes["concurrency"] != "auto":
        data["concurrency_auto"] = False
    try:
        return LLMConfig.model_validate({**data, **changes})
    except ValidationError as exc:
        err = exc.errors()[0]
        where = ".".join(["llm", *(str(p) for p in err["loc"])])
        raise ConfigError(f"{where}: {err['msg'].removeprefix('Value error, ')}") from exc


_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|password|authorization)$", re.I)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def redacted(value: Any, key: str = "") -> Any:
    """A copy with secret-looking values masked (the key's *name* in api_key_env stays)."""
    if isinstance(value, dict):
        return {k: redacted(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, key) for v in value]
    if isinstance(value, str):
        if _SECRET_KEY.search(key):
            return "***"
        return _URL_CREDENTIALS.sub("***@", value)
    return value
