"""The real CLI end to end: builds, versions, queries, faults, bad input."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import pytest

from memsynth.simulator.server import Faults
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, start_simulator, write_config
from tests.test_recipe_contract import check_versions_show

SECRET = "sk-memsynth-test-secret-0123456789abcdef"
RECIPE_TABLES = ("personas", "profiles", "life_themes", "memories", "memory_sessions",
                 "support_dialogues", "negatives", "quality_checks", "benchmark")


def _build(config: Path | str, warehouse: Path, *extra: str, env=None) -> dict:
    """`memsynth build` in this process: the tests that stop, refuse or time a build run the real one."""
    return cli_json_here("build", str(config), "--warehouse", str(warehouse), "--format", "json",
                         *extra, env=env)


def _count(warehouse: Path, dataset: str, table: str, version: int | None = None) -> int:
    args = ["query", f"SELECT count(*) AS n FROM {table}", "--dataset", dataset,
            "--warehouse", str(warehouse), "--format", "json"]
    if version is not None:
        args += ["--version", str(version)]
    return cli_json_here(*args)[0]["n"]


@pytest.mark.xdist_group("enpmr_build")  # with tests/test_enpmr_build.py: one quickstart build for both
def test_quickstart_builds_versions_and_queries(tmp_path, quickstart_build):
    import shutil

    wh = tmp_path / "wh"
    shutil.copytree(quickstart_build[0], wh)  # version 1: the session's quickstart build, left unchanged
    first = quickstart_build[1]
    assert first["version"] == 1 and first["failed_items"] == 0
    assert _count(wh, "quickstart", "life_themes") >= 30
    assert first["row_counts"]["llm_calls"] == first["llm"]["calls"] > 0

    second = _build(ROOT / "configs/quickstart.yaml", wh, "--llm", "simulator", "--personas", "4")
    assert second["version"] == 2
    # The three personas of version 1 come from the cache; only the new one is sent.
    assert second["llm"]["cache_hits"] == first["llm"]["calls"]
    assert second["llm"]["requests"] == second["llm"]["calls"] - first["llm"]["calls"] > 0
    assert _count(wh, "quickstart", "personas", version=1) == 3
    assert _count(wh, "quickstart", "personas") == 4

    # Built again, nothing changed: every answer from the cache and no version published.
    same = _build(ROOT / "configs/quickstart.yaml", wh, "--llm", "simulator", "--personas", "4")
    assert same["unchanged"] and same["version"] == 2 and same["llm"]["requests"] == 0
    assert same["row_counts"] == second["row_counts"]
    third = _build(ROOT / "configs/quickstart.yaml", wh, "--llm", "simulator", "--personas", "4",
                   "--publish-unchanged")
    assert not third["unchanged"] and third["version"] == 3 and third["llm"]["requests"] == 0
    assert third["row_counts"] == second["row_counts"]

    versions = cli_json_here("versions", "quickstart", "--warehouse", str(wh), "--format", "json")
    assert [v["version"] for v in versions] == [1, 2, 3]
    assert {"enpmr/profile.j2", "enpmr/life_themes.j2", "enpmr/blri.j2"} <= versions[0]["prompt_hashes"].keys()
    assert versions[1]["parent_version"] == 1
    # Every version describes itself (tests/test_recipe_contract.py); three share their texts.
    check_versions_show(wh, "quickstart", 2)
    listed = cli_json_here("datasets", "list", "--warehouse", str(wh), "--format", "json")
    assert listed[0]["dataset"] == "quickstart" and listed[0]["latest_version"] == 3

    rules = cli_json_here("query", """
        SELECT count(*) FILTER (WHERE start_date < DATE '2019-12-02' OR start_date > DATE '2024-12-02') AS out_of_window,
               min(n) AS fewest
        FROM life_themes, (SELECT persona_id AS p, count(*) AS n FROM life_themes GROUP BY 1)
        WHERE persona_id = p""", "--dataset", "quickstart", "--warehouse", str(wh), "--format", "json")
    assert rules == [{"out_of_window": 0, "fewest": rules[0]["fewest"]}] and rules[0]["fewest"] >= 10
    prefs = cli_json_here("query", "SELECT min(len(preferences)) AS p FROM profiles",
                          "--dataset", "quickstart", "--warehouse", str(wh), "--format", "json")
    assert prefs[0]["p"] >= 10

    stats = cli_json_here("cache", "stats", "--warehouse", str(wh), "--format", "json")
    assert stats["entries"] == second["llm"]["calls"]

    code, csv_out, _ = cli_here("query", "SELECT theme_id FROM life_themes ORDER BY 1 LIMIT 2",
                                "--dataset", "quickstart", "--warehouse", str(wh), "--format", "csv")
    assert code == 0 and csv_out.splitlines()[0] == "theme_id" and len(csv_out.splitlines()) == 3


# The first request is the build's capability probe; each fault then meets the build itself.
FAULT_MIX = Faults(rate_429=0.2, rate_500=0.1, rate_malformed=0.05, rate_truncated=0.05,
                   rate_dropped=0.02, rate_slow=0.02, slow_ms=1500, seed=11,
                   schedule=("ok", "429", "500", "malformed", "truncated", "dropped", "slow"))


def _rows(warehouse: Path, dataset: str, sql: str) -> list:
    return cli_json_here("query", sql, "--dataset", dataset, "--warehouse", str(warehouse), "--format", "json")


def _served_quickstart() -> dict:
    import yaml

    quickstart = yaml.safe_load((ROOT / "configs/quickstart.yaml").read_text())
    # A served simulator answers from the stage variables; short backoff keeps the test quick.
    quickstart["llm"].update(stage_variables=True, retry_base_s=0.05)
    return quickstart


@pytest.fixture(scope="module")
def clean_quickstart(tmp_path_factory) -> tuple[Path, dict]:
    """The served quickstart built with no fault: the rows every faulty build must match (one
    build for both of the fault test's cases)."""
    import yaml

    folder = tmp_path_factory.mktemp("clean-quickstart")
    config = folder / "quickstart.yaml"
    config.write_text(yaml.safe_dump(_served_quickstart()))
    sim = start_simulator(latency_ms=10)
    try:
        summary = _build(config, folder / "clean", env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": SECRET})
    finally:
        sim.stop()
    return folder / "clean", summary


@pytest.mark.xdist_group("clean-quickstart")  # both cases on one worker: one clean build between them
@pytest.mark.parametrize("client,catalog", [("openai", "file"), ("direct", "postgres")])
def test_the_quickstart_through_every_fault_gives_every_row_and_a_rerun_sends_nothing(tmp_path, client, catalog,
                                                                                    request, clean_quickstart):
    """20% 429, 10% 500, 5% malformed bodies, 5% cut-off answers, 2% dropped connections and
    2% slow answers over the whole quickstart build, through either client, into a warehouse
    whose catalog is a file or a PostgreSQL database: not one item lost or changed."""
    import yaml

    where = ("--catalog", request.getfixturevalue("postgres_url")) if catalog == "postgres" else ()
    clean_wh, clean = clean_quickstart

    upstream = start_simulator(latency_ms=10)
    proxy = start_simulator(upstream=upstream.base_url, faults=FAULT_MIX)
    try:
        quickstart = _served_quickstart()
        env = {"OPENAI_BASE_URL": proxy.base_url, "OPENAI_API_KEY": SECRET}
        quickstart["llm"]["client"] = client  # how calls are sent is not hashed: same cache keys
        config = tmp_path / "faulty.yaml"
        config.write_text(yaml.safe_dump(quickstart))
        faulty = _build(config, tmp_path / "faulty", *where, env=env)
        faults = proxy.simulator.counters.by_outcome
        assert all(faults.get(k) for k in FAULT_MIX.schedule), faults
        assert faulty["llm"]["retries"] > 0 and faulty["failed_items"] == clean["failed_items"] == 0
        for table in RECIPE_TABLES:
            assert faulty["row_counts"][table] == clean["row_counts"][table], table
        for sql in ("SELECT memory_id, text FROM memories ORDER BY 1",
                    "SELECT memory_id, turn_index, content FROM memory_sessions ORDER BY 1, 2",
                    "SELECT dialogue_id, turns, negative_memory_ids FROM benchmark ORDER BY 1"):
            assert _rows(tmp_path / "faulty", "quickstart", sql) == _rows(clean_wh, "quickstart", sql)
        assert upstream.simulator.counters.peak_in_flight <= quickstart["llm"]["concurrency"]

        before = upstream.simulator.counters.requests, proxy.simulator.counters.requests
        again = _build(config, tmp_path / "faulty", *where, env=env)
        assert (upstream.simulator.counters.requests, proxy.simulator.counters.requests) == before
        # Nothing changed, faults or not: the faulty build's version stays the current one.
        assert again["llm"]["requests"] == 0 and again["unchanged"] and again["version"] == 1
        assert again["row_counts"] == faulty["row_counts"]
    finally:
        proxy.stop()
        upstream.stop()
    for path in (*tmp_path.rglob("*"), *clean_wh.parent.rglob("*")):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"API key leaked into {path}"


def test_too_many_failures_publish_nothing(tmp_path):
    sim = start_simulator()
    sim.simulator.script("enpmr_life_themes", ["not json"] * 50)
    sim.simulator.record = True
    try:
        config = write_config(tmp_path / "c.yaml", dataset="failing",
                              llm={"model": "m", "stage_variables": True, "repairs": 1, "retry_base_s": 0.01})
        result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"),
                              env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x",
                                   "MEMSYNTH_MODEL": "override-model"})
    finally:
        sim.stop()
    # MEMSYNTH_MODEL overrides llm.model; every request carried a json_schema response format.
    assert {b["model"] for b in sim.simulator.recorded} == {"override-model"}
    assert {b["response_format"]["type"] for b in sim.simulator.recorded} == {"json_schema"}
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error:") and "nothing was published" in last and "Traceback" not in result.stderr
    assert not (tmp_path / "wh" / "failing" / "catalog.ducklake").exists()
    # Nothing is left staged: what the build staged is its kept run now, and the line names it.
    assert not (tmp_path / "wh" / "failing" / "_staging").exists()
    kept = [p.relative_to(tmp_path / "wh" / "failing") for p in (tmp_path / "wh").rglob("*.parquet")]
    assert kept and {p.parts[0] for p in kept} == {"_runs"}
    assert f"[run {kept[0].parts[1]}: memsynth runs failing]" in last
    assert list((tmp_path / "wh" / "_cache").glob("*.jsonl")), "paid calls must stay cached"


