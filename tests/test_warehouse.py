"""The DuckLake warehouse: offline extension, atomic versions, time travel, read-only SQL."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pydantic import BaseModel

from memsynth.core.duck import shipped_extension_path
from memsynth.core.errors import MemsynthError
from memsynth.core.tables import Table
from memsynth.warehouse.catalog import list_datasets, list_versions, run_query
from memsynth.warehouse.ducklake import load_ducklake
from memsynth.warehouse.publish import VersionInfo, publish
from memsynth.warehouse.readonly import check_read_only
from memsynth.warehouse.staging import StagingArea


class Row(BaseModel):
    id: int
    tags: list[str]
    extra: dict


T = Table("things", Row)


@pytest.fixture(params=["file", "postgres"])
def root(request, tmp_path):
    """A warehouse folder whose catalogs are files, or a PostgreSQL database's schemas."""
    if request.param == "postgres":
        from memsynth.warehouse.catalogs import bind_catalog

        bind_catalog(tmp_path, request.getfixturevalue("postgres_url"), [])
    return tmp_path


def _info(n: int = 0) -> VersionInfo:
    return VersionInfo(build_id=f"b{n}", recipe="test", config={"dataset": "d"}, config_hash="h",
                       memsynth_version="0", prompt_hashes={}, schema_hashes={}, model="m",
                       started_at=time.time(), llm={"calls": 3})


def _publish(root, rows, n=0, dataset="d", statistics=None):
    staging = StagingArea(root / dataset, f"b{n}")
    staging.write(T, "shard-0", rows)
    try:
        return publish(root, dataset, {"things": staging.files("things")}, _info(n), statistics=statistics)
    finally:
        staging.discard()


def test_ducklake_loads_offline_from_the_pip_package():
    # A fresh interpreter with no network: LOAD must come from the installed wheel.
    assert shipped_extension_path("ducklake") is not None
    code = ("import duckdb; from memsynth.warehouse.ducklake import load_ducklake; "
            "c = duckdb.connect(); load_ducklake(c); "
            "print(c.execute(\"SELECT loaded FROM duckdb_extensions() WHERE extension_name='ducklake'\").fetchone()[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent",
                              "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9"},
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"
    con = duckdb.connect()
    load_ducklake(con)


def test_versions_are_immutable_snapshots(root):
    v1 = _publish(root, [Row(id=1, tags=["a"], extra={"k": 1})], 1)
    v2 = _publish(root, [Row(id=2, tags=[], extra={}), Row(id=3, tags=["b", "c"], extra={})], 2)
    assert (v1["version"], v2["version"]) == (1, 2) and v2["parent_version"] == 1
    _, rows, _ = run_query(root, "d", "SELECT id FROM things ORDER BY id", version=1)
    assert rows == [(1,)]
    cols, rows, number = run_query(root, "d", "SELECT id, tags, extra FROM things ORDER BY id")
    assert number == 2 and [r[0] for r in rows] == [2, 3] and rows[1][1] == ["b", "c"]
    versions = list_versions(root, "d")
    assert [v["version"] for v in versions] == [1, 2]
    assert versions[1]["row_counts"] == {"things": 2} and versions[0]["llm_calls"] == 3
    assert list_datasets(root)[0]["latest_version"] == 2
    assert list(root.glob("d/data/**/*.parquet")), "data must be real Parquet files"


