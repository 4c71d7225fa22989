"""catalog: postgres://… — the warehouse's DuckLake catalogs in a real PostgreSQL (issue 34):
every command reads them, machines publish at once without losing a version, a kill leaves
nothing half-made, and a folder of catalog files moves in with its history."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from memsynth.core.errors import MemsynthError
from memsynth.warehouse.catalog import list_datasets, list_versions, run_query
from memsynth.warehouse.catalogs import bind_catalog
from tests.conftest import ROOT, cli_json, memsynth_cli
from tests.test_warehouse import Row, _publish

QUICK = ["--llm", "simulator", "--personas", "1", "--no-progress", "--format", "json"]


def _quick_config(tmp_path: Path, **extra) -> Path:
    import yaml

    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    config["recipe_options"] = {**config.get("recipe_options", {}), "dialogues_per_persona": 1}
    config.update(extra)
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_build_on_a_postgres_catalog_is_read_by_every_command(tmp_path, postgres_url):
    """`--catalog` marks the warehouse; `datasets`, `versions` and `query` need only
    --warehouse after that, no catalog file is written, and a rebuild pays nothing."""
    wh = tmp_path / "wh"
    config = _quick_config(tmp_path)
    first = cli_json("build", str(config), "--warehouse", str(wh), "--catalog", postgres_url, *QUICK)
    assert first["version"] == 1
    assert json.loads((wh / "catalog.json").read_text()) == {"url": postgres_url}
    assert not list(wh.rglob("catalog.ducklake")) and list(wh.rglob("*.parquet"))
    listed = cli_json("datasets", "list", "--warehouse", str(wh), "--format", "json")
    assert [d["dataset"] for d in listed] == ["quickstart"]
    rows = cli_json("query", "SELECT count(*) AS n FROM personas", "--dataset", "quickstart",
                    "--warehouse", str(wh), "--format", "json")
    assert rows == [{"n": first["row_counts"]["personas"]}]
    again = cli_json("build", str(config), "--warehouse", str(wh), *QUICK)  # the marker names the database
    # ... whose version 1 the rebuild found equal: nothing changed, nothing published.
    assert again["unchanged"] and again["version"] == 1 and again["llm"]["requests"] == 0
    versions = cli_json("versions", "quickstart", "--warehouse", str(wh), "--format", "json")
    assert [v["version"] for v in versions] == [1]
    # Another database for the same warehouse is one line, not a second history.
    other = memsynth_cli("build", str(config), "--warehouse", str(wh), "--catalog", postgres_url + "x", *QUICK)
    assert other.returncode != 0 and f"keeps its catalogs in {postgres_url}" in other.stderr.strip().splitlines()[-1]


_CREATOR = """
import sys, time
sys.path.insert(0, {root!r})
import duckdb
from memsynth.warehouse.ducklake import attach, dataset_dir
root, first, rounds = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
for k in range(rounds):
    time.sleep(max(0.0, first + k * 0.5 - time.time()))  # every machine at the same moment
    con = duckdb.connect()
    try:
        attach(con, dataset_dir(root, f"race{{k}}"))
        con.execute("SELECT count(*) FROM duckdb_tables() WHERE database_name = 'lake'").fetchall()
    except Exception as exc:
        print(f"race{{k}}: {{exc}}")
    finally:
        con.close()