@pytest.mark.parametrize("content,needle", [
    (None, "config file not found"),
    ("dataset: [unclosed", "not valid YAML"),
    ("dataset: ok\nllm: {concurrency: 0}", "llm.concurrency"),
    ("dataset: ok\nsurprise: 1", "surprise"),
    ("dataset: ok\nrecipe: nope", "recipe"),
    ("dataset: Bad Name", "dataset"),
    ("dataset: ok\npersonas: {count: 0}", "personas.count"),
    ("dataset: ok\nrecipe_options: {need_proportions: {XX: 1}}", "unknown needs"),
])
def test_bad_config_is_one_clear_line(tmp_path, content, needle):
    path = tmp_path / "c.yaml"
    if content is not None:
        path.write_text(content)
    result = memsynth_cli("build", str(path), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"))
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], result.stderr
    assert not (tmp_path / "wh" / "ok").exists()


def test_missing_api_key_is_one_clear_line(tmp_path):
    config = write_config(tmp_path / "c.yaml", llm={"api_key_env": "MEMSYNTH_NO_SUCH_KEY"})
    result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 1 and "MEMSYNTH_NO_SUCH_KEY" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_served_simulator_without_stage_variables_is_one_clear_line(tmp_path):
    config = write_config(tmp_path / "c.yaml", llm={"model": "m", "retry_base_s": 0.01})
    sim = start_simulator()
    try:
        result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"),
                              env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"})
    finally:
        sim.stop()
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "llm.stage_variables: true" in lines[0], result.stderr
    assert "nothing was published" in lines[0]


