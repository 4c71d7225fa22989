"""Run memsynth's simulator in its own process, so client figures are the client's alone."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class SimulatorProcess:
    """`memsynth simulator serve --port 0 --latency-ms L` as a child process."""

    def __init__(self, latency_ms: float, *extra: str):
        self.latency_ms = latency_ms
        self.extra = extra  # more `simulator serve` options (a capacity model, a profile)
        self.proc: subprocess.Popen[str] | None = None
        self.base_url = ""

    def __enter__(self) -> SimulatorProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "memsynth.cli", "simulator", "serve", "--port", "0",
             "--latency-ms", str(self.latency_ms), *self.extra],
            stdout=subprocess.PIPE, text=True, cwd=ROOT, env={**os.environ})
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        match = re.search(r"(http://\S+/v1)", line)
        if not match:
            self.proc.kill()
            raise RuntimeError(f"simulator did not start: {line!r}")
        self.base_url = match.group(1)
        return self

    def stats(self) -> dict:
        with urllib.request.urlopen(self.base_url.removesuffix("/v1") + "/stats", timeout=10) as r:
            return json.loads(r.read())

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the simulator process has used so far."""
        assert self.proc is not None
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def sample_in_flight(self, every_s: float = 0.5) -> InFlightSampler:
        """Start recording the requests in flight every `every_s` (stop() returns them)."""
        return InFlightSampler(self, every_s)

    def reset(self) -> None:
        req = urllib.request.Request(self.base_url.removesuffix("/v1") + "/stats/reset", method="POST")
        urllib.request.urlopen(req, timeout=10).read()

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


class InFlightSampler:
    """Polls the simulator's in-flight count from a thread: how full the build kept the
    endpoint (a mean below the concurrency means too little ready work, not a slow client)."""

    def __init__(self, sim: SimulatorProcess, every_s: float):
        import threading

        self.samples: list[int] = []
        self.times: list[float] = []  # seconds since start, of each sample
        self.started = time.monotonic()
        self.every_s = every_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, args=(sim, every_s), daemon=True)
        self._thread.start()

    def _poll(self, sim: SimulatorProcess, every_s: float) -> None:
        while not self._stop.wait(every_s):
            try:
                n = sim.stats()["in_flight"]
                self.samples.append(n)
                self.times.append(time.monotonic() - self.started)
            except OSError:
                pass

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join(5)
        busy = [n for n in self.samples if n > 0]
        at = [t for t, n in zip(self.times, self.samples) if n > 0]
        ended = time.monotonic() - self.started
        # Mean in flight over each whole second: where the endpoint was under-filled (the
        # build's start, the tail of its last shards).
        per_second: dict[int, list[int]] = {}
        for t, n in zip(self.times, self.samples):
            per_second.setdefault(int(t), []).append(n)
        return {"mean_in_flight": round(sum(busy) / len(busy), 1) if busy else 0,
                "samples": len(self.samples),
                "per_second": [round(sum(v) / len(v)) for _, v in sorted(per_second.items())],
                # About how long the endpoint had work: the rest of a build's time is its own,
                # before the first request (start-up) and after the last (publishing).
                "busy_seconds": round(len(busy) * self.every_s, 1),
                "first_busy_s": round(at[0], 1) if at else None,
                "idle_after_s": round(ended - at[-1], 1) if at else None}


def machine() -> dict:
    """Cores and memory of this machine, for the results table."""
    mem_kb = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem_kb = int(line.split()[1])
    except OSError:
        pass
    return {"cores": os.cpu_count(), "memory_gib": round(mem_kb / 1024 / 1024, 1),
            "python": sys.version.split()[0], "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def write_result(name: str, payload: dict) -> Path:
    """bench/results/<name>.json, written whole (temp file, then rename)."""
    out = ROOT / "bench" / "results" / f"{name}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(payload, indent=2, default=str))
    tmp.replace(out)
    return out
