"""The throughput workload through Bespoke Curator (run in its own venv by bench/throughput.py)."""

from __future__ import annotations

import atexit
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TELEMETRY_ENABLED", "false")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("CURATOR_DISABLE_CACHE", "1")

import tiktoken  # noqa: E402


class _LocalTokenCounter:
    """Offline stand-in for tiktoken's downloaded vocabulary: about four characters a token."""

    def encode(self, text, *args, **kwargs):
        return range(max(1, len(str(text)) // 4))


tiktoken.get_encoding = lambda *a, **k: _LocalTokenCounter()  # no download here
tiktoken.encoding_for_model = lambda *a, **k: _LocalTokenCounter()



sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workload import SYSTEM, Fact, client_args, report, user_prompt  # noqa: E402


def main() -> None:
    args = client_args("curator")
    os.environ["CURATOR_CACHE_DIR"] = cache = tempfile.mkdtemp(prefix="curator-")
    atexit.register(shutil.rmtree, cache, ignore_errors=True)  # curator's cache is this run's alone

    from bespokelabs import curator

    class FactWriter(curator.LLM):
        response_format = Fact

        def prompt(self, row):
            return [{"role": "system", "content": SYSTEM},
                    {"role": "user", "content": user_prompt(row["i"])}]

        def parse(self, row, response):
            return [response.model_dump()]

    llm = FactWriter(model_name="bench", backend="openai", backend_params={
        "base_url": args.base_url, "api_key": "bench",
        "max_concurrent_requests": args.concurrency,
        "max_requests_per_minute": 10_000_000, "max_tokens_per_minute": 10_000_000_000,
        "max_retries": 2, "require_all_responses": False})
    rows = [{"i": i} for i in range(args.calls)]
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    out = llm(rows)
    elapsed = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    dataset = getattr(out, "dataset", out)
    report("curator", args.calls, len(dataset), elapsed, cpu0, cpu1)


if __name__ == "__main__":
    main()