def test_personas_import_validates_and_feeds_builds(tmp_path):
    good = tmp_path / "mine.jsonl"
    good.write_text('{"persona": "A lighthouse keeper who paints"}\n\n{"persona": "A beekeeper"}\n')
    code, out, _ = cli_here("personas", "import", str(good), "--warehouse", str(tmp_path / "wh"))
    assert code == 0 and "read 2 personas, 2 new" in out
    assert "0 new" in cli_here("personas", "import", str(good), "--warehouse", str(tmp_path / "wh"))[1]

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"persona": "fine"}\n{"persona": 3}\n')
    result = memsynth_cli("personas", "import", str(bad), "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 1 and "bad.jsonl:2:" in result.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"persona": "fine"}\n{"persona": "x"\n')
    result = memsynth_cli("personas", "import", str(broken), "--warehouse", str(tmp_path / "wh"))
    assert result.returncode == 1 and "broken.jsonl:2:" in result.stderr

    from memsynth.core.config import BuildConfig
    from memsynth.generation.personas import persona_pool

    pool = persona_pool(BuildConfig(dataset="x"), tmp_path / "wh")
    assert pool[-1].description == "A beekeeper" and pool[-1].source == "import:mine.jsonl"
    assert len(pool) == 58


def test_query_refusals_are_one_line(tmp_path):
    result = memsynth_cli("query", "DROP TABLE x", "--dataset", "none", "--warehouse", str(tmp_path))
    assert result.returncode == 1 and "refused a DROP statement" in result.stderr


def test_help_explains_every_build_flag():
    code, out, _ = cli_here("build", "--help")
    assert code == 0
    for flag in ("--llm", "--personas", "--concurrency", "--warehouse", "--no-cache", "--format"):
        assert flag in out


def test_build_writes_personas_when_the_pool_is_short(tmp_path):
    config = write_config(tmp_path / "c.yaml", dataset="synth",
                          personas={"count": 3, "include_seed": False},
                          recipe_options={"dialogues_per_persona": 0})
    summary = _build(config, tmp_path / "wh", "--llm", "simulator")
    report = summary["persona_synthesis"]
    assert report["kept"] == 3 and report["generated"] >= 3
    assert {"exact_duplicates", "near_duplicates"} <= report.keys()
    rows = cli_json_here("query", "SELECT source, count(DISTINCT persona_id) n FROM personas GROUP BY 1",
                         "--dataset", "synth", "--warehouse", str(tmp_path / "wh"), "--format", "json")
    assert rows == [{"source": "synthesized", "n": 3}]
    assert summary["row_counts"]["profiles"] == 3


def test_unreachable_endpoint_is_one_clear_line(tmp_path):
    config = write_config(tmp_path / "c.yaml", llm={"base_url": "http://127.0.0.1:9/v1",
                                                     "max_attempts": 2, "retry_base_s": 0.01,
                                                     "timeout_s": 2})
    result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"),
                          env={"OPENAI_API_KEY": "x"})
    assert result.returncode == 1, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith("error: cannot reach the endpoint at http://127.0.0.1:9/v1: cannot connect")
    assert "timed out" not in lines[-1].lower()  # a refused connection is reported as one
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "wh" / "t" / "catalog.ducklake").exists()


