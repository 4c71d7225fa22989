"""Render bench/RESULTS.md from bench/results/*.json: python bench/report.py"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

BENCH = Path(__file__).resolve().parent


def load(name: str) -> dict | None:
    path = BENCH / "results" / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def run_rows(runs: list[dict], row: Callable[[dict], str], failed: Callable[[dict], str]) -> list[str]:
    """A results table's rows: `row(r)` for a run that finished, `failed(r)` for one that errored."""
    return [failed(r) if "error" in r else row(r) for r in runs]


# The CPU work of issue 16: the same 200-persona build before and after, and the profiles.
CPU_RUNS = [("build-200-before", "before (commit 42e58b0, run from a worktree of it)"), ("build-200-after", "after"),
            ("build-200-all-shards", "midway (uvloop, default collector), all 20 shards at once"),
            ("exp-head-baseline", "after, measured again in session 11 (commit 823a50b)"),
            ("exp-direct-post", "experiment, not in the code: chat POSTs on a bare aiohttp session instead of "
                                "the openai client (a worktree of 823a50b, patched)"),
            ("build-200-openai", "session 12, `llm.client: openai` (the default); Prefect's server started "
                                 "during the import, its database made before the run"),
            ("build-200-direct", "session 12, `llm.client: direct`; the same"),
            ("profile-200-direct", "session 12, `llm.client: direct`, sampled by py-spy (the profile below)"),
            ("build-200-openai-fresh-prefect", "session 12, `llm.client: openai`, each build in a new Prefect "
                                               "home (a machine's first build: its database is made in the run)")]


