"""The fixed cost of a command: wall seconds of `memsynth --help`, a query, and a 1-persona
quickstart build (first and cached) with memsynth's private Prefect API and with a running
`prefect server`.

    python bench/startup.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, machine, write_result  # noqa: E402

from memsynth.build.prefect_api import wait_healthy  # noqa: E402

BIN = Path(sys.executable).parent


def timed(args: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True, cwd=ROOT)
    return time.perf_counter() - started


def start_prefect_server(home: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false"}
    env.pop("PREFECT_API_URL", None)
    process = subprocess.Popen([str(BIN / "prefect"), "server", "start", "--host", "127.0.0.1", "--port",
                                str(port), "--no-ui"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/api"
    wait_healthy(url, process, timeout_s=120)
    return process, url


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    memsynth = str(BIN / "memsynth")
    base = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        server_started = time.perf_counter()
        server, url = start_prefect_server(tmp_path / "prefect-home")
        results["prefect server start (to healthy)"] = round(time.perf_counter() - server_started, 2)
        try:
            for label, env in (("private API", base), ("running server", {**base, "PREFECT_API_URL": url})):
                firsts, cached = [], []
                for i in range(args.repeat):
                    wh = str(tmp_path / f"wh-{label[0]}-{i}")
                    build = [memsynth, "build", "configs/quickstart.yaml", "--llm", "simulator", "--personas", "1",
                             "--warehouse", wh, "--no-progress"]
                    firsts.append(timed(build, env))
                    cached.append(timed(build, env))
                results[f"quickstart build, 1 persona, first ({label})"] = round(statistics.median(firsts), 2)
                results[f"quickstart build, 1 persona, cached ({label})"] = round(statistics.median(cached), 2)
            wh = str(tmp_path / "wh-p-0")
            results["memsynth --help"] = round(statistics.median(
                timed([memsynth, "--help"], base) for _ in range(args.repeat)), 2)
            results["memsynth query"] = round(statistics.median(
                timed([memsynth, "query", "SELECT count(*) FROM memories", "--dataset", "quickstart",
                       "--warehouse", wh], base) for _ in range(args.repeat)), 2)
        finally:
            server.terminate()
            server.wait(30)
    for name, seconds in results.items():
        print(f"{seconds:>7.2f} s  {name}")
    path = write_result("startup", {"machine": machine(), "command": " ".join(["python", *sys.argv]),
                                    "repeat": args.repeat, "seconds": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