def _children(pid: int) -> list[int]:
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
@pytest.mark.xdist_group("process-signals")
@pytest.mark.parametrize("sig", ["SIGKILL", "SIGTERM", "SIGINT"])
def test_a_killed_or_stopped_build_loses_only_calls_in_flight_and_leaves_no_process(tmp_path, sig):
    """kill -9 mid-build keeps every paid call; SIGTERM and Ctrl-C stop within seconds with
    one line. Either way nothing is published, Prefect's server goes too, and the re-run
    sends only the rest."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT, signals_as_a_shell_gives_them

    sim = start_simulator(latency_ms=40)
    try:
        # One shard at a time: two more wait in the queue when the signal comes, and must
        # not start after it.
        config = write_config(tmp_path / "c.yaml", dataset="killed", personas={"count": 3}, max_workers=1,
                              llm={"model": "m", "stage_variables": True, "concurrency": 4})
        env = {**os.environ, "OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        env.pop("PREFECT_API_URL", None)  # the build starts its own server: it must die with the build
        exe = Path(sys.executable).parent / "memsynth"
        proc = subprocess.Popen([str(exe), "build", str(config), "--warehouse", str(tmp_path / "wh"),
                                 "--no-progress"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=signals_as_a_shell_gives_them)
        cache = tmp_path / "wh" / "_cache"
        deadline = time.time() + 120
        while time.time() < deadline:
            lines = sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl")) if cache.exists() else 0
            if lines >= 40:
                break
            time.sleep(0.2)
        children = _children(proc.pid)
        assert children, "the build runs Prefect's API server as its child"
        sent_at_signal = sim.simulator.counters.requests
        os.kill(proc.pid, getattr(signal, sig))
        _, stderr = proc.communicate(timeout=120)  # a hang guard: how soon is bench/stop_time.py's
        durable = sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl"))
        sent_before = sim.simulator.counters.requests
        # At most the calls in flight: 4 at the endpoint, and up to 4 answered whose group
        # commit had not reached the disk (a slot frees when its answer arrives).
        assert durable >= 40 and sent_before - durable <= 8
        # A queued shard (about 300 calls) that started after the signal would show here.
        assert sent_before - sent_at_signal <= 8, (sent_at_signal, sent_before)
        assert not (tmp_path / "wh" / "killed" / "catalog.ducklake").exists()
        if sig != "SIGKILL":
            assert proc.returncode == 128 + getattr(signal, sig), (proc.returncode, stderr[-800:])
            assert stderr.strip().splitlines()[-1].startswith(f"error: stopped by {sig}"), stderr
            assert "Traceback" not in stderr
        deadline = time.time() + 10
        while any(_alive(c) for c in children) and time.time() < deadline:
            time.sleep(0.1)
        assert not any(_alive(c) for c in children), "a process outlived the build"
        if sig == "SIGKILL":  # no exit handler ran: its server's scratch database stays, until a server starts
            import tempfile

            from memsynth.build import prefect_api

            left = list(Path(tempfile.gettempdir()).glob(f"{prefect_api.SCRATCH_PREFIX}{proc.pid}-*"))
            assert left and prefect_api.sweep_scratch() and not any(p.exists() for p in left)

        sim.simulator.latency_s = 0  # the latency only had to leave calls in flight at the signal
        # What the killed build had written to its sockets may still be read by the server after it
        # died (s12-b: two such requests came in during the rerun): the rerun is counted from when
        # the server has read everything the dead build sent.
        settled, deadline = sim.simulator.counters.requests, time.time() + 10
        while time.time() < deadline:
            time.sleep(0.5)
            if sim.simulator.counters.requests == settled:
                break
            settled = sim.simulator.counters.requests
        summary = _build(config, tmp_path / "wh", env={"OPENAI_BASE_URL": sim.base_url,
                                                      "OPENAI_API_KEY": "x"})
        assert summary["version"] == 1
        assert summary["llm"]["cache_hits"] >= durable
        assert summary["llm"]["requests"] == summary["llm"]["calls"] - summary["llm"]["cache_hits"]
        assert sim.simulator.counters.requests - settled == summary["llm"]["requests"]
        assert not list((tmp_path / "wh" / "killed").glob("_staging/*")), "stale staging swept"
    finally:
        sim.stop()


@pytest.mark.parametrize("name", ["quickstart", "enpmr", "pal"])
def test_shipped_configs_are_valid(name):
    from memsynth.build.shards import recipe_for
    from memsynth.generation.registry import load_config

    config = load_config(ROOT / "configs" / f"{name}.yaml")
    assert recipe_for(config).name == config.recipe


def test_a_warehouse_is_a_folder_that_can_be_moved_copied_and_named_relatively(tmp_path):
    """The catalog keeps no absolute path: build with one, query and build with another."""
    import shutil

    config = write_config(tmp_path / "c.yaml", dataset="portable", personas={"count": 1})
    built = _build(config, tmp_path / "wh", "--llm", "simulator")
    expected = built["row_counts"]["memories"]
    code, out, err = cli_here("query", "SELECT count(*) AS n FROM memories", "--dataset", "portable",
                              "--warehouse", "wh", "--format", "json", cwd=tmp_path)
    assert code == 0, err  # a traceback fails the test in cli_here
    assert out.count(str(expected)) == 1
    shutil.move(tmp_path / "wh", tmp_path / "moved")
    assert _count(tmp_path / "moved", "portable", "memories") == expected
    shutil.copytree(tmp_path / "moved", tmp_path / "copy")
    again = _build(config, tmp_path / "copy", "--llm", "simulator", "--personas", "2")
    assert again["version"] == 2 and again["llm"]["cache_hits"] == built["llm"]["calls"]
    assert _count(tmp_path / "copy", "portable", "personas") == 2
    assert _count(tmp_path / "moved", "portable", "personas") == 1  # the copy wrote into itself only


def _bad_inputs(tmp: Path) -> list[tuple[str, list[str]]]:
    (tmp / "latin1.yaml").write_bytes(b"dataset: ok\ndescription: caf\xe9\n")
    (tmp / "latin1.jsonl").write_bytes(b'{"persona": "caf\xe9 owner"}\n')
    (tmp / "huge.jsonl").write_text(json.dumps({"persona": "word " * 5000}) + "\n")
    (tmp / "surrogate.jsonl").write_text('{"persona": "a baker \\ud800 in Leeds"}\n')
    (tmp / "surrogate.yaml").write_text("dataset: ok\npersonas: {files: [surrogate.jsonl]}\n")
    (tmp / "personas.yaml").write_text("dataset: ok\npersonas: {files: [latin1.jsonl]}\n")
    (tmp / "count.yaml").write_text("dataset: ok\npersonas: {count: 100000000000000000000}\n")
    (tmp / "brackets.yaml").write_text("dataset: '[red]x'\n")
    (tmp / "file").write_text("a file, not a folder")
    quickstart = str(ROOT / "configs/quickstart.yaml")
    return [
        ("not UTF-8", ["build", str(tmp / "latin1.yaml"), "--llm", "simulator", "--warehouse", str(tmp / "w")]),
        ("latin1.jsonl: not UTF-8", ["build", str(tmp / "personas.yaml"), "--llm", "simulator",
                                     "--warehouse", str(tmp / "w")]),
        ("personas.count", ["build", str(tmp / "count.yaml"), "--llm", "simulator", "--warehouse", str(tmp / "w")]),
        ("'^[a-z0-9][a-z0-9_-]{0,63}$'", ["build", str(tmp / "brackets.yaml"), "--warehouse", str(tmp / "w")]),
        ("file/quickstart: Not a directory", ["build", quickstart, "--llm", "simulator", "--warehouse", str(tmp / "file")]),
        ("latin1.jsonl: not UTF-8", ["personas", "import", str(tmp / "latin1.jsonl"), "--warehouse", str(tmp / "w")]),
        ("at most 4,000", ["personas", "import", str(tmp / "huge.jsonl"), "--warehouse", str(tmp / "w")]),
        ("surrogate.jsonl:1: not valid Unicode text", ["personas", "import", str(tmp / "surrogate.jsonl"),
                                                        "--warehouse", str(tmp / "w")]),
        ("surrogate.jsonl:1: not valid Unicode text", ["build", str(tmp / "surrogate.yaml"), "--llm", "simulator",
                                                        "--warehouse", str(tmp / "w")]),
        ("file/_personas: Not a directory", ["personas", "import", str(ROOT / "data/personas/seed_personas.jsonl"),
                                             "--warehouse", str(tmp / "file")]),
        ("invalid dataset name '[red]x'", ["query", "SELECT 1", "--dataset", "[red]x", "--warehouse", str(tmp / "w")]),
        ("no dataset 'nope'", ["versions", "nope", "--warehouse", str(tmp / "file")]),
        ("no release folder", ["release", "verify", str(tmp / "nowhere")]),
        ("no dataset 'nope'", ["release", "create", "--dataset", "nope", "--tag", "v1.0.0", "--out", str(tmp / "r"),
                               "--warehouse", str(tmp / "w")]),
    ]


def test_bad_input_to_any_command_is_one_line_and_no_traceback(tmp_path):
    for needle, args in _bad_inputs(tmp_path):
        result = memsynth_cli(*args, env={"OPENAI_API_KEY": "x"})
        output = result.stdout + result.stderr
        assert result.returncode != 0, args
        assert "Traceback" not in output, (args, output[-3000:])
        lines = result.stderr.strip().splitlines()  # progress steps may come first
        assert [line for line in lines if "error" in line.lower()] == lines[-1:], (args, result.stderr)
        assert lines[-1].startswith("error: ") and needle in lines[-1], (args, result.stderr)


def test_a_killed_regeneration_rerun_sends_only_the_rest_and_matches_an_uninterrupted_one(tmp_path, monkeypatch):
    """kill -9 in the middle of a regenerating build: the re-run pays no regenerated call
    twice and publishes what a regeneration that was never interrupted publishes."""
    import os
    import signal
    import subprocess
    import sys
    import time

    from memsynth.build.regenerate import RegenerationRequest
    from memsynth.build.run import BuildOptions, run_build
    from memsynth.generation.registry import load_config
    from memsynth.warehouse.catalog import run_query
    from tests.conftest import ROOT

    sim = start_simulator(latency_ms=20)
    try:
        monkeypatch.setenv("OPENAI_BASE_URL", sim.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "x")
        wh, clean = tmp_path / "wh", tmp_path / "clean"
        config = write_config(tmp_path / "c.yaml", dataset="regen", personas={"count": 1},
                              llm={"model": "m", "stage_variables": True, "concurrency": 16})

        def build(root: Path, *ids: str) -> dict:  # in this process: its Prefect server is shared
            return run_build(load_config(config), BuildOptions(
                warehouse=str(root), progress=False, regeneration=RegenerationRequest(persona_ids=list(ids))))

        for root in (wh, clean):
            build(root)
        target = run_query(wh, "regen", "SELECT min(persona_id) FROM personas")[1][0][0]
        cache = wh / "_cache"
        before = sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl"))
        proc = subprocess.Popen([str(Path(sys.executable).parent / "memsynth"), "build", str(config),
                                 "--warehouse", str(wh), "--no-progress", "--regenerate", target, "--concurrency", "4"],
                                env=dict(os.environ), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 120
        while time.time() < deadline:
            if sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl")) >= before + 40:
                break
            time.sleep(0.2)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(30)
        paid = sum(f.read_bytes().count(b"\n") for f in cache.glob("*.jsonl")) - before
        assert paid >= 40

        resumed, uninterrupted = build(wh, target), build(clean, target)
        assert resumed["version"] == uninterrupted["version"] == 2
        assert resumed["llm"]["requests"] <= uninterrupted["llm"]["requests"] - paid + 4
        for table in ("memories", "memory_sessions", "support_dialogues", "benchmark"):
            sql = f"SELECT * FROM {table} ORDER BY ALL"
            assert run_query(wh, "regen", sql)[1] == run_query(clean, "regen", sql)[1], table
    finally:
        sim.stop()


@pytest.mark.parametrize("flag", ["--personas", "--add-personas"])
def test_persona_counts_are_bounded_as_the_config_is(tmp_path, flag):
    config = write_config(tmp_path / "c.yaml", dataset="big")
    result = memsynth_cli("build", str(config), "--llm", "simulator", flag, str(10**20),
                          "--warehouse", str(tmp_path / "wh"))
    assert result.returncode != 0 and "1<=x<=1000000" in result.stderr
    assert not (tmp_path / "wh").exists()


@pytest.mark.xdist_group("process-signals")
def test_sigterm_stops_persona_writing_with_what_was_in_flight(tmp_path):
    """A million personas to write: SIGTERM while they are being asked for ends the build with
    one line, as it does mid-shard; no request starts after it but those already queued for a
    free slot. (How soon it ends is measured in bench/stop_time.py, not asserted here.)"""
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.conftest import ROOT

    sim = start_simulator(latency_ms=50)
    try:
        config = write_config(tmp_path / "c.yaml", dataset="many", personas={"count": 1_000_000, "include_seed": False},
                              llm={"model": "m", "stage_variables": True, "concurrency": 16})
        env = {**os.environ, "OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        env.pop("PREFECT_API_URL", None)
        exe = Path(sys.executable).parent / "memsynth"
        proc = subprocess.Popen([str(exe), "build", str(config), "--warehouse", str(tmp_path / "wh"),
                                 "--no-progress"], env=env, cwd=ROOT,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 120
        while sim.simulator.counters.requests < 200 and time.time() < deadline:
            time.sleep(0.2)
        assert sim.simulator.counters.requests >= 200, "persona writing never started"
        at_signal = sim.simulator.counters.requests
        os.kill(proc.pid, signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)  # a hang guard only: unstopped, it would write for hours
        after = sim.simulator.counters.requests - at_signal
        assert proc.returncode == 128 + signal.SIGTERM, (proc.returncode, stderr[-800:])
        assert stderr.strip().splitlines()[-1].startswith("error: stopped by SIGTERM"), stderr[-500:]
        assert "Traceback" not in stderr
        # 16 in flight, each answered in 50 ms: a handler that took a whole second to run on a
        # loaded machine lets 320 more through; a build that went on writing, tens of thousands.
        assert after <= 2_000, after
    finally:
        sim.stop()


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_versions_of_a_dataset_with_no_published_version_is_an_error(tmp_path, fmt):
    import duckdb

    from memsynth.warehouse.ducklake import attach, dataset_dir

    dataset_dir(tmp_path, "empty").mkdir(parents=True)
    con = duckdb.connect()
    attach(con, dataset_dir(tmp_path, "empty"))  # a catalog whose first publish never committed
    con.close()
    result = memsynth_cli("versions", "empty", "--warehouse", str(tmp_path), "--format", fmt)
    assert result.returncode == 1 and "has no published version yet" in result.stderr


def refused_before_prefect(*args: str, **kwargs) -> subprocess.CompletedProcess[str]:
    """Run memsynth with Python's import log on; fail if Prefect was imported (its import, and
    its server's start, take seconds), and hand back the run with that log taken out."""
    result = memsynth_cli(*args, env={"PYTHONPROFILEIMPORTTIME": "1", **kwargs.pop("env", {})}, **kwargs)
    lines = result.stderr.splitlines(keepends=True)
    imported = [line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")]
    assert len(imported) > 100, "no import log"  # memsynth's own imports are there
    assert not [m for m in imported if m.split(".")[0] == "prefect"], "Prefect was imported"
    result.stderr = "".join(line for line in lines if not line.startswith("import time:"))
    return result


def test_a_mistyped_command_line_is_one_line_with_exit_2_and_a_bad_stage_is_refused_at_once(tmp_path):
    for args in (["build", str(ROOT / "configs/quickstart.yaml"), "--personas", "0"], ["query"], ["nosuch"],
                 ["build", str(ROOT / "configs/quickstart.yaml"), "--bogus-flag"]):
        result = memsynth_cli(*args)
        lines = result.stderr.strip().splitlines()
        assert result.returncode == 2 and len(lines) == 1, (args, result.stderr)
        assert lines[0].startswith("error: ") and "--help`)" in lines[0]
    result = refused_before_prefect("build", str(ROOT / "configs/quickstart.yaml"), "--llm", "simulator",
                                    "--regenerate", "p-x", "--from-stage", "nosuch", "--warehouse", str(tmp_path))
    assert result.returncode == 1 and "--from-stage 'nosuch': not a stage of enpmr" in result.stderr
    config = write_config(tmp_path / "c.yaml", dataset="early", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0})
    _build(config, tmp_path / "wh", "--llm", "simulator")
    for args, needle in ((["--regenerate", "p-nobody"], "not personas of early version 1: p-nobody"),
                         (["--where", "SELECT 'x' FROM nowhere"], "query failed")):
        result = refused_before_prefect("build", str(config), "--llm", "simulator", "--warehouse",
                                        str(tmp_path / "wh"), *args)
        assert result.returncode == 1 and needle in result.stderr.strip().splitlines()[-1], result.stderr