"""


def test_machines_creating_one_catalog_at_the_same_moment_all_open_it(tmp_path, postgres_url):
    """Four machines attach each of 8 new datasets' catalogs at the same moment: one creates
    its schema and tables, the others see them appear mid-way (PostgreSQL says "duplicate key
    value", or "relation ... already exists") and must open the whole catalog on trying again."""
    root = tmp_path / "wh"
    bind_catalog(root, postgres_url, [])
    script = tmp_path / "creator.py"
    script.write_text(_CREATOR.format(root=str(ROOT)), encoding="utf-8")
    first = time.time() + 3
    procs = [subprocess.Popen([sys.executable, str(script), str(root), str(first), "8"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    said = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err[-500:] for _, err in said]
    assert not any(out.strip() for out, _ in said), [out[:500] for out, _ in said]


def test_a_password_in_the_catalog_url_is_refused_and_written_nowhere(tmp_path):
    config = _quick_config(tmp_path, catalog="postgres://lab:sekrit-pw@127.0.0.1:9/lake")
    result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"), *QUICK)
    (line,) = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "PGPASSWORD" in line and "sekrit-pw" not in line, line
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or b"sekrit-pw" not in path.read_bytes() or path.name == "quick.yaml", path


def test_a_folder_warehouse_with_catalog_files_must_move_them_first(tmp_path, postgres_url):
    """Naming a database for a warehouse whose catalogs are files is refused with the command
    that moves them; `catalog move` keeps every version, and the warehouse grows on."""
    _publish(tmp_path, [Row(id=1, tags=["a"], extra={"k": 1})], 1)
    _publish(tmp_path, [Row(id=2, tags=[], extra={}), Row(id=3, tags=["b"], extra={})], 2)
    _publish(tmp_path, [Row(id=9, tags=[], extra={})], 3, dataset="e")
    before = {d: list_versions(tmp_path, d) for d in ("d", "e")}
    with pytest.raises(MemsynthError, match="memsynth catalog move"):
        from memsynth.warehouse.location import location_of

        bind_catalog(tmp_path, postgres_url, location_of(tmp_path).file_catalogs())

    moved = cli_json("catalog", "move", "--warehouse", str(tmp_path), "--to", postgres_url, "--format", "json")
    assert moved == [{"dataset": "d", "snapshots": 3}, {"dataset": "e", "snapshots": 2}]
    assert not list(tmp_path.glob("*/catalog.ducklake")) and (tmp_path / "d" / "catalog.ducklake.moved").is_file()
    assert {d: list_versions(tmp_path, d) for d in ("d", "e")} == before
    assert run_query(tmp_path, "d", "SELECT id FROM things ORDER BY id", version=1)[1] == [(1,)]
    assert _publish(tmp_path, [Row(id=4, tags=[], extra={})], 4)["version"] == 3
    assert run_query(tmp_path, "d", "SELECT id FROM things ORDER BY id", version=2)[1] == [(2,), (3,)]
    again = memsynth_cli("catalog", "move", "--warehouse", str(tmp_path), "--to", postgres_url)
    assert again.returncode == 1 and "already" in again.stderr


_MACHINE = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from memsynth.warehouse.objectstore import ObjectStore, bind
    from memsynth.warehouse.catalogs import bind_catalog
    from tests.test_warehouse import Row, _publish
    home, dataset, rows, start = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    bind(ObjectStore.parse("s3://lab/shared"), home)
    bind_catalog(home, {url!r}, [])
    while time.time() < start:
        time.sleep(0.002)
    try:
        published = _publish(home, [Row(id=i, tags=[], extra={{}}) for i in range(rows)], rows, dataset=dataset)
        print("published", published["version"])
    except Exception as exc:
        print("refused", exc)
""")


def test_machines_publishing_at_once_lose_no_version_and_readers_see_whole_ones(tmp_path, postgres_url, s3):
    """Rounds of four machines (own catalog folders, one bucket, one database) publishing at
    the same moment: two into one dataset, one each into two others. Every publish lands or
    is refused with one line; the versions have no gap and each holds its publisher's rows;
    a reader during the rounds only ever sees a whole version."""
    _client, env = s3
    script = tmp_path / "machine.py"
    script.write_text(_MACHINE.format(root=str(ROOT), url=postgres_url), encoding="utf-8")
    full_env = {**os.environ, **env}
    published: dict[str, dict[int, int]] = {"shared": {}, "a": {}, "b": {}}
    refusals: list[str] = []
    reads = 0
    reader_home = tmp_path / "reader"
    for n in range(5):
        start = time.time() + 2.5
        jobs = [("m1", "shared", 100 + n), ("m2", "shared", 200 + n), ("m3", "a", 300 + n), ("m4", "b", 400 + n)]
        procs = [(dataset, rows, subprocess.Popen(
            [sys.executable, str(script), str(tmp_path / home), dataset, str(rows), str(start)],
            env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)) for home, dataset, rows in jobs]
        while any(p.poll() is None for _, _, p in procs):
            if n and (reader_home / "catalog.json").exists():
                _, rows_seen, version = _count(reader_home, env)
                assert rows_seen == _rows_of(reader_home, env, version), (version, rows_seen)
                reads += 1
            time.sleep(0.05)
        for dataset, rows, proc in procs:
            out, errors = proc.communicate()
            assert proc.returncode == 0 and out.strip(), errors[-2000:]
            kind, _, said = out.strip().partition(" ")
            if kind == "published":
                published[dataset][int(said)] = rows
            else:
                assert "another machine published" in said and "nothing was published" in said, said
                refusals.append(said)
        if n == 0:
            _bind_reader(reader_home, postgres_url, env)
    for dataset, versions in published.items():
        assert sorted(versions) == list(range(1, len(versions) + 1)), (dataset, versions)
        listed = _with_env(env, list_versions, reader_home, dataset)
        assert [v["version"] for v in listed] == sorted(versions)
        for v in listed:  # each version holds exactly its publisher's rows
            assert v["row_counts"] == {"things": versions[v["version"]]}
    assert len(published["a"]) == len(published["b"]) == 5  # different datasets never collide
    assert len(published["shared"]) + len(refusals) == 10
    assert reads > 0


def _bind_reader(home: Path, url: str, env: dict[str, str]) -> None:
    from memsynth.warehouse.objectstore import ObjectStore, bind

    with _env(env):
        bind(ObjectStore.parse("s3://lab/shared"), home)
    bind_catalog(home, url, [])


def _count(home: Path, env: dict[str, str]):
    columns, rows, version = _with_env(env, run_query, home, "shared", "SELECT count(*) FROM things")
    return columns, rows[0][0], version


def _rows_of(home: Path, env: dict[str, str], version: int) -> int:
    listed = _with_env(env, list_versions, home, "shared")
    return next(v["row_counts"]["things"] for v in listed if v["version"] == version)


class _env:
    def __init__(self, values: dict[str, str]):
        self.values, self.saved = values, {}

    def __enter__(self):
        self.saved = {k: os.environ.get(k) for k in self.values}
        os.environ.update(self.values)

    def __exit__(self, *exc):
        for k, v in self.saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _with_env(env, fn, *args):
    with _env(env):
        return fn(*args)


_KILLED_WRITER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from tests.test_warehouse import Row, _publish
    for n in range(1, 200):
        _publish(Path({home!r}), [Row(id=i, tags=["x"] * 3, extra={{}}) for i in range(n * 500)], n)
        print(n, flush=True)
""")


@pytest.mark.parametrize("kind", ["file", "postgres"])
def test_a_publish_killed_at_any_moment_leaves_whole_versions_only(tmp_path, kind, request):
    """kill -9 in the middle of publishing: the versions before it are whole and readable,
    the one it was writing does not exist, and the next publish takes the next number."""
    if kind == "postgres":
        bind_catalog(tmp_path, request.getfixturevalue("postgres_url"), [])
    script = tmp_path / "writer.py"
    script.write_text(_KILLED_WRITER.format(root=str(ROOT), home=str(tmp_path)), encoding="utf-8")
    writer = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    done = 0
    while done < 3:  # a few versions in, then in the middle of the next one
        line = writer.stdout.readline()
        assert line, "the writer stopped by itself"
        done = int(line)
    time.sleep(0.15)
    writer.send_signal(signal.SIGKILL)
    writer.wait()
    versions = [v["version"] for v in list_versions(tmp_path, "d")]
    assert versions == list(range(1, len(versions) + 1)) and len(versions) >= done
    for v in versions:
        assert run_query(tmp_path, "d", "SELECT count(*) FROM things", version=v)[1] == [(v * 500,)]
    assert _publish(tmp_path, [Row(id=1, tags=[], extra={})], 999)["version"] == len(versions) + 1
    assert [d["latest_version"] for d in list_datasets(tmp_path)] == [len(versions) + 1]


def test_the_postgres_database_is_not_a_way_out_of_the_dataset(tmp_path, postgres_url):
    """A query sees the dataset's tables; the catalog database's other schemas and tables
    cannot be reached through DuckDB's postgres functions."""
    bind_catalog(tmp_path, postgres_url, [])
    _publish(tmp_path, [Row(id=1, tags=[], extra={})])
    con = duckdb.connect()
    try:
        from memsynth.warehouse.catalogs import load_postgres

        load_postgres(con)
        con.execute(f"ATTACH '{postgres_url}' AS pg (TYPE postgres)")
        con.execute("CREATE TABLE pg.public.secrets AS SELECT 'hunter2' AS pw")
    finally:
        con.close()
    for sql in [f"SELECT * FROM postgres_scan('{postgres_url}', 'public', 'secrets')",
                "SELECT * FROM postgres_query('__ducklake_metadata_lake', 'SELECT pw FROM public.secrets')",
                "SELECT * FROM __ducklake_metadata_lake.public.secrets",
                "SELECT * FROM query_table('__ducklake_metadata_lake.public.secrets')"]:
        with pytest.raises(MemsynthError):
            run_query(tmp_path, "d", sql)


def test_two_machines_building_one_dataset_at_once_lose_nothing_and_a_rerun_pays_nothing(
        tmp_path, postgres_url, s3):
    """Two builds of one dataset on two machines (own catalog folders and caches, one bucket,
    one database) at the same time: both versions land, or one is refused in one line and
    publishes nothing; built again, the refused one sends no request."""
    _client, env = s3
    config = _quick_config(tmp_path, warehouse="s3://lab/team", catalog=postgres_url)
    machines = [{**os.environ, **env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / m), "HOME": str(tmp_path / m)}
                for m in ("m1", "m2")]
    exe = Path(sys.executable).parent / "memsynth"
    # Both publish, though they build the same rows: the point is two writers at once.
    procs = [subprocess.Popen([str(exe), "build", str(config), *QUICK, "--publish-unchanged"], env=machine, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for machine in machines]
    results = [(p, *p.communicate(timeout=300)) for p in procs]
    landed = [json.loads(out)["version"] for p, out, _ in results if p.returncode == 0]
    refused = [machines[i] for i, (p, _, _) in enumerate(results) if p.returncode != 0]
    for p, _, errors in results:
        if p.returncode != 0:
            line = errors.strip().splitlines()[-1]
            assert "another machine published quickstart" in line and "nothing was published" in line, errors[-1500:]
    assert sorted(landed) == list(range(1, len(landed) + 1)) and landed
    for machine in refused:
        again = cli_json("build", str(config), *QUICK, "--publish-unchanged", env=machine, timeout=300)
        assert again["llm"]["requests"] == 0 and again["version"] == len(landed) + 1
    versions = cli_json("versions", "quickstart", "--warehouse", "s3://lab/team", "--format", "json", env=machines[0])
    assert [v["version"] for v in versions] == [1, 2]
    # gc of a machine's cache mirror keeps what the newest version used, whoever built it.
    swept = cli_json("cache", "gc", "--keep-versions", "1", "--warehouse", "s3://lab/team", "--cache-dir",
                     str(tmp_path / "m1" / "_cache"), "--no-progress", "--format", "json", env=machines[0])
    assert swept["keys_in_use"] > 0 and swept["entries_after"] >= swept["keys_in_use"], swept


def test_an_s3_warehouse_moves_its_catalogs_in_and_other_machines_follow(tmp_path, postgres_url, s3, monkeypatch):
    """`catalog move` on a bucket warehouse: the bucket's catalog copies go (no machine reads
    them again), and a second machine with $MEMSYNTH_CATALOG reads every version."""
    from memsynth.warehouse.objectstore import ObjectStore, bind

    client, env = s3
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    first = bind(ObjectStore.parse("s3://lab/old"), tmp_path / "m1")
    _publish(first, [Row(id=1, tags=[], extra={})], 1)
    _publish(first, [Row(id=2, tags=[], extra={}), Row(id=3, tags=[], extra={})], 2)
    keys = lambda: [o["Key"] for o in client.list_objects_v2(Bucket="lab").get("Contents", [])]  # noqa: E731
    assert "old/d/catalog.ducklake" in keys()
    moved = cli_json("catalog", "move", "--warehouse", "s3://lab/old", "--to", postgres_url, "--format", "json",
                     env={**env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / "m1")})
    assert moved == [{"dataset": "d", "snapshots": 3}]
    assert "old/d/catalog.ducklake" not in keys()
    second = {**env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / "m2"), "MEMSYNTH_CATALOG": postgres_url}
    versions = cli_json("versions", "d", "--warehouse", "s3://lab/old", "--format", "json", env=second)
    assert [(v["version"], v["row_counts"]) for v in versions] == [(1, {"things": 1}), (2, {"things": 2})]
    rows = cli_json("query", "SELECT count(*) AS n FROM things", "--dataset", "d", "--version", "1",
                    "--warehouse", "s3://lab/old", "--format", "json", env=second)
    assert rows == [{"n": 1}]
