"""An engine and stage runner outside a build: what `memsynth eval` and `annotate` call
models with, under the same cache, limits and retries as a build."""

from __future__ import annotations

import os
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from memsynth.core.config import BuildConfig, Learnt, redacted
from memsynth.core.errors import ConfigError
from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.generation.stage import GenerationSettings, Route, Stage, StageRunner
from memsynth.llm.batch import BatchSettings
from memsynth.llm.cache import CACHE_DIR_NAME, ResponseCache
from memsynth.llm.engine import LLMEngine
from memsynth.llm.loop import LoopThread
from memsynth.llm.settings import EngineSettings

T = TypeVar("T")
LLMMode = Literal["simulator", "openai"]
SIMULATOR_ENDPOINT = "memsynth simulator"  # what a probe learnt on it holds on any of its ports


def endpoint_key(base_url: str, model: str) -> str:
    """The endpoint a probe's findings hold for: base URL (a password in it masked) and model."""
    return f"{redacted(base_url.rstrip('/'))} {model}"


# The key sent to memsynth's simulator, which asks for none. Keys are masked wherever they
# appear in what a build writes, so it must be a string no answer holds: "simulator" was,
# inside the model name memsynth-simulator.
SIMULATOR_API_KEY = "memsynth-sim-key-0d5c41b7e2"


@dataclass
class Endpoint:
    """An endpoint that is not the config's (memsynth's simulator): the layer that chose it
    started it, hands it in here, and stops it."""

    base_url: str
    api_key: str
    model: str  # the model every request names, whatever the config says
    stop: Callable[[], None]


def engine_settings(config: BuildConfig, base_url: str | None, *, concurrency: int | None = None,
                    rpm: float | None = None, tpm: float | None = None,
                    budget_usd: float | None = None) -> EngineSettings:
    """The config's transport settings; a Dask worker passes its share of the limits."""
    llm = config.llm
    batch = llm.mode == "batch"
    return EngineSettings(
        base_url=base_url, api_key_env=llm.api_key_env,
        concurrency=concurrency or llm.concurrency, concurrency_auto=llm.concurrency_auto,
        rpm=rpm or llm.rpm, tpm=tpm or llm.tpm, timeout_s=llm.timeout_s, stream=llm.stream, idle_timeout_s=llm.idle_timeout_s,
        runaway_tokens=llm.runaway_tokens,
        max_attempts=llm.max_attempts,
        backoff_base_s=llm.retry_base_s, outage_wait_s=llm.outage_wait_s,
        rate_limit_wait_s=llm.rate_limit_wait_s, max_tokens_ceiling=llm.max_tokens_ceiling,
        budget_usd=budget_usd or llm.budget_usd,
        prices={m: p.rates(batch=batch) for m, p in llm.prices.items()},
        mode=llm.mode, client=llm.client, batch=BatchSettings(
            gather_s=llm.batch.gather_s, max_wait_s=llm.batch.max_wait_s, max_requests=llm.batch.max_requests,
            max_bytes=int(llm.batch.max_mb * 1e6), poll_s=llm.batch.poll_s, poll_cap_s=llm.batch.poll_cap_s))


def generation_settings(config: BuildConfig, model: str, *, simulated: bool,
                        regenerate: dict[str, dict[str, str]] | None = None) -> GenerationSettings:
    """The config's sampling settings for `model` (stage variables sent to the simulator)."""
    llm = config.llm
    return GenerationSettings(
        model=model, response_mode=llm.response_mode, temperature=llm.temperature,
        max_tokens=llm.max_tokens, budgets=llm.budgets, repairs=llm.repairs, seed=llm.seed,
        stage_variables=llm.stage_variables or simulated, regenerate=regenerate or {})


