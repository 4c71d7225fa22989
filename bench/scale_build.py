"""A 10,000-persona enpmr build plan against the simulator: flat RSS, steady throughput.

    python bench/scale_build.py                       # 10,000 personas, stopped after 300 s
    python bench/scale_build.py --seconds 900 --rpm 10000

A small build of the same config first measures calls per persona. Then the full plan
starts (`memsynth build --personas 10000`, served simulator in its own process, 50 ms
per answer) and runs for `--seconds`, sampled every `--every` seconds: the build
process's RSS and the calls the simulator answered in that window. It is then stopped
with SIGINT (answers so far stay cached; nothing is published). The report gives RSS
at each sample, throughput per window, and what the whole plan would take at `--rpm`.
Results: bench/results/scale-build.json.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, SimulatorProcess, machine, write_result  # noqa: E402

MEMSYNTH = [sys.executable, "-m", "memsynth.cli"]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def config(folder: Path, base_url: str, concurrency: int) -> Path:
    path = folder / "plan.yaml"
    path.write_text(yaml.safe_dump({
        "dataset": "scale", "recipe": "enpmr", "seed": 7, "shard_size": 8, "max_workers": 8,
        "llm": {"model": "bench", "base_url": base_url, "stage_variables": True,
                "concurrency": concurrency, "retry_base_s": 0.05},
    }), encoding="utf-8")
    return path


def calls_per_persona(cfg: Path, folder: Path, env: dict[str, str], personas: int = 8) -> float:
    out = subprocess.run([*MEMSYNTH, "build", str(cfg), "--personas", str(personas), "--no-progress",
                          "--format", "json", "--warehouse", str(folder / "probe")],
                         capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    summary = json.loads(out.stdout)
    return summary["llm"]["calls"] / personas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--personas", type=int, default=10_000)
    parser.add_argument("--seconds", type=float, default=300, help="how long the full plan runs")
    parser.add_argument("--every", type=float, default=15, help="sampling interval, seconds")
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--latency-ms", type=float, default=50)
    parser.add_argument("--rpm", type=float, default=10_000, help="an endpoint's limit, for the projection")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="memsynth-scale-build-") as scratch, \
            SimulatorProcess(args.latency_ms) as simulator:
        folder = Path(scratch)
        env = {**os.environ, "OPENAI_API_KEY": "bench", "PYTHONPATH": str(ROOT)}
        cfg = config(folder, simulator.base_url, args.concurrency)
        per_persona = calls_per_persona(cfg, folder, env)
        simulator.reset()
        build = subprocess.Popen([*MEMSYNTH, "build", str(cfg), "--personas", str(args.personas),
                                  "--no-progress", "--warehouse", str(folder / "plan")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
        started = time.monotonic()
        samples, last_requests, last_t = [], 0, started
        try:
            while time.monotonic() - started < args.seconds and build.poll() is None:
                time.sleep(args.every)
                now, requests = time.monotonic(), simulator.stats()["requests"]
                samples.append({"t_s": round(now - started, 1), "rss_mb": round(rss_mb(build.pid), 1),
                                "requests": requests,
                                "calls_per_s": round((requests - last_requests) / (now - last_t), 1)})
                print(json.dumps(samples[-1]), flush=True)
                last_requests, last_t = requests, now
        finally:
            if build.poll() is None:
                build.send_signal(signal.SIGINT)
            try:
                _, stderr = build.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                build.kill()
                _, stderr = build.communicate()
    if len(samples) < 4:
        sys.exit(f"the build ran too briefly to measure: {stderr[-2000:]}")
    steady = samples[len(samples) // 4:]  # past start-up and persona synthesis's ramp
    rates = [s["calls_per_s"] for s in steady]
    total_calls = per_persona * args.personas
    result = {
        "machine": machine(),
        "command": " ".join(["python bench/scale_build.py", *sys.argv[1:]]),
        "personas": args.personas, "calls_per_persona": round(per_persona, 1),
        "planned_calls": round(total_calls), "concurrency": args.concurrency, "latency_ms": args.latency_ms,
        "ran_s": samples[-1]["t_s"], "calls_done": samples[-1]["requests"],
        "rss_mb": {"first": samples[0]["rss_mb"], "steady_min": min(s["rss_mb"] for s in steady),
                   "steady_max": max(s["rss_mb"] for s in steady), "last": samples[-1]["rss_mb"]},
        "calls_per_s": {"steady_mean": round(sum(rates) / len(rates), 1), "steady_min": min(rates),
                        "steady_max": max(rates)},
        "projection": {"rpm": args.rpm, "hours_at_rpm": round(total_calls / args.rpm / 60, 1),
                       "hours_at_simulator_rate": round(total_calls / (sum(rates) / len(rates)) / 3600, 1)},
        "stopped_with": f"exit {build.returncode}",  # 130: stopped by SIGINT, as asked
        "samples": samples,
    }
    print(f"wrote {write_result('scale-build', result)}")


if __name__ == "__main__":
    main()