def test_a_build_leaves_nothing_in_prefects_home(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    config = write_config(tmp_path / "c.yaml", dataset="clean", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0})
    import os
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(home), "PREFECT_HOME": str(home / ".prefect")}
    env.pop("PREFECT_API_URL", None)  # the build starts its own server, as a user's does
    result = subprocess.run([str(Path(sys.executable).parent / "memsynth"), "build", str(config), "--llm", "simulator",
                             "--warehouse", str(tmp_path / "wh"), "--no-progress"],
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not list(home.rglob("prefect.db*")), "Prefect's database belongs to the build's own server"
    assert not list((home / ".prefect").rglob("*.toml")), "nor its note of the block types it registered"
    assert not [p for p in Path(tempfile.gettempdir()).glob("memsynth-prefect-*")
                if p.stat().st_mtime > home.stat().st_mtime], "its temporary database is removed"


def test_tables_at_80_columns_cut_no_name(tmp_path):
    config = write_config(tmp_path / "c.yaml", dataset="narrow", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0})
    _build(config, tmp_path / "wh", "--llm", "simulator")
    narrow = memsynth_cli("versions", "narrow", "--warehouse", str(tmp_path / "wh"), env={"COLUMNS": "80"})
    assert narrow.returncode == 0 and "…" not in narrow.stdout
    assert "── row 1 of 1 ──" in narrow.stdout and "snapshot_id  1" in narrow.stdout
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80
    wide = memsynth_cli("versions", "narrow", "--warehouse", str(tmp_path / "wh"), env={"COLUMNS": "250"})
    assert "snapshot_id" in wide.stdout and "── row" not in wide.stdout and "…" not in wide.stdout
    few = memsynth_cli("query", "SELECT 'a rather long value that will have to wrap somewhere' AS v, 1 AS n",
                       "--dataset", "narrow", "--warehouse", str(tmp_path / "wh"), env={"COLUMNS": "40"})
    assert "…" not in few.stdout and max(len(line) for line in few.stdout.splitlines()) <= 40


@pytest.mark.parametrize("level", ["WARNING", "INFO"])
def test_prefects_note_about_unsent_events_at_exit_is_shown_only_when_verbose(level):
    """Prefect's "EventsWorker - Still processing items" at exit (issue 31 item 12) is not for a
    memsynth user; `-v` (PREFECT_LOGGING_LEVEL=INFO) shows it again."""
    import os
    import subprocess
    import sys

    code = ("import memsynth, logging\n"
            "from prefect.logging.configuration import setup_logging\n"
            "setup_logging()\n"
            "logging.getLogger('EventsWorker').warning('Still processing items: 1 items remaining...')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**env, "PREFECT_LOGGING_LEVEL": level})
    assert done.returncode == 0, done.stderr
    assert ("Still processing items" in done.stdout + done.stderr) == (level == "INFO")
