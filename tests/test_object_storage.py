"""warehouse: s3://… — a build against moto's S3 server on loopback, queried back, then
built again from a second machine's empty catalog folder with every answer from the bucket's cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import S3_SECRET, cli_json, memsynth_cli, write_config

boto3 = pytest.importorskip("boto3")
SECRET = S3_SECRET  # must appear in no file and no object


def _keys(client) -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket="lab")
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def test_build_query_and_rebuild_on_s3(tmp_path: Path, s3):
    client, env = s3
    config = write_config(tmp_path / "c.yaml", warehouse="s3://lab/benchmarks")
    machine_a = {**env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / "machine-a")}
    first = cli_json("build", str(config), "--llm", "simulator", "--no-progress", "--format", "json",
                     env=machine_a, timeout=300)
    assert first["version"] == 1 and first["llm"]["requests"] > 0
    assert first["warehouse"] == "s3://lab/benchmarks"

    keys = _keys(client)
    data = [k for k in keys if k.startswith("benchmarks/t/data/") and k.endswith(".parquet")]
    logs = [k for k in keys if k.startswith("benchmarks/_cache/") and k.endswith(".jsonl")]
    assert len(data) >= len(first["row_counts"])  # every table's rows are Parquet in the bucket
    assert logs and "benchmarks/t/catalog.ducklake" in keys
    assert not [k for k in keys if "/_staging/" in k and k.endswith(".parquet")]  # staging is gone
    # The machine keeps the catalog and the cache index, not the data.
    assert not list((tmp_path / "machine-a").rglob("*.parquet"))

    rows = cli_json("query", "SELECT count(*) AS n FROM personas", "--dataset", "t",
                    "--warehouse", "s3://lab/benchmarks", "--format", "json", env=machine_a)
    assert rows == [{"n": first["row_counts"]["personas"]}]

    # A second machine: no catalog, no cache. It fetches both from the bucket.
    machine_b = {**env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / "machine-b")}
    second = cli_json("build", str(config), "--llm", "simulator", "--no-progress", "--format", "json",
                      "--publish-unchanged", env=machine_b, timeout=300)
    assert second["version"] == 2  # built on the first machine's version 1
    assert second["llm"]["requests"] == 0 and second["llm"]["cache_hits"] == first["llm"]["calls"]
    assert second["row_counts"] == first["row_counts"]
    versions = cli_json("versions", "t", "--warehouse", "s3://lab/benchmarks", "--format", "json", env=machine_a)
    assert [v["version"] for v in versions] == [1, 2]  # machine A fetched the newer catalog

    # compact/gc would rewrite logs that the bucket's other readers bring back: refused.
    refused = memsynth_cli("cache", "gc", "--keep-versions", "1", "--warehouse", "s3://lab/benchmarks",
                           env=machine_a)
    assert refused.returncode != 0 and "shared through its bucket" in refused.stderr

    # The secret key went nowhere: not in a local file, not in an object.
    for path in [*(tmp_path / "machine-a").rglob("*"), *(tmp_path / "machine-b").rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    for key in _keys(client):
        assert SECRET.encode() not in client.get_object(Bucket="lab", Key=key)["Body"].read(), key


def test_missing_credentials_fail_with_one_line(tmp_path: Path, s3):
    _, env = s3
    config = write_config(tmp_path / "c.yaml", warehouse="s3://lab/benchmarks")
    result = memsynth_cli("build", str(config), "--llm", "simulator", "--no-progress",
                          env={**{k: v for k, v in env.items() if k != "AWS_SECRET_ACCESS_KEY"},
                               "AWS_SECRET_ACCESS_KEY": "", "MEMSYNTH_CATALOG_DIR": str(tmp_path / "m")})
    assert result.returncode != 0
    assert "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_bucket_catalog_changed_by_another_machine_is_never_overwritten(tmp_path: Path, s3, monkeypatch):
    """Without a PostgreSQL catalog an s3:// warehouse takes one writer at a time: a machine
    whose catalog is behind the bucket's (another published meanwhile) is refused when it
    would upload, drops its own commit, and the bucket keeps the other's version."""
    import duckdb

    from memsynth.core.errors import MemsynthError
    from memsynth.warehouse.catalog import list_versions
    from memsynth.warehouse.ducklake import load_ducklake
    from memsynth.warehouse.location import location_of
    from memsynth.warehouse.objectstore import ObjectStore, bind
    from tests.test_warehouse import Row, _publish

    _client, env = s3
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    store = ObjectStore.parse("s3://lab/single")
    a, b = bind(store, tmp_path / "a"), bind(store, tmp_path / "b")
    _publish(a, [Row(id=1, tags=[], extra={})], 1)
    assert [v["version"] for v in list_versions(b, "d")] == [1]  # machine B fetched version 1
    _publish(a, [Row(id=2, tags=[], extra={})], 2)  # A publishes version 2: the bucket moves on
    # B commits to its own (now stale) copy, as a publish that started before A's would.
    con = duckdb.connect()
    load_ducklake(con)
    location_of(b).configure(con)
    con.execute(f"ATTACH 'ducklake:{b / 'd' / 'catalog.ducklake'}' AS lake (DATA_PATH 's3://lab/single/d/data/')")
    con.execute("CREATE TABLE lake.stale AS SELECT 1 AS x")
    con.close()
    with pytest.raises(MemsynthError, match="another machine published d .* nothing was published"):
        location_of(b).share_catalog(b / "d")
    assert [v["version"] for v in list_versions(a, "d")] == [1, 2]  # the bucket kept A's version
    assert [v["version"] for v in list_versions(b, "d")] == [1, 2]  # and B now reads it too
