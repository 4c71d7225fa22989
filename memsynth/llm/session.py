"""An engine and stage runner outside a build: what `memsynth eval` and `annotate` call
models with, under the same cache, limits and retries as a build."""

from __future__ import annotations

import os
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from memsynth.config import BuildConfig
from memsynth.errors import ConfigError
from memsynth.llm.batch import BatchSettings
from memsynth.llm.cache import CACHE_DIR_NAME, ResponseCache
from memsynth.llm.engine import EngineSettings, LLMEngine
from memsynth.llm.loop import LoopThread
from memsynth.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.simulator.server import MODEL_ID, Simulator, SimulatorThread
from memsynth.stage import GenerationSettings, StageRunner

T = TypeVar("T")
LLMMode = Literal["simulator", "openai"]


def engine_settings(config: BuildConfig, base_url: str | None, *, concurrency: int | None = None,
                    rpm: float | None = None, tpm: float | None = None,
                    budget_usd: float | None = None) -> EngineSettings:
    """The config's transport settings; a Dask worker passes its share of the limits."""
    llm = config.llm
    batch = llm.mode == "batch"
    return EngineSettings(
        base_url=base_url, api_key_env=llm.api_key_env,
        concurrency=concurrency or llm.concurrency, rpm=rpm or llm.rpm, tpm=tpm or llm.tpm,
        timeout_s=llm.timeout_s, max_attempts=llm.max_attempts,
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
        max_tokens=llm.max_tokens, repairs=llm.repairs, seed=llm.seed,
        stage_variables=llm.stage_variables or simulated, regenerate=regenerate or {})


def open_engine(config: BuildConfig, llm: LLMMode, cache: ResponseCache, *, latency_ms: float = 0.0,
                model: str | None = None) -> tuple[LLMEngine, SimulatorThread | None, str]:
    """The config's engine, or one on a fresh simulator; and the model its requests name."""
    model = model or os.environ.get("MEMSYNTH_MODEL") or config.llm.model
    simulator: SimulatorThread | None = None
    api_key: str | None = None
    base_url = config.llm.base_url or os.environ.get("OPENAI_BASE_URL") or None
    if llm == "simulator":
        simulator = SimulatorThread(Simulator(latency_ms=latency_ms)).start()
        base_url, api_key, model = simulator.base_url, "simulator", MODEL_ID
    elif config.llm.budget_usd is not None and model not in config.llm.prices:
        raise ConfigError(f"llm.budget_usd needs the price of {model} in llm.prices ($MEMSYNTH_MODEL names it)")
    try:
        engine = LLMEngine(engine_settings(config, base_url), cache, api_key=api_key)
    except BaseException:
        if simulator is not None:
            simulator.stop()
        raise
    return engine, simulator, model


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
    simulator: SimulatorThread | None

    @property
    def simulated(self) -> bool:
        return self.simulator is not None

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the session's loop, blocking until it finishes."""
        return self.loop.run(coro)

    def close(self) -> None:
        try:
            self.loop.run(self.engine.aclose())
        finally:
            self.loop.stop()
            self.cache.close()
            if self.simulator is not None:
                self.simulator.stop()

    def __enter__(self) -> LLMSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_session(config: BuildConfig, llm: LLMMode, warehouse: Path, *, model: str | None = None,
                 no_cache: bool = False, prompts_dirs: tuple[Path, ...] = ()) -> LLMSession:
    """An `LLMSession` for `config`'s endpoint and sampling settings (model overridable)."""
    cache = cache_for(config, warehouse, read=not no_cache)
    try:
        engine, simulator, model = open_engine(config, llm, cache, model=model)
    except BaseException:
        cache.close()
        raise
    runner = StageRunner(engine, PromptLibrary(DEFAULT_PROMPTS_DIR, *prompts_dirs),
                         generation_settings(config, model, simulated=llm == "simulator"))
    return LLMSession(engine, runner, LoopThread(), cache, model, simulator)
