"""Writing personas at scale: enpmr's persona stage and its de-duplication, against C/L.

    python bench/personas.py                      # 3,000 personas, L=200 ms, C=64, 3 runs
    python bench/personas.py --personas 10000 --repeat 1

The simulator runs in its own process; `synthesize_personas` runs here on the build's kind
of event loop with a fresh cache, so every persona is asked for. The figure is the wall
time against what the endpoint's limit allows for the requests sent (requests / (C/L)).
Results: bench/results/<name>.json (default personas-<N>).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, SimulatorProcess, machine, write_result  # noqa: E402

sys.path.insert(0, str(ROOT))


def one_run(base_url: str, personas: int, concurrency: int) -> dict:
    from flows.enpmr import EnpmrRecipe
    from memsynth.generation.persona_synthesis import synthesize_personas
    from memsynth.generation.prompts import PromptLibrary
    from memsynth.generation.recipe import ShardOutput
    from memsynth.generation.stage import GenerationSettings, StageRunner
    from memsynth.llm.cache import ResponseCache
    from memsynth.llm.engine import LLMEngine
    from memsynth.llm.loop import new_event_loop
    from memsynth.llm.settings import EngineSettings

    with tempfile.TemporaryDirectory(prefix="memsynth-bench-personas-") as scratch:
        engine = LLMEngine(EngineSettings(base_url=base_url, api_key_env="BENCH", concurrency=concurrency),
                           ResponseCache(Path(scratch) / "cache"), api_key="bench")
        runner = StageRunner(engine, PromptLibrary(), GenerationSettings(model="bench-model", stage_variables=True))
        recipe = EnpmrRecipe({})

        async def main() -> tuple[float, dict]:
            started = time.perf_counter()
            _, report = await synthesize_personas(
                runner, recipe.persona_stage, personas, seed=1, language="en",
                threshold=recipe.dedup_threshold, existing=[], output=ShardOutput(),
                attributes=recipe.persona_variables)
            seconds = time.perf_counter() - started
            await engine.aclose()
            return seconds, report.as_dict()

        loop = new_event_loop()
        try:
            seconds, report = loop.run_until_complete(main())
        finally:
            loop.close()
            engine.cache.close()
    return {"seconds": round(seconds, 2), "report": report}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--personas", type=int, default=3000, help="personas to write (default 3000)")
    ap.add_argument("--latency-ms", type=float, default=200, help="the simulator's time per answer")
    ap.add_argument("--concurrency", type=int, default=64, help="llm.concurrency, and the endpoint's C")
    ap.add_argument("--repeat", type=int, default=3, help="runs; the median is reported")
    ap.add_argument("--name", default=None, help="results file (default personas-<N>)")
    args = ap.parse_args()
    limit = args.concurrency / (args.latency_ms / 1000)
    runs = []
    with SimulatorProcess(args.latency_ms) as sim:
        for _ in range(args.repeat):
            run = one_run(sim.base_url, args.personas, args.concurrency)
            run["ratio_to_limit"] = round(run["report"]["generated"] / limit / run["seconds"], 3)
            runs.append(run)
            print(f"{args.personas} personas: {run['seconds']} s, {run['report']['generated']} asked, "
                  f"{run['ratio_to_limit']} of C/L", flush=True)
    out = write_result(args.name or f"personas-{args.personas}", {
        "machine": machine(), "command": "python " + " ".join(["bench/personas.py", *sys.argv[1:]]),
        "personas": args.personas, "latency_ms": args.latency_ms, "concurrency": args.concurrency,
        "runs": runs, "median_seconds": statistics.median(r["seconds"] for r in runs),
        "median_ratio_to_limit": statistics.median(r["ratio_to_limit"] for r in runs)})
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
