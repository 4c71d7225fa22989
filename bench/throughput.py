"""Throughput against the endpoint's limit: memsynth vs Bespoke Curator vs distilabel.

With C requests in flight and latency L no client can beat C / L requests per second.
Each tool sends the same N structured-output calls to the same simulator process (a
pydantic model of a few fields), each in a fresh process of its own so that its CPU
time and peak RSS are its own. Peers are installed into their own virtual environments
under bench/.venvs (their pins clash with prefect's).

    python bench/throughput.py                       # C=64 L=200ms and C=256 L=1000ms
    python bench/throughput.py --calls 2000 --peers none
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, SimulatorProcess, machine, write_result  # noqa: E402

BENCH = ROOT / "bench"
PEERS = {
    # name: (pip requirements, client script)
    "curator": (["bespokelabs-curator==0.1.31"], BENCH / "peers" / "curator_client.py"),
    "distilabel": (["distilabel==1.5.3", "requests", "openai<2"], BENCH / "peers" / "distilabel_client.py"),
}


def peer_python(name: str) -> tuple[Path | None, str]:
    """The peer's venv interpreter, installing it on first use; (None, why) when that fails."""
    venv = BENCH / ".venvs" / name
    python = venv / "bin" / "python"
    marker = venv / ".installed"
    if marker.exists():
        return python, ""
    requirements, _ = PEERS[name]
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True,
                       capture_output=True, text=True, timeout=1800)
    except subprocess.CalledProcessError as exc:
        return None, f"pip install {' '.join(requirements)} failed: {(exc.stderr or '')[-300:]}"
    except subprocess.TimeoutExpired:
        return None, "installing took longer than 30 minutes"
    marker.touch()
    return python, ""


def run_client(command: list[str], env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(command, capture_output=True, text=True, timeout=3600,
                         env={**os.environ, **(env or {})}, cwd=ROOT)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        return {"error": (out.stderr or out.stdout)[-600:].strip() or f"exit code {out.returncode}"}
    return json.loads(lines[-1])


def measure(tool: str, python: Path | str, script: Path, sim: SimulatorProcess, calls: int,
            concurrency: int, latency_ms: float) -> dict:
    sim.reset()
    result = run_client([str(python), str(script), "--base-url", sim.base_url, "--calls", str(calls),
                         "--concurrency", str(concurrency)],
                        env={"TELEMETRY_ENABLED": "false", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                             "CURATOR_DISABLE_CACHE": "1", "OPENAI_API_KEY": "bench"})
    result.setdefault("tool", tool)
    stats = sim.stats()
    result["server_requests"] = stats["requests"]
    result["server_peak_in_flight"] = stats["peak_in_flight"]
    if "error" not in result:
        limit = concurrency / (latency_ms / 1000)
        result["requests_per_second"] = round(result["calls"] / result["seconds"], 1)
        result["limit_per_second"] = round(limit, 1)
        result["ratio_to_limit"] = round(result["requests_per_second"] / limit, 3)
        result["cpu_ms_per_call"] = round(1000 * result["cpu_seconds"] / result["calls"], 3)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=5000, help="structured calls per tool and setting")
    ap.add_argument("--settings", default="64:200,256:1000",
                    help="comma-separated CONCURRENCY:LATENCY_MS pairs")
    ap.add_argument("--peers", default="curator,distilabel", help="peers to compare, or 'none'")
    ap.add_argument("--name", default="throughput", help="results file bench/results/<name>.json")
    args = ap.parse_args()

    peers = [] if args.peers == "none" else [p for p in args.peers.split(",") if p]
    runs = []
    for setting in args.settings.split(","):
        concurrency, latency = (int(x) for x in setting.split(":"))
        with SimulatorProcess(latency) as sim:
            runs.append(measure("memsynth", sys.executable, BENCH / "memsynth_client.py", sim,
                                args.calls, concurrency, latency) | {"concurrency": concurrency,
                                                                     "latency_ms": latency})
            for peer in peers:
                python, why = peer_python(peer)
                if python is None:
                    runs.append({"tool": peer, "concurrency": concurrency, "latency_ms": latency,
                                 "error": why})
                    continue
                runs.append(measure(peer, python, PEERS[peer][1], sim, args.calls, concurrency,
                                    latency) | {"concurrency": concurrency, "latency_ms": latency})
        for r in runs[-1 - len(peers):]:
            _print_row(r)
    path = write_result(args.name, {"machine": machine(), "calls": args.calls,
                                    "command": " ".join(["python", *sys.argv]), "runs": runs})
    print(f"wrote {path}")


def _print_row(r: dict) -> None:
    if "error" in r:
        print(f"{r['tool']:>10}  C={r['concurrency']:<4} L={r['latency_ms']}ms  not run: {r['error']}")
        return
    print(f"{r['tool']:>10}  C={r['concurrency']:<4} L={r['latency_ms']}ms  "
          f"{r['requests_per_second']:>7.1f} req/s  ({r['ratio_to_limit']:.2f} of {r['limit_per_second']:.0f})  "
          f"cpu {r['cpu_ms_per_call']:.3f} ms/call  rss {r['peak_rss_mb']:.0f} MB  "
          f"ok {r['ok']}/{r['calls']}  server peak in flight {r['server_peak_in_flight']}")


if __name__ == "__main__":
    main()
