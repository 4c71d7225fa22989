"""Every shipped config built at its stated size on the simulator, through the real CLI:
personas asked and built, rows, calls, failures and wall time per config.

    python bench/configs.py [--only NAME ...]

stratmem's config reads LoCoMo, which memsynth does not ship: the script points it at
$MEMSYNTH_REFERENCE_DATA/locomo/locomo10.json (default ../shared/reference-data/…) and
records the config as not built when that file is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from simulator_process import ROOT, machine, write_result  # noqa: E402

LOCOMO = Path(os.environ.get("MEMSYNTH_REFERENCE_DATA", ROOT.parent / "shared" / "reference-data")) / "locomo" / "locomo10.json"


def build(config: Path, scratch: Path) -> dict:
    settings = yaml.safe_load(config.read_text(encoding="utf-8"))
    source = (settings.get("recipe_options") or {}).get("source", "")
    if source.startswith("locomo:"):
        if not LOCOMO.is_file():
            return {"config": config.name, "error": f"LoCoMo not found at {LOCOMO}"}
        settings["recipe_options"]["source"] = f"locomo:{LOCOMO}"
        config = scratch / config.name
        config.write_text(yaml.safe_dump(settings), encoding="utf-8")
    started = time.perf_counter()
    done = subprocess.run([str(Path(sys.executable).parent / "memsynth"), "build", str(config), "--llm", "simulator",
                           "--warehouse", str(scratch / "wh"), "--no-progress", "--format", "json"],
                          capture_output=True, text=True, cwd=ROOT)
    wall = round(time.perf_counter() - started, 1)
    if done.returncode != 0:
        return {"config": config.name, "error": done.stderr.strip().splitlines()[-1][:300], "wall_seconds": wall}
    summary = json.loads(done.stdout)
    return {"config": config.name, "recipe": settings["recipe"], "personas_asked": settings["personas"]["count"],
            "personas_built": summary["personas"], "rows": summary["row_counts"], "calls": summary["llm"]["calls"],
            "failed_items": summary["failed_items"], "lost_personas": summary["lost_personas"],
            "lost_items": summary["lost_items"], "wall_seconds": wall}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="config file names to build (default: all)")
    args = parser.parse_args()
    configs = [p for p in sorted((ROOT / "configs").glob("*.yaml")) if not args.only or p.name in args.only]
    runs = []
    for config in configs:
        with tempfile.TemporaryDirectory(prefix="memsynth-bench-configs-") as scratch:
            run = build(config, Path(scratch))
        print(json.dumps(run), flush=True)
        runs.append(run)
    command = "python bench/configs.py" + (f" --only {' '.join(args.only)}" if args.only else "")
    print(write_result("configs", {"command": command, "machine": machine(), "runs": runs}))


if __name__ == "__main__":
    main()
