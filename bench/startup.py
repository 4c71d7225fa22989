"""The fixed cost of a command: wall seconds of the light commands (a query, `versions`,
`datasets list`, the `--help` of every command, bad arguments and configs) and of a 1-persona
quickstart build (first and cached) with memsynth's private Prefect API and with a running
`prefect server`.

    python bench/startup.py [--repeat 5] [--skip-builds]
    python bench/startup.py --before DIR   # the light commands of DIR's checkout and of this
                                           # one, run in turn (a noisy machine slows both alike)
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


def timed(args: list[str], env: dict[str, str], check: bool = True, cwd: Path = ROOT) -> float:
    started = time.perf_counter()
    subprocess.run(args, env=env, check=check, capture_output=True, cwd=cwd)
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


def command_paths() -> list[list[str]]:
    """Every command and subcommand, as typed after `memsynth`."""
    import click

    from memsynth.cli import cli

    def walk(group: click.Group, prefix: list[str]) -> list[list[str]]:
        paths = []
        for name, command in sorted(group.commands.items()):
            paths.append([*prefix, name])
            if isinstance(command, click.Group):
                paths += walk(command, [*prefix, name])
        return paths

    return walk(cli, [])


def light_cases(wh: str, tmp_path: Path) -> dict[str, list[str]]:
    """The light commands (issue 35's targets), as typed after `memsynth`."""
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: x\nrecipe: enpmr\nbogus: 1\n", encoding="utf-8")
    return {
        "memsynth query": ["query", "SELECT count(*) FROM memories", "--dataset", "quickstart", "--warehouse", wh],
        "memsynth versions": ["versions", "quickstart", "--warehouse", wh],
        "memsynth datasets list": ["datasets", "list", "--warehouse", wh],
        "error: bad argument (build --personas 0)": ["build", "configs/quickstart.yaml", "--personas", "0"],
        "error: missing config": ["build", "no-such.yaml"],
        "error: unknown config key": ["build", str(bad)],
        "error: not a stage (--from-stage)": ["build", "configs/quickstart.yaml", "--from-stage", "x", "--regenerate", "p"],
        "error: not a query": ["query", "DROP TABLE memories", "--dataset", "quickstart", "--warehouse", wh],
        "build --help": ["build", "--help"],
    }


def light_commands(memsynth: str, wh: str, tmp_path: Path, repeat: int, env: dict[str, str]) -> dict[str, float]:
    """Median seconds of the commands that must answer in a blink (issue 35's targets)."""
    cases = light_cases(wh, tmp_path)
    del cases["build --help"]  # timed below with every other command's
    out = {name: round(statistics.median(timed([memsynth, *a], env, check=False) for _ in range(repeat)), 3)
           for name, a in cases.items()}
    helps = {" ".join(path): statistics.median(timed([memsynth, *path, "--help"], env) for _ in range(repeat))
             for path in [[], *command_paths()]}
    slowest = max(helps, key=helps.get)
    out[f"--help, slowest of {len(helps)} commands ({slowest or 'memsynth'})"] = round(helps[slowest], 3)
    out["--help, median of every command"] = round(statistics.median(helps.values()), 3)
    return out


PAIRED_BUILD = "quickstart build, 1 persona, first (private API)"


def paired(before: Path, wh: str, tmp_path: Path, repeat: int, env: dict[str, str]) -> dict[str, dict[str, float]]:
    """Median seconds of each light command, and of a first 1-persona build on the private
    Prefect API, in `before`'s checkout and in this one, each run of one followed at once by
    the same run of the other."""
    trees = {"before": before.resolve(), "after": ROOT}
    times: dict[str, dict[str, list[float]]] = {t: {} for t in trees}
    for i in range(repeat):
        cases = {**light_cases(wh, tmp_path), PAIRED_BUILD: None}
        for name, args in cases.items():
            for tree, root in trees.items():
                # A build goes into a warehouse of its own: nothing cached.
                run = args or ["build", "configs/quickstart.yaml", "--llm", "simulator", "--personas", "1",
                               "--warehouse", str(tmp_path / f"paired-{tree}-{i}"), "--no-progress"]
                # `python -m` with the tree first on the path: its memsynth, not the installed one.
                seconds = timed([sys.executable, "-m", "memsynth.cli", *run], {**env, "PYTHONPATH": str(root)},
                                check=args is None, cwd=root)  # a build must succeed
                times[tree].setdefault(name, []).append(seconds)
    return {tree: {name: round(statistics.median(v), 3) for name, v in by.items()} for tree, by in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--before", type=Path, metavar="DIR",
                    help="a checkout of an earlier commit (git worktree add DIR REV): time its light "
                         "commands and this checkout's in turn, and write startup-paired.json")
    ap.add_argument("--skip-builds", action="store_true",
                    help="time the light commands only (one build makes their dataset)")
    args = ap.parse_args()
    memsynth = str(BIN / "memsynth")
    base = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    results: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        if args.before:
            wh = str(tmp_path / "wh")
            subprocess.run([memsynth, "build", "configs/quickstart.yaml", "--llm", "simulator", "--personas", "1",
                            "--warehouse", wh, "--no-progress"], env=base, check=True, capture_output=True, cwd=ROOT)
            both = paired(args.before, wh, tmp_path, args.repeat, base)
            for name in both["after"]:
                print(f"{both['before'][name]:>7.2f} s → {both['after'][name]:.2f} s  {name}")
            print("wrote", write_result("startup-paired", {
                "machine": machine(), "command": " ".join(["python", *sys.argv]), "repeat": args.repeat,
                "before": str(args.before), "before_commit": subprocess.run(
                    ["git", "-C", str(args.before), "rev-parse", "--short", "HEAD"],
                    capture_output=True, text=True).stdout.strip(),
                "after_commit": subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                                               capture_output=True, text=True).stdout.strip(),
                "seconds": both}))
            return
        if args.skip_builds:
            wh = str(tmp_path / "wh")
            subprocess.run([memsynth, "build", "configs/quickstart.yaml", "--llm", "simulator", "--personas", "1",
                            "--warehouse", wh, "--no-progress"], env=base, check=True, capture_output=True, cwd=ROOT)
            results.update(light_commands(memsynth, wh, tmp_path, args.repeat, base))
            return report(results, args)
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
            results.update(light_commands(memsynth, str(tmp_path / "wh-p-0"), tmp_path, args.repeat, base))
        finally:
            server.terminate()
            server.wait(30)
    report(results, args)


def report(results: dict[str, float], args: argparse.Namespace) -> None:
    for name, seconds in results.items():
        print(f"{seconds:>7.2f} s  {name}")
    path = write_result("startup-light" if args.skip_builds else "startup", {"machine": machine(), "command": " ".join(["python", *sys.argv]),
                                    "repeat": args.repeat, "seconds": results})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