def cpu_section() -> list[str]:
    runs = [(load(name), label) for name, label in CPU_RUNS]
    runs = [(b, label) for b, label in runs if b and "simulator_cpu_seconds" in b["first"]]
    if not runs:
        return []
    out = ["## CPU per call, profiled (`bench/build.py`, `bench/profile.py`)", "",
           "A first build of 200 personas (L=200 ms, C=64, so C/L = 320 req/s). Effective latency is "
           "mean requests in flight over requests per second: what a request took as the build "
           "saw it, against the simulator's 200 ms.", "",
           "Later runs also record when the endpoint had work: the seconds from launching the "
           "command to its first request (start-up: Prefect's server, the import, the personas) and "
           "the share of C/L while requests were in flight, which leaves start-up and publishing out.", "",
           "| code | CPU ms/call | req/s | of C/L | s to first request | of C/L while busy | mean in flight | "
           "effective latency ms | simulator CPU s | peak RSS MB | command |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for b, label in runs:
        r = b["first"]
        latency = round(1000 * r["mean_in_flight"] / r["requests_per_second"]) if r.get("mean_in_flight") else ""
        busy = r.get("endpoint_busy_seconds")
        while_busy = f"{r['requests_sent'] / busy / (b['concurrency'] / b['latency_ms'] * 1000):.3f}" if busy else ""
        out.append(f"| {label} | {r['cpu_ms_per_call']:.2f} | {r['requests_per_second']} | "
                   f"{r['ratio_to_limit']:.3f} | {r.get('seconds_to_first_request', '')} | {while_busy} | "
                   f"{r.get('mean_in_flight', '')} | {latency} | "
                   f"{r['simulator_cpu_seconds']} | {r['peak_rss_mb']} | `{b['command']}` |")
    profiles = [(load(f"profile-{name}"), name) for name in ("before", "after", "direct")]
    profiles = [(p, name) for p, name in profiles if p]
    if profiles:
        areas = list(dict.fromkeys(a for p, _ in profiles for a in p["areas_percent"]))
        out += ["", "Where the CPU went (py-spy samples of the first build, waits left out; "
                "`python bench/profile.py FILE --json …`; flame graphs in `bench/flame-build-200-*.svg`). "
                "After, the event loop is uvloop's: its C work cannot be told from its waits, so it is "
                "left out with them, and the shares are of the Python work alone. Direct is `llm.client: direct` "
                "(session 12); at 100 samples a second of CPU, the sample counts compare the builds' CPU:", "",
                "| area | " + " | ".join(f"{name} (% of {p['samples']} samples)" for p, name in profiles) + " |",
                "|---|" + "---|" * len(profiles)]
        out += [f"| {a} | " + " | ".join(str(p["areas_percent"].get(a, 0)) for p, _ in profiles) + " |"
                for a in areas]
    return out + [""]


# Issue 35 part 2: a whole 200-persona build over its launch-to-exit time, before and after.
WHOLE_RUNS = [("build-200-baseline35", "before (db8b9d2): the build waited for Prefect's server; times sampled "
                                       "every 0.5 s, wall time from inside the process"),
              ("build-200-final", "after: the first requests go while Prefect's server starts; times from "
                                  "the simulator's clock and the launch"),
              ("build-200-streamfix", "the same, after the simulator sends a streamed answer that is ready at "
                                      "once in one write (it was five TCP segments)"),
              ("build-200-handon", "the same, and a shard's calls starting as soon as another's end, not once "
                                   "that one has written its Parquet"),
              ("build-200-template", "the same, and Prefect's private server starting from a kept, migrated "
                                     "database"),
              ("build-200-lazyprefect", "the same, and the first requests going before Prefect is imported; "
                                        "no flow-run heartbeats on the private server"),
              ("exp-200-gc4", "experiment: lazyprefect with only the collector's change"),
              ("exp-200-yield", "experiment, not kept: the next row's code, and a call yielding the loop "
                                "once it frees its slot, so a waiting call sends first"),
              ("build-200-onewriter", "lazyprefect, and one shard writing its Parquet at a time while calls go; "
                                      "the collector's middle pass every 4 young passes, not 20")]
# One loaded machine, two commits in turn (bench/build.py run from a worktree of the earlier one).
WHOLE_PAIRED = [("pair-old-1", "before (dca138a)"), ("pair-new-1", "after (85c105e)"),
                ("pair-old-2", "before (dca138a)"), ("pair-new-2", "after (85c105e)")]
FLOOR_RUNS = [("floor-separate-writes", "the simulator sending each event of a streamed answer in a write of its own"),
              ("floor", "the simulator sending a streamed answer ready at once in one write")]
# One day's machine: the floor, then a build right after it (issue 35 part 2 against what is possible).
SAME_DAY = ("floor-1127", "build-200-1127", "a15998a")


WHOLE_HEADER = ("| code | launch to exit s | requests | of C/L over the whole time | of C/L while busy | "
                "s to first request | s after last answer | mean in flight | command |",
                "|---|---|---|---|---|---|---|---|---|")


def whole_build_section() -> list[str]:
    runs = [(load(name), label) for name, label in WHOLE_RUNS]
    runs = [(b, label) for b, label in runs if b]
    if not runs:
        return []
    out = ["## A whole build against C/L (`bench/build.py --personas 200`)", "",
           "A first build of 200 personas, L = 200 ms, C = 64 (C/L = 320 req/s), the default client "
           "(openai, streamed). Over the whole time: requests over launch-to-exit seconds, against C/L. "
           "While busy: over the seconds at least one request was in flight. The gap between the two "
           "is start-up (to the first request past the endpoint probe) and the tail (publishing, "
           "statistics, the Prefect artifact, exit).", "", *WHOLE_HEADER]
    out += [_whole_row(b, label) for b, label in runs]
    out += [""] + floor_paragraph(runs[-1][0])
    paired = [(load(name), label) for name, label in WHOLE_PAIRED]
    paired = [(b, label) for b, label in paired if b]
    if paired:
        out += ["### The same build, an earlier commit and this one in turn", "",
                f"On {paired[0][0]['machine']['when'][:10]}'s machine, slower than the one above (compare the rows "
                "with each other, not with the table above): the earlier commit's `bench/build.py` run from a "
                "`git worktree` of it with `PYTHONPATH` set to it, then this one's, twice.", "",
                *WHOLE_HEADER]
        out += [_whole_row(b, label) for b, label in paired] + [""]
    return out + same_day_section()


def same_day_section() -> list[str]:
    """The floor and a build measured back to back, so the gap between them is the client's alone."""
    floor_name, build_name, commit = SAME_DAY
    floor, build = load(floor_name), load(build_name)
    if not (floor and build):
        return []
    return (["### The floor and a build, back to back on one machine", "",
             f"On {floor['machine']['when'][:10]}, `bench/floor.py` and then a build of commit {commit}, "
             "nothing else running. A build can lose no less than the floor while busy, nor than the floor "
             "times its busy share over the whole time.", "", *WHOLE_HEADER, _whole_row(build, commit), ""]
            + floor_paragraph(build, [(floor, "a streamed answer ready at once in one write")]))


def _whole_row(b: dict, label: str) -> str:
    r = b["first"]
    limit = b["concurrency"] / b["latency_ms"] * 1000
    whole = r.get("whole_seconds") or r["wall_seconds"]
    return (f"| {label} | {whole} | {r['requests_sent']} | {r['requests_sent'] / whole / limit:.3f} | "
            f"{r['requests_sent'] / r['endpoint_busy_seconds'] / limit:.3f} | "
            f"{r['seconds_to_first_request']} | {r['seconds_after_last_request']} | {r['mean_in_flight']} | "
            f"`{b['command']}` |")


def floor_paragraph(build: dict, floors: list[tuple[dict, str]] | None = None) -> list[str]:
    """What a client with no work of its own gets here, and so what a build could reach."""
    if floors is None:
        floors = [(load(name), label) for name, label in FLOOR_RUNS]
    floors = [f for f in floors if f[0]]
    if not floors:
        return []
    r = build["first"]
    busy_share = r["endpoint_busy_seconds"] / (r.get("whole_seconds") or r["wall_seconds"])
    out = ["The floor under these ratios: bare aiohttp workers on the build's event loop (uvloop), each sending "
           "again the moment its answer is read, C = 64, L = 200 ms (`bench/floor.py`). Whatever they lose "
           "is lost to the two event loops and the loopback, not to a client's work. The last column is that "
           f"share over the whole time of the last build above, whose endpoint was busy {busy_share:.3f} of it "
           "(the rest is its start-up and tail).", "",
           "| simulator | endpoint | of C/L (median) | runs | with the build's start-up and tail | command |",
           "|---|---|---|---|---|---|"]
    for floor, label in floors:
        out += [f"| {label} | {endpoint} | {f['median']:.3f} | {', '.join(f'{x:.3f}' for x in f['runs'])} | "
                f"{f['median'] * busy_share:.3f} | `{floor['command']}` ({floor['machine']['when']}) |"
                for endpoint, f in floor["of_limit"].items()]
    return out + [""]


# Issue 35 part 3: each light command's target, and its time before that work (measured on
# this machine the same day with commit 84c92f2, the same script).
LIGHT_TARGETS = {"memsynth query": (0.3, "0.83–0.95"), "memsynth versions": (0.3, "0.62"),
                 "memsynth datasets list": (0.3, "0.61"), "error: bad argument (build --personas 0)": (0.5, "0.08"),
                 "error: missing config": (0.5, "0.16"), "error: unknown config key": (0.5, "0.17"),
                 "error: not a stage (--from-stage)": (0.5, "1.00"), "error: not a query": (0.5, "0.13"),
                 "--help, slowest of 31 commands (simulator)": (0.3, "0.09"),
                 "--help, median of every command": (0.3, "0.08")}


def light_section() -> list[str]:
    light = load("startup-light")
    if not light:
        return []
    m = light["machine"]
    out = ["### Light commands (issue 35's targets)", "",
           f"`{light['command']}` (`bench/results/startup-light.json`): median of {light['repeat']} runs, wall "
           f"seconds; {m['cores']} cores, {m['when']}. The dataset is a 1-persona quickstart build.", "",
           "| command | s | target | before |", "|---|---|---|---|"]
    for name, seconds in light["seconds"].items():
        target, before = LIGHT_TARGETS.get(name, (0.3 if "help" in name else 0.5, ""))
        out.append(f"| {name} | {seconds:.2f} | ≤ {target} | {before} |")
    return out + [""]


def paired_section() -> list[str]:
    paired = load("startup-paired")
    if not paired:
        return []
    m, seconds = paired["machine"], paired["seconds"]
    out = ["### Light commands and a 1-persona build, an earlier commit and this one in turn", "",
           f"`{paired['command']}` (`bench/results/startup-paired.json`; `{paired['before']}` is a "
           f"`git worktree` of {paired['before_commit']}, after is {paired['after_commit']}): each run of "
           "the one followed at once by the same run of the other, median of "
           f"{paired['repeat']}, wall seconds of `python -m memsynth.cli`; {m['cores']} cores, {m['when']}. "
           "A machine slowed by its neighbours slows both columns alike: compare them with each other, "
           "not with the tables above, measured on another day.", "",
           "| command | before | after | target |", "|---|---|---|---|"]
    for name, after in seconds["after"].items():
        if name not in seconds["before"]:
            continue
        # A build has no target of its own: issue 35's are for the light commands.
        target = "–" if name.startswith("quickstart build") else \
            f"≤ {LIGHT_TARGETS.get(name, (0.3 if 'help' in name else 0.5, ''))[0]}"
        out.append(f"| {name} | {seconds['before'][name]:.2f} | {after:.2f} | {target} |")
    return out + [""]


def capacity_section() -> list[str]:
    cap, plain = load("capacity"), load("capacity-plain")
    if not cap:
        return []
    m = cap["machine"]
    out = ["## A server that queues instead of answering 429 (`bench/capacity.py`)", "",
           f"`{cap['command']}` (`bench/results/capacity.json`), {m['cores']} cores, {m['when']}. The simulator's "
           "capacity model (`simulator serve --capacity N --per-token-ms 20`, batch slowdown 1) runs in a process "
           "of its own: N answers generate at once, each token up to twice as slow as the batch fills, the rest "
           "queue. Each run sends fresh structured calls through memsynth's engine. Latency is a request's, from "
           "its POST to its answer; settled is the second half of the answers; `auto` is sent three times the "
           "calls; the best fixed setting is the fewest in flight within 1 % of the top fixed throughput.", "",
           "| capacity | concurrency | calls/s | settled calls/s | median latency s | timeouts |",
           "|---|---|---|---|---|---|"]
    bars = []
    for capacity, c in cap["capacities"].items():
        for r in c["rows"]:
            if r["concurrency"] == "auto":
                label = f"auto (ended at {r['auto']['concurrency']}, {r['auto']['phase']})"
            else:
                label = f"**{r['concurrency']} (best fixed)**" if r["concurrency"] == c["best_fixed"] else str(r["concurrency"])
            out.append(f"| {capacity} | {label} | {r['calls_per_s']} | {r['settled_calls_per_s']} | "
                       f"{r['median_latency_s']:.2f} | {r['timeouts']} |")
        bars.append(c)
    names = list(cap["capacities"])
    out += ["", "| bar | " + " | ".join(f"capacity {n}" for n in names) + " |", "|---|" + "---|" * len(names),
            "| `auto`'s throughput, of the best fixed setting's (≥ 0.95) | " + " | ".join(
                f"{c['auto_of_best_throughput']:.2f} (settled {c['auto_settled_of_best_throughput']:.2f})" for c in bars) + " |",
            "| its median latency, against that setting's (≤ 1.3×) | " + " | ".join(
                f"{c['auto_latency_of_best']:.2f}×" for c in bars) + " |",
            "| timeouts | " + " | ".join(str(next(r for r in c["rows"] if r["concurrency"] == "auto")["timeouts"])
                                         for c in bars) + " |", ""]
    for source in (cap, plain):
        if not source or "plain" not in source:
            continue
        rows = source["plain"]["rows"]
        pairs = [(f, a) for f, a in zip(rows[::2], rows[1::2])]
        out += [f"The plain simulator (a fixed 200 ms per answer, the 429-endpoint workload, 12,000 calls a run), "
                f"`{source['command']}`, {source['machine']['when']}: fixed 64 against `auto` with 64 as its maximum, "
                f"{len(pairs)} pair{'s' if len(pairs) > 1 else ''} run in turn:", "",
                "| fixed 64 calls/s | auto calls/s | auto of fixed | settled: fixed / auto |", "|---|---|---|---|"]
        out += [f"| {f['calls_per_s']} | {a['calls_per_s']} | {a['calls_per_s'] / f['calls_per_s']:.3f} | "
                f"{f['settled_calls_per_s']} / {a['settled_calls_per_s']} |" for f, a in pairs]
        out += ["", f"Together: `auto` at {source['plain']['auto_of_fixed']} of fixed (target: within 2 %).", ""]
    return out


THROUGHPUT_HEAD = ["| tool | C | L (ms) | req/s | of C/L | client CPU ms/call | peak RSS MB | ok |",
                   "|---|---|---|---|---|---|---|---|"]


# Writing personas: each commit in turn on one machine, the earlier ones from a worktree of it.
PERSONA_RUNS = [("personas-3000-before", "d8fd889: each answer hashed after the last answer of its chunk of "
                                         "1,024 came, and a kept one hashed twice"),
                ("personas-3000-prev", "c249cdd: each answer hashed as it comes, once"),
                ("personas-3000-window", "after: the shingles hashed in one numpy pass; the next persona asked as "
                                         "each answer is taken (a window of 1,024), not chunk by chunk")]


def personas_section() -> list[str]:
    runs = [(load(name), label) for name, label in PERSONA_RUNS]
    if not any(r for r, _ in runs):
        return []
    out = ["## Writing personas at scale (`bench/personas.py`)", "",
           "enpmr's persona stage and its MinHash de-duplication for N new personas, L = 200 ms, C = 64, a fresh "
           "cache each run; the earlier commits ran from a `git worktree` of each with this script copied in. "
           "Of C/L: the requests sent over the wall time, against C/L.", "",
           "| code | personas | asked | median s | runs s | of C/L (median) | when | command |",
           "|---|---|---|---|---|---|---|---|"]
    for r, label in runs:
        if r:
            out.append(f"| {label} | {r['personas']:,} | {r['runs'][0]['report']['generated']:,} | "
                       f"{r['median_seconds']} | {', '.join(str(x['seconds']) for x in r['runs'])} | "
                       f"{r['median_ratio_to_limit']} | {r['machine']['when']} | `{r['command']}` |")
    return [*out, ""]


def throughput_rows(runs: list[dict]) -> list[str]:
    return run_rows(
        runs,
        lambda r: (f"| {r['tool']} | {r['concurrency']} | {r['latency_ms']} | {r['requests_per_second']} | "
                   f"{r['ratio_to_limit']:.2f} | {r['cpu_ms_per_call']:.2f} | {r['peak_rss_mb']:.0f} | "
                   f"{r['ok']}/{r['calls']} |"),
        lambda r: f"| {r['tool']} | {r['concurrency']} | {r['latency_ms']} | not run: {r['error'][:80]} | | | | |")


# What the real-server tables do not say by themselves (2026-11-27, issue 53).
REAL_SERVER_NOTES = [
    "- 2026-11-28, third day: **published.** The emotions task at default settings (auto mode, auto concurrency, "
    "budgets, runaway cuts), the server on one thread (`--threads 1`: with two, on two cores shared with other "
    "suites at nice 19, ggml's threads waited on each other and generation fell to 2 tokens a second), ended in "
    "version 2 in 511 s: 28 calls, 154 completion tokens a call, the largest 613. Two answers looped on a "
    "passage of their own and were cut as runaways by the loop watch (a window nine-tenths text the answer had "
    "already written), where the day before one such item cost about 20 minutes of regrown budgets. Of the 10 "
    "items (5 scenes' fragments and queries) one passed: SmolLM2-135M writes scores outside 1-10, which "
    "llama.cpp's grammar from the schema does not bound (`schema`, 5), and names an emotion twice or leaves one "
    "out (`every_emotion_once`, 3); one item looped again after its repair (`runaway`, 1). stratmem-label "
    "failed in 96 s with nothing published: the model labels one or two of a pool's eight memories and stops "
    "(`labels_every_memory`, every attempt), so the instance is lost and the build refused, as a build should "
    "when a stage's every item fails.",
    "- 2026-11-28, second day, the emotions task at default settings with the other engineers' processes at "
    "nice 19 (the server and memsynth at 0): stopped at its 25-minute limit with 22 answers, then resumed from "
    "its cache (`--folder`) for 45 minutes more: 27 answers in all, nothing published. Each answer of about "
    "100-200 tokens took 5-12 s, but under the `json_object_schema` grammar some answers run to their budget "
    "(767 tokens) without ending, and not as whitespace or a repeated fragment of up to 64 characters, so the "
    "runaway watch does not stop them: memsynth reads them as cut off and asks again with the budget doubled "
    "toward the ceiling (768, 1,536, 3,072, 4,096, 4,096 tokens for one item, at 5-12 tokens a second once the "
    "context is long). One looping item costs about 20 minutes. Fixed since (third day): the watch also stops a "
    "window that is nine-tenths text the answer already wrote, and an answer cut off in such a loop is a runaway, "
    "not one to grow.",
    "- 2026-11-28, at default settings (`--concurrency auto`): both tasks failed in about 23 minutes with "
    "\"the endpoint failed a request 40 times in a row while answering others: the answer's stream ended "
    "before the answer did\". llama-cpp-python's server, by default (`interrupt_requests`), ends the answer "
    "it is streaming with `[DONE]` and no finish reason as soon as another request waits, so every request "
    "beyond one was cut and retried. memsynth now pins concurrency to one after two such cuts (and says so "
    "in the summary); the simulator plays it (`--interrupts`; tests/test_interrupting_server.py).",
    "- The 2026-11-27 22:42 run (`--concurrency 1`) is the one after that fix, on a machine running six other engineers' test "
    "suites (load 10-14 on 2 cores): the emotion scoring ran one request at a time for its 35 minutes and "
    "was stopped there, so nothing was published; its SIGINT still ended on asyncio's `Task pending` line "
    "(fixed since: memsynth.llm.loop lets the cancelled scoring unwind). A run on an idle machine is what "
    "remains to show a published version.",
    "- At `--concurrency auto` (memsynth's default) the emotions run was stopped by hand after about 8 "
    "minutes: about 300 requests sent, one answer kept. llama-cpp-python answers 200 at once and generates "
    "one request at a time; the streams queued behind it get no token for `llm.idle_timeout_s` (60 s), are "
    "given up on and sent again. Hence the run above at `--concurrency 1`.",
    "- The machine was shared with other test suites: the server generated 1.8 to 14 tokens a second "
    "(38 when idle), so the emotions run reached its 12-minute limit after 17 requests; `annotate` keeps "
    "no run, so nothing was published (and its SIGINT ends on an asyncio `Task pending` line, not one "
    "clear line).",
    "- No runaway: under `json_object` with the schema (llama-cpp-python 0.3.36), SmolLM2's answers all "
    "ended (`stop`) at 100 to 440 tokens; the 4095-token whitespace run of issue 53 (0.3.16) did not recur "
    "in these 25 calls. Budgets held: emotions.score 768, stratmem.label 1024.",
    "- stratmem labelling fails `labels_every_memory`: the model labels the first memories of a pool of "
    "six and stops (missing [5, 6], [3, 4, 5, 6]); two of three items dropped, the instance lost, the build "
    "refused. Prompt tokens read 0: llama-cpp-python sends no usage in a stream, and completion tokens are "
    "memsynth's estimate (four characters a token).",
]


def main() -> None:
    out = ["# Benchmark results", "",
           "Written by `python bench/report.py` from `bench/results/*.json`; each section names "
           "the command that produced it and the machine it ran on.", ""]
    throughput = load("throughput")
    if throughput:
        m = throughput["machine"]
        out += ["## Throughput against the endpoint's limit (`bench/throughput.py`)", "",
                f"`{throughput['command']}` — {throughput['calls']} structured calls per tool and "
                f"setting; {m['cores']} cores, {m['memory_gib']} GiB, Python {m['python']}, {m['when']}.", "",
                *THROUGHPUT_HEAD]
        out += throughput_rows(throughput["runs"])
        out.append("")
    streamed = load("throughput-streamed")
    if streamed:  # the same calls since answers come streamed (the default): the table above is non-streamed
        m = streamed["machine"]
        out += [f"Answers streamed (`llm.stream`, the default): `{streamed['command']}` — {m['when']}.", "",
                *THROUGHPUT_HEAD]
        out += throughput_rows(streamed["runs"])
        out.append("")
    # A small local model through memsynth: every real-server run kept, newest first, then the
    # notes that read them.
    reals = [r for r in (load(path.stem) for path in (BENCH / "results").glob("real-server-*.json")) if r]
    if reals:
        out += ["## A real server (`bench/real_server.py`)", ""]
    for real in sorted(reals, key=lambda r: r["machine"]["when"], reverse=True):
        m = real["machine"]
        out += [f"`{real['command']}` — {real['server']}; response_mode auto, concurrency "
                f"{real['runs'][0].get('concurrency', 'auto')}, stage budgets, runaway cuts; {m['cores']} cores, "
                f"{m['when']}.", "",
                "| task | exit | wall s | published | calls | tokens per call by stage (prompt / completion, "
                "largest, runaways) | failures by check | error |",
                "|---|---|---|---|---|---|---|---|"]
        for r in real["runs"]:
            if "task" not in r:  # a run of the earlier quickstart-per-mode script
                continue
            per_stage = "; ".join(f"{name} {u['prompt_per_call']} / {u['completion_per_call']}, {u['largest']}, "
                                  f"{u['runaways']}" for name, u in (r.get("by_stage") or {}).items())
            published = ", ".join(f"{k} {v}" for k, v in (r.get("published") or {}).items()) or "nothing"
            failures = ", ".join(f"{k}: {v}" for k, v in (r.get("failures_by_check") or {}).items()) or "none"
            out.append(f"| {r['task']} | {r['exit']} | {r.get('wall_s', '')} | {published} | {r.get('calls', '')} | "
                       f"{per_stage} | {failures} | {r.get('error', '')[:160].replace('|', '/')} |")
        out.append("")
    if reals:
        out += [*REAL_SERVER_NOTES, ""]
    configs = load("configs")
    if configs:
        m = configs["machine"]
        out += ["## Every shipped config at its stated size on the simulator (`bench/configs.py`)", "",
                f"`{configs['command']}` — {m['cores']} cores, {m['memory_gib']} GiB, {m['when']}.", "",
                "| config | recipe | personas asked / built | calls | failed items | personas that lost their chain "
                "| wall s | result |",
                "|---|---|---|---|---|---|---|---|"]
        out += run_rows(
            configs["runs"],
            lambda r: (f"| {r['config']} | {r['recipe']} | {r['personas_asked']} / {r['personas_built']} | "
                       f"{r['calls']:,} | {r['failed_items']} | {r.get('lost_personas', '')} | {r['wall_seconds']} "
                       "| built |"),
            lambda r: f"| {r['config']} | | | | | | {r.get('wall_seconds', '')} | not built: {r['error'][:100]} |")
        out.append("")
    builds = sorted((BENCH / "results").glob("build-*.json"))
    if builds:
        out += ["## Whole enpmr builds on the simulator (`bench/build.py`)", "",
                "| personas | run | wall s | requests | req/s | of C/L | cache hits | CPU ms/call | peak RSS MB | Prefect task runs |",
                "|---|---|---|---|---|---|---|---|---|---|"]
        notes = []
        for path in builds:
            b = json.loads(path.read_text())
            for run in ("first", "cached", "regenerate"):
                if run not in b:
                    continue
                r = b[run]
                ratio = "" if r["ratio_to_limit"] is None else f"{r['ratio_to_limit']:.2f}"
                label = f"regenerate {r['regenerated_personas']}" if run == "regenerate" else run
                out.append(f"| {b['personas']} | {label} | {r['wall_seconds']} | {r['requests_sent']} | "
                           f"{r['requests_per_second']} | {ratio} | {r['cache_hits']} | "
                           f"{r['cpu_ms_per_call']:.2f} | {r['peak_rss_mb']} | {r.get('prefect_task_runs', '')} |")
            m = b["machine"]
            notes.append(f"- {b['personas']} personas: `{b['command']}` — L={b['latency_ms']} ms, "
                         f"C={b['concurrency']}; warehouse {b['warehouse_mb_without_cache']} MB plus "
                         f"cache {b['cache_mb']} MB; {m['cores']} cores, {m['memory_gib']} GiB, {m['when']}.")
        out += ["", *notes, ""]
    out += whole_build_section()
    out += cpu_section()
    query = load("query")
    if query:
        m = query["machine"]
        out += ["## Queries on a built warehouse (`bench/query.py`)", "",
                f"`{query['command']}` — versions {query['versions']}; {m['cores']} cores, {m['when']}.", "",
                "| query | median ms | version |", "|---|---|---|"]
        for name, q in query["queries"].items():
            out.append(f"| {name} | {q['median_ms']} | {q['version']} |")
        out.append("")
    startup = load("startup")
    if startup:
        m = startup["machine"]
        out += ["## Fixed cost of a command (`bench/startup.py`)", "",
                f"`{startup['command']}` — median of {startup['repeat']} runs, wall seconds; "
                f"{m['cores']} cores, {m['when']}.", "", "| command | s |", "|---|---|"]
        out += [f"| {name} | {s} |" for name, s in startup["seconds"].items()]
        out.append("")
    out += light_section()
    out += paired_section()
    out += capacity_section()
    out += personas_section()
    scale = load("scale-cache")
    if scale:
        m = scale["machine"]
        out += ["## The response cache at scale (`bench/scale.py`)", "",
                f"`{scale['command']}` — synthetic logs (~270 bytes an entry), "
                f"index built once, then a fresh process opens the cache and looks up 20,000 present and "
                f"2,000 absent keys at random; page cache warm; {m['cores']} cores, {m['memory_gib']} GiB, "
                f"{m['when']}.", "",
                "| entries | logs GB | index GB | index build s | open ms | hit median / p99 ms | "
                "miss median / p99 ms | RSS after imports MB | peak RSS MB |", "|---|---|---|---|---|---|---|---|---|"]
        for r in scale["results"]:
            out.append(f"| {r['entries']:,} | {r['logs_gb']} | {r['index_gb']} | {r['index_build_s']} | "
                       f"{r['open_s'] * 1e3:.1f} | {r['hit_median_ms']:.3f} / {r['hit_p99_ms']:.3f} | "
                       f"{r['miss_median_ms']:.3f} / {r['miss_p99_ms']:.3f} | {r['rss_after_imports_mb']:.0f} | "
                       f"{r['peak_rss_mb']:.0f} |")
        out.append("")
    plan = load("scale-build")
    if plan:
        m, rss, rate, proj = plan["machine"], plan["rss_mb"], plan["calls_per_s"], plan["projection"]
        out += ["## A 10,000-persona build plan (`bench/scale_build.py`)", "",
                f"`{plan['command']}` — enpmr, served simulator ({plan['latency_ms']:.0f} ms an answer), "
                f"concurrency {plan['concurrency']}; {plan['calls_per_persona']} calls a persona (measured on "
                f"8), so {plan['planned_calls']:,} calls planned. Ran {plan['ran_s']:.0f} s "
                f"({plan['calls_done']:,} calls), then stopped with SIGINT ({plan['stopped_with']}); "
                f"{m['cores']} cores, {m['when']}. Steady = after the first quarter of the samples.", "",
                "| build RSS MB: first sample | steady min | steady max | last | calls/s steady mean (min–max) | "
                f"whole plan at {proj['rpm']:,.0f} RPM | at the simulator's rate |",
                "|---|---|---|---|---|---|---|",
                f"| {rss['first']:.0f} | {rss['steady_min']:.0f} | {rss['steady_max']:.0f} | {rss['last']:.0f} | "
                f"{rate['steady_mean']:.0f} ({rate['steady_min']:.0f}–{rate['steady_max']:.0f}) | "
                f"{proj['hours_at_rpm']} h | {proj['hours_at_simulator_rate']} h |", "",
                "| t s | RSS MB | calls/s in the window |", "|---|---|---|"]
        out += [f"| {s['t_s']:.0f} | {s['rss_mb']:.0f} | {s['calls_per_s']:.0f} |" for s in plan["samples"]]
        out.append("")
    from suite import section as suite_section  # bench/suite.py: the test suite's time by file

    # Runs back to back on the same files (a shared machine makes an old run no baseline).
    out += suite_section(["suite-before", "suite-after", "files-before", "files-after", "suitetime-before",
                          "suitetime-after", "docs-before", "docs-after", "suitetime-others-after", "suite-2026-11-28", "suite-2026-11-28-final", "suite-2026-11-28-n3",
                          "suite-2026-11-28-s4-n3-a", "suite-2026-11-28-s4-n2", "suite-2026-11-28-s4-final",
                          "suite-2026-11-28-s4-final2", "suite-2026-11-28-s5-a", "suite-2026-11-28-s5-final",
                          "suite-2026-11-28-s6-n3-b", "suite-2026-11-28-s6-final", "suite-2026-11-28-s6-final2",
                          "suite-2026-11-28-s6-final3", "suite-2026-11-28-s6-final4", "suite-2026-11-28-s7-n4",
                          "suite-2026-11-28-s7-final", "suite-2026-11-28-s7-final2", "suite-2026-11-28-s8-a", "suite-2026-11-28-s8-final", "suite-2026-11-28-s8-final2", "suite-2026-11-28-s8-final3", "suite-2026-11-28-s8-final4", "suite-2026-11-28-s8-final5", "suite-2026-11-28-s9-a", "suite-2026-11-28-s9-final", "suite-2026-11-28-s9-final2", "suite-2026-11-29-s10-a", "suite-2026-11-29-s10-b", "suite-2026-11-29-s10-c", "suite-2026-11-29-s11-a", "suite-2026-11-29-s11-final", "suite-2026-11-29-s11-final2", "suite-2026-11-29-s12-a", "suite-2026-11-29-s12-b", "suite-2026-11-29-s12-final", "suite-2026-11-29-s12-final2", "suite-2026-11-29-s12-final3", "suite-2026-11-29-s12-final4", "suite-2026-11-29-s13-a", "suite-2026-11-29-s13-final", "suite-2026-11-29-s13-final2", "suite-2026-11-29-s14-final", "suite-2026-11-29-s14-final2", "suite-2026-11-29-s15-final", "suite-2026-11-29-s15-final3",
                          "st2-wait-before", "st2-wait-after", "st2-ab-n2", "st2-ab-n3"])
    (BENCH / "RESULTS.md").write_text("\n".join(out))
    print((BENCH / "RESULTS.md").read_text())


if __name__ == "__main__":
    main()