def open_engine(config: BuildConfig, cache: ResponseCache, *, endpoint: Endpoint | None = None,
                model: str | None = None) -> tuple[LLMEngine, str]:
    """The config's engine, or one on `endpoint`; and the model its requests name."""
    model = model or os.environ.get("MEMSYNTH_MODEL") or config.llm.model
    api_key: str | None = None
    base_url = config.llm.base_url or os.environ.get("OPENAI_BASE_URL") or None
    if endpoint is not None:
        base_url, api_key, model = endpoint.base_url, endpoint.api_key, endpoint.model
    elif config.llm.budget_usd is not None and model not in config.llm.prices:
        raise ConfigError(f"llm.budget_usd needs the price of {model} in llm.prices ($MEMSYNTH_MODEL names it)")
    engine = LLMEngine(engine_settings(config, base_url), cache, api_key=api_key)
    for spec in config.llm.models.values():  # an alias's unset mode is the section's, as written
        spec.response_mode = spec.response_mode or config.llm.response_mode
    resolve_capabilities(config, engine, model, known=endpoint is not None)
    return engine, model


def open_routes(config: BuildConfig, engine: LLMEngine, *, endpoint: Endpoint | None,
                probe: bool = True, workers: int = 1) -> dict[str, Route]:
    """An engine per model alias (llm.models), counting into `engine`'s totals and budget.

    On memsynth's simulator (`endpoint`) every alias is the simulator's model. `probe`: learn
    each endpoint's capabilities (the build's driver; a worker reads what it kept). Dask
    `workers` divide each alias's limits, as they divide the section's.
    """
    llm = config.llm
    routes: dict[str, Route] = {}
    for alias, spec in llm.models.items():
        if endpoint is not None:
            base_url, api_key, model = endpoint.base_url, endpoint.api_key, endpoint.model
        else:
            base_url = spec.base_url or llm.base_url or os.environ.get("OPENAI_BASE_URL") or None
            api_key, model = None, spec.model
        concurrency = max(1, (spec.concurrency or llm.concurrency) // workers)
        settings = engine_settings(config, base_url, concurrency=concurrency,
                                   rpm=(spec.rpm or llm.rpm or 0) / workers or None,
                                   tpm=(spec.tpm or llm.tpm or 0) / workers or None,
                                   budget_usd=engine.settings.budget_usd)
        settings.api_key_env = spec.api_key_env or llm.api_key_env
        settings.concurrency_auto = spec.concurrency_auto if spec.concurrency is not None else llm.concurrency_auto
        settings.timeout_s = spec.timeout_s or settings.timeout_s
        try:
            alias_engine = LLMEngine(settings, engine.cache, api_key=api_key)
        except ConfigError as exc:
            raise ConfigError(f"llm.models.{alias}: {exc}") from exc
        alias_engine.share_accounts(engine)
        here = SIMULATOR_ENDPOINT if endpoint is not None else endpoint_key(alias_engine.base_url, model)
        learnt = llm.learnt
        prior = learnt.models.get(alias) if learnt is not None else None
        if learnt is not None and prior is not None and prior[0] != here:
            spec.response_mode = prior[1] or learnt.response_mode  # learnt elsewhere: ask this endpoint
        if learnt is not None:
            learnt.models[alias] = (here, prior[1] if prior is not None else spec.response_mode)
        mode = spec.response_mode or llm.response_mode
        if endpoint is not None:
            mode = "json_schema" if mode == "auto" else mode
        else:
            found = alias_engine.learn_capabilities(model, probe_formats=probe and mode == "auto", seed=llm.seed,
                                                    refresh=probe and not engine.cache.read_enabled)
            mode = found.response_mode if mode == "auto" and found.response_mode else mode
        spec.response_mode = mode  # type: ignore[assignment]  # what was sent, as the version records it
        routes[alias] = Route(alias_engine, model, mode)
    return routes


def stage_alias(config: BuildConfig) -> Callable[[Stage], str | None]:
    """Which model alias a stage uses under `config` (None: llm.model)."""
    llm = config.llm
    return lambda stage: llm.alias_for(stage.recipe, stage.name, stage.kind)


def resolve_capabilities(config: BuildConfig, engine: LLMEngine, model: str, *, known: bool) -> None:
    """Settle `llm.response_mode: auto` (and `seed`) from what the endpoint does, before any
    prompt is rendered or hashed: the config then records what was sent, and in `llm.learnt`
    for which endpoint, so a version's block is never taken as what another endpoint does.

    `known`: memsynth's own simulator, which takes OpenAI's json_schema and needs no probe.
    """
    llm = config.llm
    here = SIMULATOR_ENDPOINT if known else endpoint_key(engine.base_url, model)
    prior = llm.learnt
    if prior is not None and prior.endpoint != here:
        # Settled by another endpoint (a version built elsewhere): back to what was written,
        # and this endpoint is asked.
        llm.response_mode, llm.seed = prior.response_mode, prior.seed
    llm.learnt = Learnt(endpoint=here, response_mode=prior.response_mode if prior else llm.response_mode,
                        seed=prior.seed if prior else llm.seed, models=dict(prior.models) if prior else {})
    if known:
        if llm.response_mode == "auto":
            llm.response_mode = "json_schema"
        return
    found = engine.learn_capabilities(model, probe_formats=llm.response_mode == "auto", seed=llm.seed,
                                      refresh=not engine.cache.read_enabled)
    if llm.response_mode == "auto":
        assert found.response_mode is not None
        llm.response_mode = found.response_mode  # type: ignore[assignment]
    if not found.seed:
        llm.seed = None  # the server refuses the field: requests go without it


def cache_dir_for(config: BuildConfig, warehouse: Path) -> Path:
    """The config's cache folder (default: the warehouse's)."""
    return config.resolve_path(config.cache_dir) if config.cache_dir else warehouse / CACHE_DIR_NAME


def cache_for(config: BuildConfig, warehouse: Path, *, read: bool = True) -> ResponseCache:
    """The config's response cache (default: the warehouse's)."""
    return ResponseCache(cache_dir_for(config, warehouse), read=read, write=True)


@dataclass
class LLMSession:
    """A live engine and runner on their own event loop; `close()` drains the cache."""

    engine: LLMEngine
    runner: StageRunner
    loop: LoopThread
    cache: ResponseCache
    model: str
    endpoint: Endpoint | None

    @property
    def simulated(self) -> bool:
        return self.endpoint is not None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the session's loop, blocking until it finishes."""
        return self.loop.run(coro)

    def close(self) -> None:
        try:
            self.loop.run(self.runner.aclose())
        finally:
            self.loop.stop()
            self.cache.close()
            if self.endpoint is not None:
                self.endpoint.stop()

    def __enter__(self) -> LLMSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_session(config: BuildConfig, endpoint: Endpoint | None, warehouse: Path, *, model: str | None = None,
                 no_cache: bool = False, prompts_dirs: tuple[Path, ...] = ()) -> LLMSession:
    """An `LLMSession` for `config`'s endpoint (or `endpoint`, which the session then owns and
    stops) and sampling settings (model overridable)."""
    try:
        cache = cache_for(config, warehouse, read=not no_cache)
        try:
            engine, model = open_engine(config, cache, endpoint=endpoint, model=model)
        except BaseException:
            cache.close()
            raise
    except BaseException:
        if endpoint is not None:
            endpoint.stop()
        raise
    try:
        routes = open_routes(config, engine, endpoint=endpoint)
    except BaseException:
        cache.close()
        if endpoint is not None:
            endpoint.stop()
        raise
    runner = StageRunner(engine, PromptLibrary(DEFAULT_PROMPTS_DIR, *prompts_dirs),
                         generation_settings(config, model, simulated=endpoint is not None),
                         routes, stage_alias(config))
    return LLMSession(engine, runner, LoopThread(), cache, model, endpoint)
