"""`memsynth simulator serve`: the built-in OpenAI-compatible endpoint as a server."""

from __future__ import annotations

import click

from memsynth.core.errors import MemsynthError
from memsynth.simulator.profiles import PROFILES


@click.group()
def simulator() -> None:
    """The built-in OpenAI-compatible simulator (for dry runs, tests and benchmarks)."""


@simulator.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="address to listen on")
@click.option("--port", type=click.IntRange(0, 65535), default=8001, show_default=True,
              help="port to listen on (0: any free port)")
@click.option("--latency-ms", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="delay before each answer")
@click.option("--rate-429", type=click.FloatRange(0, 1), default=0.0, help="share of requests answered 429")
@click.option("--rate-500", type=click.FloatRange(0, 1), default=0.0, help="share answered 500")
@click.option("--rate-dropped", type=click.FloatRange(0, 1), default=0.0,
              help="share whose connection is closed without an answer")
@click.option("--rate-malformed", type=click.FloatRange(0, 1), default=0.0,
              help="share answered 200 with a body cut in half (not a readable completion)")
@click.option("--rate-truncated", type=click.FloatRange(0, 1), default=0.0,
              help="share whose content is cut in half, with finish_reason=length")
@click.option("--rate-slow", type=click.FloatRange(0, 1), default=0.0,
              help="share answered --slow-ms late")
@click.option("--slow-ms", type=click.FloatRange(min=0), default=2000.0, show_default=True,
              help="extra delay of a slow answer")
@click.option("--seed", type=int, default=0, show_default=True, help="seed of the fault draws")
@click.option("--upstream", help="act as a fault-injecting proxy in front of this OpenAI-compatible /v1 URL")
@click.option("--batch-delay-s", type=click.FloatRange(min=0), default=0.0, show_default=True,
              help="how long a batch takes from creation to completed")
@click.option("--batch-failed-rate", type=click.FloatRange(0, 1), default=0.0,
              help="share of batch lines written to the error file instead of answered")
@click.option("--profile", type=click.Choice(sorted(PROFILES)), default="openai", show_default=True,
              help="which server to behave as: `llamacpp` refuses a json_schema response_format with "
                   "HTTP 500 and enforces a schema beside json_object; `vllm` lists max_model_len and "
                   "refuses longer requests; `ollama` refuses an unpulled model as Ollama does")
@click.option("--model", "models", multiple=True, metavar="NAME",
              help="a model name to serve and list at /models (repeat for more); unset: any name")
@click.option("--token-rate", type=click.FloatRange(min=0, min_open=True), default=None,
              help="completion tokens per second, as a slow local server generates them (unset: at once)")
@click.option("--per-token-ms", type=click.FloatRange(min=0, min_open=True), default=None,
              help="milliseconds a token takes to generate alone (another way to give --token-rate)")
@click.option("--capacity", type=click.IntRange(min=1), default=None,
              help="requests generated at once (llama.cpp's --parallel slots, vLLM's batch); the rest "
                   "wait in a silent queue (unset: no limit)")
@click.option("--batch-slowdown", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="with --capacity: a full batch makes each token take 1 + this times as long as "
                   "alone (continuous batching: throughput grows with the batch, then flattens)")
@click.option("--ignores-seed", is_flag=True,
              help="sample afresh on every request, whatever its `seed` (as DeepSeek does), when "
                   "the temperature is above 0")
@click.option("--runaway-rate", type=click.FloatRange(0, 1), default=0.0,
              help="share of a stage's answers that run on in whitespace until max_tokens, as a small "
                   "model under llama.cpp's JSON grammar does (streamed at --token-rate: set it to feel it)")
@click.option("--runaway-kind", type=click.Choice(["whitespace", "loop"]), default="whitespace", show_default=True,
              help="how a runaway runs on: whitespace inside the object, or a 370-character passage of "
                   "its own answer said again and again (both seen from SmolLM2 under llama.cpp)")
@click.option("--interrupts", is_flag=True,
              help="with --capacity: end a streamed answer early ([DONE], no finish_reason) when another "
                   "request waits for the slot, as llama-cpp-python's server does by default "
                   "(its interrupt_requests)")
def simulator_serve(host: str, port: int, latency_ms: float, rate_429: float, rate_500: float,
                    rate_dropped: float, rate_malformed: float, rate_truncated: float,
                    rate_slow: float, slow_ms: float, seed: int, upstream: str | None,
                    batch_delay_s: float, batch_failed_rate: float, profile: str,
                    models: tuple[str, ...], token_rate: float | None, per_token_ms: float | None,
                    capacity: int | None, batch_slowdown: float, ignores_seed: bool,
                    runaway_rate: float, runaway_kind: str, interrupts: bool) -> None:
    """Serve POST /v1/chat/completions, the Files and Batch API (/v1/files, /v1/batches),
    GET /v1/models and GET /stats until interrupted."""
    import asyncio

    from memsynth.simulator.batches import BatchFaults
    from memsynth.simulator.server import Faults, Simulator, serve_forever

    if interrupts and not capacity:
        raise click.UsageError("--interrupts needs --capacity: a request is interrupted when another waits for a slot")
    if token_rate and per_token_ms:
        raise click.UsageError("give --token-rate or --per-token-ms, not both")
    if rate_429 + rate_500 + rate_dropped > 1 or rate_malformed + rate_truncated + rate_slow > 1:
        raise MemsynthError("--rate-429, --rate-500 and --rate-dropped must add up to at most 1, "
                            "and so must --rate-malformed, --rate-truncated and --rate-slow")
    sim = Simulator(latency_ms=latency_ms, upstream=upstream, faults=Faults(
        rate_429=rate_429, rate_500=rate_500, rate_dropped=rate_dropped,
        rate_malformed=rate_malformed, rate_truncated=rate_truncated, rate_slow=rate_slow,
        slow_ms=slow_ms, seed=seed),
        batch_faults=BatchFaults(delay_s=batch_delay_s, failed_line_rate=batch_failed_rate, seed=seed),
        profile=profile, models=models or None, token_rate=token_rate or (1000 / per_token_ms if per_token_ms else None),
        capacity=capacity, batch_slowdown=batch_slowdown, ignores_seed=ignores_seed, runaway_rate=runaway_rate,
        runaway_kind=runaway_kind, interrupts=interrupts)
    try:
        asyncio.run(serve_forever(sim, host, port))
    except OSError as exc:
        raise MemsynthError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc

