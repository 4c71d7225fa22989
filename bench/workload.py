"""The throughput workload every client sends: the same model and prompt.

Only pydantic is imported, so the peers' virtual environments can load this file too.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from pydantic import BaseModel, Field

SYSTEM = "Answer with JSON."


class Fact(BaseModel):
    """The bench's output model: a few fields, as in a small stage."""

    name: str
    description: str
    score: int = Field(ge=1, le=10)
    tags: list[str] = Field(min_length=1, max_length=4)


def user_prompt(i: int) -> str:
    return f"Describe fact number {i}."


def client_args(tool: str) -> argparse.Namespace:
    """The command line every client takes from bench/throughput.py."""
    ap = argparse.ArgumentParser(description=f"the throughput workload through {tool}")
    ap.add_argument("--base-url", required=True, help="the simulator's /v1 URL")
    ap.add_argument("--calls", type=int, default=5000, help="structured calls to send")
    ap.add_argument("--concurrency", type=int, default=64, help="requests in flight at most")
    return ap.parse_args()


def report(tool: str, calls: int, ok: int, seconds: float, cpu0: Any, cpu1: Any) -> None:
    """Print the one JSON line bench/throughput.py reads (CPU from two getrusage samples)."""
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    print(json.dumps({"tool": tool, "calls": calls, "ok": ok, "seconds": seconds,
                      "cpu_seconds": cpu, "peak_rss_mb": cpu1.ru_maxrss / 1024}))
