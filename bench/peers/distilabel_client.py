"""The throughput workload through distilabel's OpenAILLM (run in its own venv by bench/throughput.py).

distilabel has no in-flight limit of its own: a pipeline step hands its LLM one batch at a
time (`input_batch_size`) and the batch is sent at once. Batches of C inputs reproduce
that with C requests in flight at most, without the pipeline's own overhead.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path

from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from workload import SYSTEM, Fact, client_args, report, user_prompt  # noqa: E402


def main() -> None:
    args = client_args("distilabel")

    from distilabel.models.llms import OpenAILLM

    llm = OpenAILLM(model="bench", base_url=args.base_url, api_key="bench", max_retries=2)
    llm.load()
    response_format = {"type": "json_schema",
                       "json_schema": {"name": "bench_fact", "schema": Fact.model_json_schema()}}
    inputs = [[{"role": "system", "content": SYSTEM}, {"role": "user", "content": user_prompt(i)}]
              for i in range(args.calls)]
    ok = 0
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    for start in range(0, len(inputs), args.concurrency):
        batch = inputs[start:start + args.concurrency]
        # Its `response_format` argument only takes strings; the schema goes in the body as is.
        for result in llm.generate(inputs=batch, num_generations=1,
                                   extra_body={"response_format": response_format}):
            try:
                Fact.model_validate_json(result["generations"][0])
                ok += 1
            except (ValidationError, TypeError, KeyError, IndexError):
                pass
    elapsed = time.perf_counter() - started
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    report("distilabel", args.calls, ok, elapsed, cpu0, cpu1)


if __name__ == "__main__":
    main()
