"""warehouse: s3://… — a build against moto's S3 server on loopback, queried back, then
built again from a second machine's empty catalog folder with every answer from the bucket's cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli_json, memsynth_cli, write_config

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")

SECRET = "sk-memsynth-test-secret-9f3c1a"  # must appear in no file and no object


@pytest.fixture
def s3():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    env = {"AWS_ACCESS_KEY_ID": "memsynth-test", "AWS_SECRET_ACCESS_KEY": SECRET,
           "AWS_ENDPOINT_URL": f"http://{host}:{port}", "AWS_REGION": "us-east-1"}
    client = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL"], region_name="us-east-1",
                          aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=SECRET)
    client.create_bucket(Bucket="lab")
    try:
        yield client, env
    finally:
        server.stop()


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
                      env=machine_b, timeout=300)
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
