"""Typical DuckDB queries on a built warehouse: median latency of each, through `run_query`.

    python bench/build.py --personas 200 --keep /tmp/wh     # build a warehouse first
    python bench/query.py --warehouse /tmp/wh --dataset bench
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from simulator_process import machine, write_result  # noqa: E402

from memsynth.warehouse.catalog import list_versions, run_query  # noqa: E402

QUERIES = {
    "memories by category": "SELECT category, count(*) FROM memories GROUP BY 1 ORDER BY 1",
    "dialogues joined to their target memories": """
        SELECT d.need, m.category, count(*) FROM support_dialogues d
        JOIN memories m ON m.memory_id = d.target_memory_id GROUP BY 1, 2""",
    "a persona's history in date order": """
        SELECT s.content FROM memory_sessions s JOIN memories m USING (memory_id)
        WHERE m.persona_id = (SELECT min(persona_id) FROM personas) ORDER BY m.date, s.memory_id, s.turn_index""",
    "benchmark pass rate per check": "SELECT check_name, avg(passed::INT) FROM quality_checks GROUP BY 1",
    "LLM tokens per stage": "SELECT stage, sum(prompt_tokens + completion_tokens) FROM llm_calls GROUP BY 1",
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--dataset", default="bench")
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--name", default="query")
    args = ap.parse_args()
    root = Path(args.warehouse)
    versions = [v["version"] for v in list_versions(root, args.dataset)]
    plan = [(name, sql, None) for name, sql in QUERIES.items()]
    plan.append(("memories by category at the oldest version", QUERIES["memories by category"], versions[0]))
    results = {}
    for name, sql, version in plan:
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            run_query(root, args.dataset, sql, version)
            times.append(time.perf_counter() - started)
        results[name] = {"median_ms": round(1000 * statistics.median(times), 1),
                         "min_ms": round(1000 * min(times), 1), "version": version or versions[-1]}
        print(f"{results[name]['median_ms']:>8.1f} ms  {name}")
    path = write_result(args.name, {"machine": machine(), "command": " ".join(["python", *sys.argv]),
                                    "versions": versions, "queries": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
