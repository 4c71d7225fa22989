"""An engine and stage runner outside a build: what `memsynth eval` and `annotate` call
models with, under the same cache, limits and retries as a build."""

from __future__ import annotations

import os
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from memsynth.config import BuildConfig
from memsynth.llm.cache import CACHE_DIR_NAME, ResponseCache
from memsynth.llm.engine import EngineSettings, LLMEngine
from memsynth.llm.loop import LoopThread
from memsynth.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary
from memsynth.simulator.server import MODEL_ID, Simulator, SimulatorThread
from memsynth.stage import GenerationSettings, StageRunner

T = TypeVar("T")
LLMMode = Literal["simulator", "openai"]


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
    try:
        engine = LLMEngine(EngineSettings(
            base_url=base_url, api_key_env=config.llm.api_key_env,
            concurrency=config.llm.concurrency, rpm=config.llm.rpm, tpm=config.llm.tpm,
            timeout_s=config.llm.timeout_s, max_attempts=config.llm.max_attempts,
            backoff_base_s=config.llm.retry_base_s, outage_wait_s=config.llm.outage_wait_s,
            rate_limit_wait_s=config.llm.rate_limit_wait_s,
            max_tokens_ceiling=config.llm.max_tokens_ceiling), cache, api_key=api_key)
    except BaseException:
        if simulator is not None:
            simulator.stop()
        raise
    return engine, simulator, model


def cache_for(config: BuildConfig, warehouse: Path, *, read: bool = True) -> ResponseCache:
    """The config's response cache (default: the warehouse's)."""
    directory = config.resolve_path(config.cache_dir) if config.cache_dir else warehouse / CACHE_DIR_NAME
    return ResponseCache(directory, read=read, write=True)


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
    runner = StageRunner(engine, PromptLibrary(DEFAULT_PROMPTS_DIR, *prompts_dirs), GenerationSettings(
        model=model, response_mode=config.llm.response_mode, temperature=config.llm.temperature,
        max_tokens=config.llm.max_tokens, repairs=config.llm.repairs, seed=config.llm.seed,
        stage_variables=config.llm.stage_variables or llm == "simulator"))
    return LLMSession(engine, runner, LoopThread(), cache, model, simulator)
