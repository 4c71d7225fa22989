"""The throughput workload through memsynth's engine: N structured calls, one JSON line out.

Run by bench/throughput.py in a fresh process; measures this process only.
"""

from __future__ import annotations

import asyncio
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import SYSTEM, Fact, client_args, report, user_prompt  # noqa: E402

from memsynth.generation.prompts import PromptLibrary  # noqa: E402
from memsynth.generation.stage import GenerationSettings, Stage, StageRunner  # noqa: E402
from memsynth.llm.cache import ResponseCache  # noqa: E402
from memsynth.llm.engine import EngineSettings, LLMEngine  # noqa: E402


def bench_prompts(folder: Path) -> Path:
    """A prompt library with the bench's one template (and the shared repair and schema parts)."""
    prompts = folder / "prompts"
    (prompts / "bench").mkdir(parents=True)
    (prompts / "bench" / "fact.j2").write_text(
        "{% block system %}{{ system }}{% endblock %}{% block user %}{{ user }}{% endblock %}")
    library_dir = Path(__file__).resolve().parent.parent / "prompts"
    for name in ("_repair.j2", "_schema_hint.j2"):
        (prompts / name).write_text((library_dir / name).read_text())
    return prompts


def main() -> None:
    args = client_args("memsynth")

    with tempfile.TemporaryDirectory() as tmp:
        prompts = bench_prompts(Path(tmp))
        engine = LLMEngine(EngineSettings(base_url=args.base_url, api_key_env="X",
                                          concurrency=args.concurrency),
                           ResponseCache(Path(tmp) / "cache"), api_key="bench")
        runner = StageRunner(engine, PromptLibrary(prompts), GenerationSettings(model="bench"))
        stage = Stage("bench", "fact", Fact)

        async def run() -> tuple[float, int]:
            started = time.perf_counter()
            results = await asyncio.gather(*(
                runner.run(stage, {"system": SYSTEM, "user": user_prompt(i)}, item_key=f"fact/{i}")
                for i in range(args.calls)))
            elapsed = time.perf_counter() - started
            await engine.aclose()
            return elapsed, sum(r.usable for r in results)

        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        elapsed, ok = asyncio.run(run())
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    report("memsynth", args.calls, ok, elapsed, cpu0, cpu1)


if __name__ == "__main__":
    main()
