"""Build configs: YAML validated by pydantic, resolved against flags and environment; plain data
that knows no recipe. The `llm` block is memsynth.core.llm_config's."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from memsynth.core.errors import ConfigError
from memsynth.core.inputs import loads_yaml
from memsynth.core.limits import AUTO_CONCURRENCY_MAX as AUTO_CONCURRENCY_MAX
from memsynth.core.limits import MAX_PERSONAS

# The llm block and redaction have modules of their own; their names are still found here.
from memsynth.core.llm_config import STAGE_KINDS as STAGE_KINDS
from memsynth.core.llm_config import BatchConfig as BatchConfig
from memsynth.core.llm_config import Learnt as Learnt
from memsynth.core.llm_config import LLMConfig
from memsynth.core.llm_config import ModelAlias as ModelAlias
from memsynth.core.llm_config import Price as Price
from memsynth.core.llm_config import ResponseMode as ResponseMode
from memsynth.core.redaction import redacted

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