def test_a_versions_times_read_the_same_in_every_time_zone(tmp_path):
    before = time.time()
    _publish(tmp_path, [Row(id=1, tags=[], extra={})], 1)
    code = ("import json, sys; from memsynth.warehouse.catalog import list_versions; "
            "v = list_versions(sys.argv[1], 'd')[0]; print(json.dumps([v['created_at'], v['started_at']]))")
    listings = []
    for zone in ("UTC", "Asia/Shanghai", "America/New_York"):
        out = subprocess.run([sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin", "TZ": zone}, timeout=60)
        assert out.returncode == 0, out.stderr
        listings.append(out.stdout)
    assert listings[0] == listings[1] == listings[2]
    created, started = json.loads(listings[0])
    assert created.endswith("+00:00") and started.endswith("+00:00")
    assert before - 1 <= datetime.fromisoformat(created).timestamp() <= time.time() + 1


def test_empty_tables_keep_their_schema(root):
    _publish(root, [])
    cols, rows, _ = run_query(root, "d", "SELECT * FROM things")
    assert cols == ["id", "tags", "extra"] and rows == []


def test_failed_publish_leaves_no_version(root):
    _publish(root, [Row(id=1, tags=[], extra={})], 1)
    with pytest.raises(MemsynthError):
        publish(root, "d", {"things": [root / "missing.parquet"]}, _info(2))
    assert [v["version"] for v in list_versions(root, "d")] == [1]
    assert run_query(root, "d", "SELECT count(*) FROM things")[1] == [(1,)]


def test_statistics_are_the_published_version_s_and_a_broken_one_publishes_nothing(root):
    _publish(root, [Row(id=1, tags=["a"], extra={})], 1)
    stats = {"things": "SELECT count(*) FROM things", "tags": "SELECT avg(len(tags)) FROM things"}
    published = _publish(root, [Row(id=i, tags=["x"] * i, extra={}) for i in range(4)], 2, statistics=stats)
    assert published["statistics"] == {"things": 4, "tags": 1.5}  # this version's rows, not the last one's
    assert run_query(root, "d", stats["tags"])[1] == [(1.5,)]
    with pytest.raises(MemsynthError, match="statistic broken failed: .*nothing was published"):
        _publish(root, [Row(id=9, tags=[], extra={})], 3, statistics={**stats, "broken": "SELECT x FROM nowhere"})
    assert [v["version"] for v in list_versions(root, "d")] == [1, 2]


@pytest.mark.parametrize("sql", [
    "INSERT INTO things VALUES (9, [], '{}')",
    "DELETE FROM things",
    "COPY things TO '/tmp/x.csv'",
    "ATTACH '/tmp/other.db' AS o",
    "INSTALL httpfs",
    "LOAD httpfs",
    "CREATE TABLE x AS SELECT 1",
    "SELECT 1; DROP TABLE things",
    "SET enable_external_access = true",
])
def test_writes_are_refused(root, sql):
    _publish(root, [Row(id=1, tags=[], extra={})])
    with pytest.raises(MemsynthError):
        run_query(root, "d", sql)
    assert run_query(root, "d", "SELECT count(*) FROM things")[1] == [(1,)]


def test_reading_outside_the_dataset_is_refused(root):
    _publish(root, [Row(id=1, tags=[], extra={})])
    (root / "secret.csv").write_text("a\n1\n")
    with pytest.raises(MemsynthError, match="query failed"):
        run_query(root, "d", f"SELECT * FROM read_csv('{root}/secret.csv')")


def test_check_read_only_accepts_plain_selects():
    check_read_only("WITH a AS (SELECT 1) SELECT * FROM a")
    check_read_only("EXPLAIN SELECT 1")


def test_unknown_dataset_and_version_are_clear_errors(root):
    with pytest.raises(MemsynthError, match="no dataset"):
        run_query(root, "nope", "SELECT 1")
    _publish(root, [Row(id=1, tags=[], extra={})])
    with pytest.raises(MemsynthError, match="no version 7"):
        run_query(root, "d", "SELECT 1", version=7)


def test_reads_during_publishes_wait_for_the_lock_instead_of_failing(root):
    """Another process publishes version after version while this one reads: every read
    answers, from the last committed version."""
    import textwrap

    _publish(root, [Row(id=0, tags=[], extra={})], 0)
    writer = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).resolve().parent.parent)!r})
        from pathlib import Path
        from tests.test_warehouse import Row, _publish
        for n in range(1, 16):
            _publish(Path({str(root)!r}), [Row(id=i, tags=["x"] * i, extra={{}}) for i in range(n * 200)], n)
        print("done")
    """)
    proc = subprocess.Popen([sys.executable, "-c", writer], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    reads = 0
    while proc.poll() is None or reads < 20:
        _, rows, version = run_query(root, "d", "SELECT count(*) FROM things")
        assert rows[0][0] == (version - 1) * 200 or (version == 1 and rows[0][0] == 1)
        reads += 1
    out, errors = proc.communicate(timeout=120)
    assert out.strip() == "done", errors[-2000:]
    assert reads >= 20 and [v["version"] for v in list_versions(root, "d")] == list(range(1, 17))


def test_a_publish_killed_before_commit_leaves_no_empty_dataset_and_no_orphan_file(tmp_path):
    """What a kill during a first publish leaves (a catalog with no version, Parquet files
    no snapshot knows) is hidden from `datasets list` and swept by the next publish."""
    from memsynth.warehouse.catalog import list_datasets
    from memsynth.warehouse.publish import open_for_write

    open_for_write(tmp_path / "d").close()  # the catalog exists, nothing committed
    stray = tmp_path / "d" / "data" / "main" / "things" / "ducklake-killed.parquet"
    stray.parent.mkdir(parents=True)
    pq.write_table(pa.table({"id": [1]}), stray)
    assert list_datasets(tmp_path) == []

    _publish(tmp_path, [Row(id=1, tags=[], extra={})], 1)
    assert not stray.exists()
    assert [d["dataset"] for d in list_datasets(tmp_path)] == ["d"]
    assert run_query(tmp_path, "d", "SELECT count(*) FROM things")[1] == [(1,)]
    _publish(tmp_path, [Row(id=2, tags=[], extra={})], 2)  # live files of version 1 stay
    assert run_query(tmp_path, "d", "SELECT id FROM things", version=1)[1] == [(1,)]


def test_queries_never_draw_duckdbs_progress_bar(tmp_path):
    _publish(tmp_path, [Row(id=1, tags=[], extra={})])
    assert run_query(tmp_path, "d", "SELECT current_setting('enable_progress_bar')")[1] == [(False,)]
