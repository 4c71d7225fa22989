"""What share of C/L a client doing no work of its own gets on this machine: the floor under
`bench/build.py`'s ratio.

64 bare aiohttp workers on the build's event loop, each POSTing again the moment its answer is read, against (a) an
aiohttp server that only sleeps 200 ms and (b) memsynth's simulator at 200 ms, answers sent
whole and streamed. Whatever they lose against C/L is lost to the two event loops and the
loopback, not to any client's work: a build cannot do better while requests are in flight.

    python bench/floor.py [--seconds 20] [--repeat 3]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import sys
import time
from pathlib import Path

import aiohttp
from aiohttp import web

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import SimulatorProcess, machine, write_result  # noqa: E402

from memsynth.llm.loop import new_event_loop  # noqa: E402

CONCURRENCY, LATENCY_S = 64, 0.2
LIMIT = CONCURRENCY / LATENCY_S


def sleeping_server(port: int) -> None:
    """An endpoint with no work at all: read the body, sleep the latency, answer `{}`."""
    async def answer(request: web.Request) -> web.Response:
        await request.read()
        await asyncio.sleep(LATENCY_S)
        return web.json_response({})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


async def bare_client(url: str, seconds: float, stream: bool) -> float:
    """Requests a second from CONCURRENCY workers that send again as soon as an answer is read."""
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": stream}
    sent = 0
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONCURRENCY)) as session:
        stop = time.perf_counter() + seconds

        async def worker() -> None:
            nonlocal sent
            while time.perf_counter() < stop:
                async with session.post(url, json=body) as response:
                    await response.read()
                sent += 1

        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return sent / (time.perf_counter() - started)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("the sleeping server did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each run")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each setting (the median is reported)")
    ap.add_argument("--name", default="floor")
    args = ap.parse_args()
    runs: dict[str, list[float]] = {}

    def measure(label: str, url: str, stream: bool) -> None:
        for _ in range(args.repeat):
            # On the event loop a build's calls run on (uvloop's where installed).
            with asyncio.Runner(loop_factory=new_event_loop) as runner:
                rate = runner.run(bare_client(url, args.seconds, stream))
            runs.setdefault(label, []).append(round(rate / LIMIT, 3))
            print(label, runs[label][-1], flush=True)

    port = free_port()
    server = multiprocessing.Process(target=sleeping_server, args=(port,), daemon=True)
    server.start()
    try:
        wait_for(port)
        measure("a server that only sleeps", f"http://127.0.0.1:{port}/v1/chat/completions", False)
    finally:
        server.terminate()
        server.join(10)
    with SimulatorProcess(LATENCY_S * 1000) as sim:
        measure("memsynth's simulator, answers whole", sim.base_url + "/chat/completions", False)
        measure("memsynth's simulator, answers streamed", sim.base_url + "/chat/completions", True)
    results = {"machine": machine(), "command": " ".join(["python", *sys.argv]), "concurrency": CONCURRENCY,
               "latency_ms": LATENCY_S * 1000, "seconds": args.seconds,
               "of_limit": {label: {"runs": r, "median": statistics.median(r)} for label, r in runs.items()}}
    path = write_result(args.name, results)
    for label, r in results["of_limit"].items():
        print(f"{label}: {r['median']} of C/L (runs {r['runs']})")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
