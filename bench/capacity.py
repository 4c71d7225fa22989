"""`llm.concurrency: auto` against a server that queues instead of answering 429.

The simulator's capacity model (`simulator serve --capacity N --per-token-ms P`) generates
at most N answers at once, each token slower as the batch fills, and queues the rest: its
throughput rises with concurrency up to N and then stays flat while latency grows. For each
capacity this sweeps fixed concurrencies, then runs `auto`; each run sends the same calls
through memsynth's engine and records calls/s, median and p90 latency, and timeouts. The
plain simulator (a fixed latency, as a 429 endpoint's) is run once fixed and once `auto`.

    python bench/capacity.py [--capacities 64 256] [--per-token-ms 20] [--seconds 30]
    python bench/capacity.py --capacities --plain-repeat 3 --name capacity-plain
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from memsynth_client import bench_prompts  # noqa: E402
from simulator_process import SimulatorProcess, machine, write_result  # noqa: E402
from workload import SYSTEM, Fact, user_prompt  # noqa: E402

from memsynth.core.config import AUTO_CONCURRENCY_MAX  # noqa: E402
from memsynth.generation.prompts import PromptLibrary  # noqa: E402
from memsynth.generation.stage import GenerationSettings, Stage, StageRunner  # noqa: E402
from memsynth.llm.cache import ResponseCache  # noqa: E402
from memsynth.llm.engine import EngineSettings, LLMEngine  # noqa: E402
from memsynth.llm.limits import AutoConcurrency  # noqa: E402


def run(base_url: str, calls: int, concurrency: int, auto: bool, timeout_s: float) -> dict:
    """`calls` structured calls through a fresh engine (nothing cached); their figures."""
    with tempfile.TemporaryDirectory() as tmp:
        prompts = bench_prompts(Path(tmp))
        engine = LLMEngine(EngineSettings(base_url=base_url, api_key_env="X", concurrency=concurrency,
                                          concurrency_auto=auto, timeout_s=timeout_s, idle_timeout_s=timeout_s),
                           ResponseCache(Path(tmp) / "cache"), api_key="bench")
        runner = StageRunner(engine, PromptLibrary(prompts), GenerationSettings(model="bench"))
        stage = Stage("bench", "fact", Fact)
        # A request's latency from its POST to its answer (waiting for a slot on this side is
        # not the server's): what the engine reports to its concurrency limit on each answer.
        latencies: list[float] = []
        answered: list[float] = []  # when each answer came
        limit = engine.limits.concurrency
        report_answer = limit.on_success

        def timed_answer(seconds: float | None = None, tokens: int | None = None) -> None:
            if seconds is not None:
                latencies.append(seconds)
                answered.append(time.perf_counter())
            report_answer(seconds, tokens)

        limit.on_success = timed_answer  # type: ignore[method-assign]

        async def one(i: int) -> None:
            await runner.run(stage, {"system": SYSTEM, "user": user_prompt(i)}, item_key=f"fact/{i}")

        async def main() -> float:
            started = time.perf_counter()
            await asyncio.gather(*(one(i) for i in range(calls)))
            elapsed = time.perf_counter() - started
            await engine.aclose()
            return elapsed

        elapsed = asyncio.run(main())
        # Settled: the second half of the answers, after any climb (auto) or ramp (fixed).
        half = answered[len(answered) // 2:]
        settled = (len(half) - 1) / (half[-1] - half[0]) if len(half) > 1 and half[-1] > half[0] else None
        late = latencies[len(latencies) // 2:]
        return {"concurrency": "auto" if auto else concurrency, "calls": calls,
                "calls_per_s": round(calls / elapsed, 1), "seconds": round(elapsed, 1),
                "settled_calls_per_s": round(settled, 1) if settled else None,
                "median_latency_s": round(statistics.median(latencies), 3),
                "settled_median_latency_s": round(statistics.median(late), 3),
                "timeouts": engine.counters.abandoned, "retries": engine.counters.retries,
                "auto": limit.report() if isinstance(limit, AutoConcurrency) else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--capacities", type=int, nargs="*", default=[64, 256],
                    help="capacities to sweep (none: only the plain simulator)")
    ap.add_argument("--plain-repeat", type=int, default=1,
                    help="run the plain simulator's fixed/auto pair this many times, alternating")
    ap.add_argument("--per-token-ms", type=float, default=20.0)
    ap.add_argument("--seconds", type=float, default=30.0, help="about how long each run lasts")
    ap.add_argument("--name", default="capacity")
    args = ap.parse_args()
    results: dict = {"machine": machine(), "command": " ".join(["python", *sys.argv]), "capacities": {}}
    for capacity in args.capacities:
        # An answer alone takes ~45 tokens * per_token_ms; a full batch twice that.
        full_batch_s = 2 * 45 * args.per_token_ms / 1000
        calls = int(args.seconds * capacity / full_batch_s)
        rows = []
        with SimulatorProcess(0, "--capacity", str(capacity), "--per-token-ms", str(args.per_token_ms)) as sim:
            for concurrency in sorted({capacity // 2, capacity * 3 // 4, capacity, capacity * 3 // 2, capacity * 2}):
                rows.append(run(sim.base_url, calls, concurrency, False, timeout_s=120))
                print(capacity, rows[-1], flush=True)
            # auto starts at 32 and climbs or steps down first: three times the calls, so that is a small part of it
            rows.append(run(sim.base_url, 3 * calls, AUTO_CONCURRENCY_MAX, True, timeout_s=120))
            print(capacity, rows[-1], flush=True)
        # What a sweep would choose: the fewest in flight within 1 % of the best throughput
        # (past the server's batch, more only add latency, and noise picks among them).
        fixed = [r for r in rows if r["concurrency"] != "auto"]
        top = max(r["calls_per_s"] for r in fixed)
        best = min((r for r in fixed if r["calls_per_s"] >= 0.99 * top), key=lambda r: r["concurrency"])
        auto = rows[-1]
        results["capacities"][capacity] = {
            "rows": rows, "best_fixed": best["concurrency"],
            "auto_of_best_throughput": round(auto["calls_per_s"] / best["calls_per_s"], 3),
            "auto_settled_of_best_throughput": round(auto["settled_calls_per_s"] / best["settled_calls_per_s"], 3),
            "auto_latency_of_best": round(auto["median_latency_s"] / best["median_latency_s"], 2),
            "auto_settled_latency_of_best": round(auto["settled_median_latency_s"]
                                                  / best["settled_median_latency_s"], 2)}
    plain = []
    with SimulatorProcess(200) as sim:  # a fixed 200 ms per answer: the 429-endpoint workload
        for _ in range(args.plain_repeat):  # alternating, so drift on the machine hits both alike
            plain.append(run(sim.base_url, 12000, 64, False, timeout_s=120))
            plain.append(run(sim.base_url, 12000, 64, True, timeout_s=120))
            print("plain", plain[-2]["calls_per_s"], plain[-1]["calls_per_s"], flush=True)
    fixed = [r["calls_per_s"] for r in plain if r["concurrency"] != "auto"]
    auto = [r["calls_per_s"] for r in plain if r["concurrency"] == "auto"]
    results["plain"] = {"rows": plain, "auto_of_fixed": round(sum(auto) / sum(fixed), 3),
                        "each_auto_of_fixed": [round(a / f, 3) for a, f in zip(auto, fixed)]}
    path = write_result(args.name, results)
    for capacity, figures in results["capacities"].items():
        print(f"capacity {capacity}: best fixed {figures['best_fixed']}; auto {figures['auto_of_best_throughput']} "
              f"of its throughput ({figures['auto_settled_of_best_throughput']} settled) at "
              f"{figures['auto_latency_of_best']}x its median latency ({figures['auto_settled_latency_of_best']}x settled)")
    print(f"plain simulator: auto {results['plain']['auto_of_fixed']} of fixed 64")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
