"""A whole enpmr build against the simulator, then the same build again from the cache.

    python bench/build.py                      # 200 personas, L=200ms, C=64
    python bench/build.py --personas 1000 --name build-1000
    python bench/build.py --personas 1000 --keep DIR --regenerate-share 0.1   # regenerate 10 % of DIR's
    python bench/build.py --client direct      # llm.client: direct (plain POSTs on aiohttp)

The simulator runs in its own process; the build is the real CLI in another, so its
wall time, CPU and peak RSS are the build's alone. (Prefect's task runs are no longer
counted: memsynth's own server keeps its database in a scratch folder deleted with it.)
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, SimulatorProcess, machine, write_result  # noqa: E402


def folder_mb(path: Path, exclude: str | None = None) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*")
                if f.is_file() and not (exclude and exclude in f.parts))
    return round(total / 1e6, 1)


def run_build(config: Path, warehouse: Path, prefect_home: Path, extra: tuple[str, ...] = (),
              profile: Path | None = None) -> dict:
    env = {**os.environ, "OPENAI_API_KEY": "bench", "PREFECT_HOME": str(prefect_home)}
    command = [sys.executable, str(ROOT / "bench" / "measured_cli.py"), "build", str(config),
               "--warehouse", str(warehouse), "--format", "json", "--no-progress", *extra]
    if profile:
        # py-spy samples from outside (--nonblocking: the build is never paused), so the
        # build's own CPU and wall figures stay comparable with an unprofiled run.
        spy = Path(sys.executable).with_name("py-spy")
        if not spy.exists():
            raise SystemExit(f"--profile needs py-spy beside {sys.executable}: pip install py-spy")
        command = [str(spy), "record", "--nonblocking", "--rate", "100", "--format", "raw",
                   "--output", str(profile), "--", *command]
    launched = time.time()
    out = subprocess.run(command,
                         capture_output=True, text=True, env=env, cwd=ROOT, timeout=6 * 3600)
    exited = time.time()
    measured = [json.loads(line)["measured"] for line in out.stderr.splitlines()
                if line.startswith('{"measured"')]
    if out.returncode != 0:
        raise SystemExit(f"build failed: {out.stderr[-2000:]}")
    summary = "\n".join(line for line in out.stdout.splitlines() if not line.startswith("py-spy>"))
    return {"summary": json.loads(summary), "measured": measured[-1], "launched": launched, "exited": exited}


def warm_prefect_home(home: Path) -> None:
    """Create and migrate Prefect's database in `home` before the timed runs, as on a
    machine that has built before: that is once per Prefect home (about 6 s here), not
    once per build."""
    subprocess.run([sys.executable, "-c", "from memsynth.build.prefect_api import prefect_api_url; prefect_api_url()"],
                   env={**os.environ, "PREFECT_HOME": str(home)}, cwd=ROOT, check=True, timeout=300)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--personas", type=int, default=200)
    ap.add_argument("--latency-ms", type=float, default=200)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--shard-size", type=int, default=10)
    ap.add_argument("--max-workers", type=int, default=8)
    ap.add_argument("--name", default=None, help="results file (default build-<personas>)")
    ap.add_argument("--keep", help="keep the warehouse in this folder (for bench/query.py)")
    ap.add_argument("--cached-only", action="store_true",
                    help="skip the first build: rebuild a warehouse kept with --keep from its cache")
    ap.add_argument("--profile", metavar="FILE",
                    help="record the first build with py-spy (collapsed stacks to FILE; "
                         "summarise and draw them with bench/profile.py)")
    ap.add_argument("--fresh-prefect-home", action="store_true",
                    help="run each build in a new Prefect home, as a machine's first build: "
                         "creating Prefect's database is then part of the timed build")
    ap.add_argument("--client", choices=("openai", "direct"), default="openai",
                    help="llm.client: the openai client, or plain POSTs on aiohttp")
    ap.add_argument("--regenerate-share", type=float,
                    help="only regenerate this share of the personas of --keep DIR (every stage), "
                         "as `build --where` picks them")
    args = ap.parse_args()
    if (args.cached_only or args.regenerate_share) and not args.keep:
        ap.error("--cached-only and --regenerate-share need --keep DIR of an earlier run with the same settings")
    name = args.name or f"build-{args.personas}"

    work = Path(tempfile.mkdtemp(prefix="memsynth-bench-"))
    # ~150 MB a 200-persona run (its warehouse and cache, unless --keep DIR holds them): gone
    # at exit, however the run ends.
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    warehouse = Path(args.keep) if args.keep else work / "warehouse"
    with SimulatorProcess(args.latency_ms) as sim:
        config = work / "bench.yaml"
        config.write_text(yaml.safe_dump({
            "dataset": "bench", "recipe": "enpmr", "seed": 1, "personas": {"count": args.personas},
            "shard_size": args.shard_size, "max_workers": args.max_workers,
            "llm": {"base_url": sim.base_url, "model": "bench-model", "stage_variables": True,
                    "concurrency": args.concurrency, "client": args.client},
        }))
        results = {}
        runs = ("regenerate",) if args.regenerate_share else ("cached",) if args.cached_only else ("first", "cached")
        where = f"SELECT persona_id FROM personas WHERE hash(persona_id) % 1000 < {round(1000 * (args.regenerate_share or 0))}"
        home = work / "prefect"
        if not args.fresh_prefect_home:
            warm_prefect_home(home)
        for run in runs:
            if args.fresh_prefect_home:
                home = work / f"prefect-{run}"
            home.mkdir(exist_ok=True)
            sim.reset()
            sim_cpu = sim.cpu_seconds()
            sampler = sim.sample_in_flight()
            result = run_build(config, warehouse, home, ("--where", where) if run == "regenerate" else (),
                               Path(args.profile) if args.profile and run == "first" else None)
            in_flight = sampler.stop()
            s, m = result["summary"], result["measured"]
            requests = s["llm"]["requests"]
            limit = args.concurrency / (args.latency_ms / 1000) if args.latency_ms else float("inf")
            timing = sim.stats()
            # Launch to exit, as the user waits for it (the interpreter's start included).
            whole = result["exited"] - result["launched"]
            results[run] = {
                "version": s["version"], "wall_seconds": round(m["wall_seconds"], 1),
                "build_seconds": s["seconds"], "cpu_seconds": round(m["cpu_seconds"], 1),
                "peak_rss_mb": round(m["peak_rss_mb"]), "llm_calls": s["llm"]["calls"],
                "requests_sent": requests, "cache_hits": s["llm"]["cache_hits"],
                "server_requests": sim.stats()["requests"],
                "server_peak_in_flight": sim.stats()["peak_in_flight"],
                "requests_per_second": round(requests / s["seconds"], 1) if requests else 0,
                "ratio_to_limit": round(requests / s["seconds"] / limit, 3) if requests and args.latency_ms else None,
                "cpu_ms_per_call": round(1000 * m["cpu_seconds"] / max(1, s["llm"]["calls"]), 3),
                # The simulator shares the machine's cores: when it needs one whole, it (not
                # the build) bounds the rate.
                "simulator_cpu_seconds": round(sim.cpu_seconds() - sim_cpu, 1),
                # Time-averaged requests in flight while any were (polled twice a second),
                # and that mean over each second of the build.
                "mean_in_flight": in_flight["mean_in_flight"],
                "in_flight_per_second": in_flight["per_second"],
                # From the simulator's clock: how long at least one request was in flight,
                # the seconds from launching the command to its first request past the
                # endpoint probe, and from its last answer to its exit.
                "whole_seconds": round(whole, 2),
                "endpoint_busy_seconds": timing["busy_seconds"] if requests else None,
                "seconds_to_first_request": round(timing["first_work_at"] - result["launched"], 2) if requests else None,
                "seconds_after_last_request": round(result["exited"] - timing["last_answer_at"], 2) if requests else None,
                # The share of C/L over the whole wall time, and while requests were in flight.
                "whole_ratio_to_limit": round(requests / whole / limit, 3) if requests and args.latency_ms else None,
                "busy_ratio_to_limit": round(requests / timing["busy_seconds"] / limit, 3) if requests and args.latency_ms else None,
                "row_counts": s["row_counts"],
                "regenerated_personas": len(s["derivation"].get("regenerated", [])),
            }
            r = results[run]
            print(f"{run:>7}: {r['whole_seconds']} s launch to exit, {requests} requests "
                  f"({r['whole_ratio_to_limit']} of {limit:.0f} over it, {r['busy_ratio_to_limit']} while busy; "
                  f"{r['seconds_to_first_request']} s to the first, {r['seconds_after_last_request']} s after the last), "
                  f"{r['cache_hits']} cached, rss {results[run]['peak_rss_mb']} MB", flush=True)
    sizes = {"warehouse_mb_without_cache": folder_mb(warehouse, exclude="_cache"),
             "cache_mb": folder_mb(warehouse / "_cache")}
    path = write_result(name, {"machine": machine(), "command": " ".join(["python", *sys.argv]),
                               "personas": args.personas, "latency_ms": args.latency_ms,
                               "concurrency": args.concurrency, "client": args.client,
                               "fresh_prefect_home": args.fresh_prefect_home, **results, **sizes})
    print(f"warehouse {sizes}; wrote {path}")


if __name__ == "__main__":
    main()
