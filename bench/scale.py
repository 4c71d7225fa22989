"""The response cache at 1 M and 10 M entries: index build, open time, look-up latency, RSS.

    python bench/scale.py                          # 1 M and 10 M entries in a temp folder, removed after
    python bench/scale.py --entries 1000000 --dir /data/scale

For each size, synthetic logs are written straight to disk (about 270 bytes an entry, a
million entries a log, `v2-<sha256>` keys as the engine makes them), the index is built
by opening the cache once (what an upgraded cache pays once), and then a fresh process
opens the cache and looks up 20,000 present and 2,000 absent keys in random order, so
the figures are a build's: open time, look-up latency (median, p99), and peak RSS
against a bare interpreter's. Results: bench/results/scale-cache.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, machine, write_result  # noqa: E402

PER_LOG = 1_000_000


def key(i: int) -> str:
    return "v2-" + hashlib.sha256(str(i).encode()).hexdigest()


def write_logs(folder: Path, entries: int) -> float:
    """Synthetic cache logs of `entries` entries; seconds taken."""
    started = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    for start in range(0, entries, PER_LOG):
        with open(folder / f"calls-bench-{start // PER_LOG:04d}.jsonl", "wb") as fh:
            lines = []
            for i in range(start, min(start + PER_LOG, entries)):
                lines.append(json.dumps({
                    "key": key(i), "created_at": 1.7e9, "stage": "enpmr.memory_session", "model": "m",
                    "response": {"content": f"{{\"turns\": [\"entry {i}\"]}}", "prompt_tokens": 700,
                                 "completion_tokens": 370, "finish_reason": "stop"}},
                    separators=(",", ":")).encode() + b"\n")
                if len(lines) == 10_000:
                    fh.write(b"".join(lines))
                    lines = []
            fh.write(b"".join(lines))
    return time.perf_counter() - started


PROBE = """
import json, random, resource, sys, time
sys.path.insert(0, sys.argv[3])
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from memsynth.llm.cache import ResponseCache
entries = int(sys.argv[2])
import hashlib
key = lambda i: "v2-" + hashlib.sha256(str(i).encode()).hexdigest()
imported = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
cache = ResponseCache(sys.argv[1])
opened = time.perf_counter() - t
rng = random.Random(7)
present = [key(rng.randrange(entries)) for _ in range(20_000)]
absent = [key(entries + rng.randrange(10**9)) for _ in range(2_000)]
hits, misses = [], []
for k in present:
    t = time.perf_counter(); assert cache.get(k) is not None; hits.append(time.perf_counter() - t)
for k in absent:
    t = time.perf_counter(); assert cache.get(k) is None; misses.append(time.perf_counter() - t)
hits.sort(); misses.sort()
print(json.dumps({"open_s": opened, "hit_median_ms": hits[len(hits) // 2] * 1e3,
                  "hit_p99_ms": hits[int(len(hits) * 0.99)] * 1e3, "miss_median_ms": misses[len(misses) // 2] * 1e3,
                  "miss_p99_ms": misses[int(len(misses) * 0.99)] * 1e3,
                  "rss_after_imports_mb": imported / 1024,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def measure(folder: Path, entries: int) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, str(folder), str(entries), str(ROOT)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--entries", default="1000000,10000000", help="comma-separated cache sizes")
    parser.add_argument("--dir", help="scratch folder (each size's removed after it; default a new temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the synthetic caches")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from memsynth.llm.cache import ResponseCache

    results = []
    scratch = Path(args.dir) if args.dir else Path(tempfile.mkdtemp(prefix="memsynth-scale-"))
    for entries in (int(n) for n in args.entries.split(",")):
        folder = scratch / f"cache-{entries}"
        shutil.rmtree(folder, ignore_errors=True)
        wrote = write_logs(folder, entries)
        started = time.perf_counter()
        ResponseCache(folder, write=False).close()  # builds the index from the logs
        indexed = time.perf_counter() - started
        logs_gb = sum(p.stat().st_size for p in folder.glob("*.jsonl")) / 1e9
        index_gb = sum(p.stat().st_size for p in folder.glob("index.sqlite*")) / 1e9
        probe = measure(folder, entries)
        row = {"entries": entries, "logs_gb": round(logs_gb, 2), "index_gb": round(index_gb, 2),
               "write_logs_s": round(wrote, 1), "index_build_s": round(indexed, 1), "page_cache": "warm",
               **{k: round(v, 4) for k, v in probe.items()}}
        print(json.dumps(row), flush=True)
        results.append(row)
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    if not args.dir and not args.keep:
        shutil.rmtree(scratch, ignore_errors=True)
    # Sizes measured before (another run) are kept beside this run's.
    earlier = ROOT / "bench" / "results" / "scale-cache.json"
    kept = json.loads(earlier.read_text())["results"] if earlier.is_file() else []
    merged = sorted([r for r in kept if r["entries"] not in {x["entries"] for x in results}] + results,
                    key=lambda r: r["entries"])
    path = write_result("scale-cache", {"machine": machine(), "command": " ".join(["python bench/scale.py",
                                                                                  *sys.argv[1:]]),
                                        "results": merged})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
