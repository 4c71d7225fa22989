"""What a longmem build costs per question: calls, prompt and completion tokens, estimated
dollars (at the config's llm.prices) and wall seconds, divided by the questions it kept.

    .venv/bin/python bench/longmem_cost.py [--config configs/longmem.yaml] [--personas N]
                                            [--llm simulator | the config's endpoint]

On the simulator the token counts are its own (a token per 4 characters) and the text is
filler, so the figures say how many calls and how much prompt a question takes; against a
real endpoint (drop `--llm simulator`) they are what it bills.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--config", default=str(ROOT / "configs" / "longmem.yaml"))
    ap.add_argument("--personas", type=int, default=2)
    ap.add_argument("--llm", default="simulator", help="'simulator', or 'config' for the config's own endpoint")
    ap.add_argument("--name", default="longmem-cost")
    args = ap.parse_args()
    config = yaml.safe_load(Path(args.config).read_text(encoding="utf-8"))
    config["personas"] = {**config.get("personas", {}), "count": args.personas}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "c.yaml"
        path.write_text(yaml.safe_dump(config, allow_unicode=True), encoding="utf-8")
        command = [sys.executable, "-m", "memsynth.cli", "build", str(path), "--warehouse", str(Path(tmp) / "wh"),
                   "--format", "json", *(["--llm", "simulator"] if args.llm == "simulator" else [])]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "build failed")
    summary = json.loads(done.stdout)
    questions = summary["statistics"]["questions"] or 1
    llm = summary["llm"]
    result = {"config": Path(args.config).name, "personas": args.personas, "questions": questions,
              "sessions_per_haystack": summary["statistics"]["sessions_per_haystack"],
              "tokens_per_haystack": summary["statistics"]["tokens_per_haystack"],
              "calls_per_question": round(llm["calls"] / questions, 2),
              "prompt_tokens_per_question": round(llm["prompt_tokens"] / questions),
              "completion_tokens_per_question": round(llm["completion_tokens"] / questions),
              "usd_per_question": round(llm["estimated_cost_usd"] / questions, 6),
              "wall_s_per_question": round(wall / questions, 3), "endpoint": args.llm}
    out = ROOT / "bench" / "results" / f"{args.name}.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
