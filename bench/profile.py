"""Summarise and draw a py-spy profile (collapsed stacks, `py-spy record --format raw`).

    python bench/profile.py /tmp/build.txt                      # where the CPU went, by area
    python bench/profile.py /tmp/build.txt --svg bench/flame.svg --top 30

Areas are matched on the innermost frame that names one (so a pydantic call made by a
recipe check counts as validation, and the check's own Python as checks).
"""

from __future__ import annotations

import argparse
import html
import json
import re
from collections import Counter
from pathlib import Path

# (area, frame pattern), first match from the innermost frame outward wins.
AREAS = [
    ("cache writes", r"memsynth/llm/cache\.py"),
    ("prompt rendering", r"jinja2/|memsynth/prompts\.py|_base_messages"),
    ("schema validation", r"pydantic|model_validate|evaluate \(memsynth/stage\.py"),
    ("HTTP client (openai, aiohttp)", r"openai/|aiohttp/|httpx|yarl/|multidict/|ssl\.py|memsynth/llm/http\.py"),
    ("JSON encode/decode", r"json/|orjson"),
    ("request keys and hashing", r"memsynth/llm/request\.py|hashlib"),
    ("limits, retries", r"memsynth/llm/(limits|retry|engine)\.py|tenacity/"),
    ("recipe checks", r"flows/[a-z_]+/checks\.py|memsynth/stage\.py"),
    ("row assembly (recipe chains)", r"flows/[a-z_]+/(chain|rows|plan)\.py"),
    ("Parquet staging", r"pyarrow|memsynth/warehouse/staging\.py|staging"),
    ("publish (DuckDB)", r"duckdb|memsynth/warehouse/"),
    ("Prefect", r"prefect/"),
    ("asyncio event loop", r"asyncio/"),
    ("imports", r"importlib"),
]


def read_stacks(path: Path) -> Counter[tuple[str, ...]]:
    stacks: Counter[tuple[str, ...]] = Counter()
    for line in path.read_text().splitlines():
        frames, _, count = line.rpartition(" ")
        if frames and count.isdigit():
            stacks[tuple(frames.split(";"))] += int(count)
    return stacks


def area_of(stack: tuple[str, ...]) -> str:
    for frame in reversed(stack):
        for name, pattern in AREAS:
            if re.search(pattern, frame):
                return name
    return "other"


# Frames where a thread waits rather than computes (py-spy counts some of them as active).
# uvloop's run_forever is C: its waits for sockets and its own (small) work both show as
# that one frame, and go together.
IDLE = ("EpollSelector.select", "_worker (concurrent/futures/thread.py:81)", "os.fsync", "_wait_for_tstate_lock",
        "ResponseCache._write_batch (memsynth/llm/cache.py:282)", "LoopThread._run (memsynth/llm/loop.py")


def area_shares(stacks: Counter[tuple[str, ...]]) -> dict[str, float]:
    """Percent of the samples per area."""
    total = sum(stacks.values()) or 1
    areas: Counter[str] = Counter()
    for stack, n in stacks.items():
        areas[area_of(stack)] += n
    return {a: round(100 * n / total, 1) for a, n in areas.most_common()}


def summarise(stacks: Counter[tuple[str, ...]], top: int) -> str:
    total = sum(stacks.values())
    areas: Counter[str] = Counter()
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    for stack, n in stacks.items():
        areas[area_of(stack)] += n
        own[stack[-1]] += n
        for frame in set(stack):
            inclusive[frame] += n
    lines = [f"{total} samples (100 per second of CPU)", "", "| area | share |", "|---|---|"]
    lines += [f"| {a} | {100 * n / total:.1f} % |" for a, n in areas.most_common()]
    lines += ["", f"top {top} frames by own time:"]
    lines += [f"  {100 * n / total:5.1f} %  {f}" for f, n in own.most_common(top)]
    lines += ["", f"top {top} memsynth/flows frames by inclusive time:"]
    ours = [(f, n) for f, n in inclusive.most_common() if "memsynth/" in f or "flows/" in f]
    lines += [f"  {100 * n / total:5.1f} %  {f}" for f, n in ours[:top]]
    return "\n".join(lines)


def flame_svg(stacks: Counter[tuple[str, ...]], title: str, width: int = 1600) -> str:
    """A plain flame graph: one rectangle per frame, width by samples, hover for detail."""
    tree: dict = {}
    for stack, n in stacks.items():
        node = tree
        for frame in stack:
            entry = node.setdefault(frame, [0, {}])
            entry[0] += n
            node = entry[1]
    total = sum(stacks.values()) or 1
    row_h, rects, depth_max = 16, [], 0

    def walk(node: dict, x: float, depth: int) -> None:
        nonlocal depth_max
        for frame, (n, children) in sorted(node.items()):
            w = width * n / total
            if w >= 0.5:
                depth_max = max(depth_max, depth)
                hue = 10 + hash(frame.split(" (")[-1].split("/")[0]) % 50
                label = html.escape(frame.split(" (")[0])[: max(0, int(w / 7))]
                tip = html.escape(f"{frame}: {n} samples, {100 * n / total:.2f} %")
                rects.append((x, depth, w, hue, label, tip))
                walk(children, x, depth + 1)
            x += w

    walk(tree, 0.0, 0)
    height = (depth_max + 3) * row_h
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="monospace" font-size="11">',
           f'<text x="4" y="12">{html.escape(title)}</text>']
    for x, depth, w, hue, label, tip in rects:
        y = height - (depth + 1) * row_h
        out.append(f'<g><title>{tip}</title><rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row_h - 1}" '
                   f'fill="hsl({hue},85%,60%)"/><text x="{x + 2:.1f}" y="{y + 11}">{label}</text></g>')
    out.append("</svg>")
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile", type=Path, help="collapsed stacks from py-spy --format raw")
    ap.add_argument("--top", type=int, default=25, help="how many frames to list")
    ap.add_argument("--svg", type=Path, help="also draw the flame graph here")
    ap.add_argument("--skip", default=r"<frozen importlib",
                    help="drop stacks whose frames match this (default: imports)")
    ap.add_argument("--json", type=Path, help="also write the area shares here (for bench/report.py)")
    args = ap.parse_args()
    stacks = read_stacks(args.profile)
    if args.skip:
        skip = re.compile(args.skip)
        stacks = Counter({s: n for s, n in stacks.items() if not any(skip.search(f) for f in s)})
    # Waiting is not CPU: leave out stacks that end in a wait.
    stacks = Counter({s: n for s, n in stacks.items() if not any(i in s[-1] for i in IDLE)})
    print(summarise(stacks, args.top))
    if args.json:
        args.json.write_text(json.dumps({"profile": args.profile.name, "samples": sum(stacks.values()),
                                         "areas_percent": area_shares(stacks)}, indent=2))
    if args.svg:
        args.svg.write_text(flame_svg(stacks, f"{args.profile.name}: {sum(stacks.values())} samples"))
        print(f"\nwrote {args.svg}")


if __name__ == "__main__":
    main()
