"""A warehouse on S3 trusts the bucket, not this machine's copy of its catalog (issue 52).

Against moto on loopback: a bucket emptied and recreated (a machine's copy set aside, the next
build is version 1), the same bucket name on a second endpoint, and a data file deleted from
under a published version (one line on build, query, versions and release; `versions --verify`
names it).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memsynth.warehouse.catalog import list_datasets, list_versions, verify_versions
from memsynth.warehouse.location import location_of
from memsynth.warehouse.objectstore import ObjectStore, bind
from tests.conftest import ROOT, cli_json, memsynth_cli
from tests.test_warehouse import Row, _publish

boto3 = pytest.importorskip("boto3")
moto_server = pytest.importorskip("moto.server")
# moto keeps one set of buckets per process: each test writes under a prefix of its own.
QUICK = ["--llm", "simulator", "--personas", "1", "--no-progress", "--format", "json"]


def _keys(client, prefix: str = "") -> list[str]:
    pages = client.get_paginator("list_objects_v2").paginate(Bucket="lab", Prefix=prefix)
    return [o["Key"] for page in pages for o in page.get("Contents", [])]


def _recreate(client) -> None:
    for key in _keys(client):
        client.delete_object(Bucket="lab", Key=key)
    client.delete_bucket(Bucket="lab")
    client.create_bucket(Bucket="lab")


def _one_line(result, *expected: str) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-2000:]
    assert lines and lines[-1].startswith("error: ") and all(e in lines[-1] for e in expected), lines
    return lines[-1]


def _quick_config(tmp_path: Path) -> Path:
    import yaml

    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    config["recipe_options"] = {**config.get("recipe_options", {}), "dialogues_per_persona": 1}
    config["warehouse"] = "s3://lab/wh"
    path = tmp_path / "quick.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


def test_a_recreated_bucket_builds_version_1_and_lost_files_are_one_line(tmp_path, s3):
    client, env = s3
    machine = {**env, "MEMSYNTH_CATALOG_DIR": str(tmp_path / "machine")}
    config = _quick_config(tmp_path)
    assert cli_json("build", str(config), *QUICK, env=machine, timeout=300)["version"] == 1

    _recreate(client)  # emptied and made again: the machine's copy lists files that are gone
    again = memsynth_cli("build", str(config), *QUICK, env=machine, timeout=300)
    assert again.returncode == 0, again.stderr[-2000:]
    assert json.loads(again.stdout)["version"] == 1  # the bucket's state: a fresh dataset
    notes = [line for line in again.stderr.splitlines() if "set aside" in line]
    assert len(notes) == 1 and "s3://lab/wh holds no catalog of quickstart" in notes[0]
    catalog_dir = tmp_path / "machine" / "quickstart"
    assert list(catalog_dir.glob("catalog.ducklake.set-aside-*"))  # kept, not deleted

    # A data file deleted from under the published version.
    gone = next(k for k in _keys(client, "wh/quickstart/data/main/personas/"))
    client.delete_object(Bucket="lab", Key=gone)
    wh = ["--warehouse", "s3://lab/wh"]
    _one_line(memsynth_cli("query", "SELECT count(*) FROM personas", "--dataset", "quickstart", *wh, env=machine),
              "version 1 of quickstart", gone)
    _one_line(memsynth_cli("release", "create", "--dataset", "quickstart", "--tag", "v1.0.0",
                           "--out", str(tmp_path / "rel"), *wh, env=machine), "version 1 of quickstart", gone)
    assert not (tmp_path / "rel").exists()
    verified = memsynth_cli("versions", "quickstart", "--verify", "--format", "json", *wh, env=machine)
    assert verified.returncode == 1, verified.stderr
    rows = json.loads(verified.stdout)
    assert [(r["version"], [m.rsplit("/", 1)[1] for m in r["missing"]]) for r in rows] == [(1, [gone.rsplit("/", 1)[1]])]
    _one_line(verified, "1 version(s) of quickstart")

    # The versions table's own file: every command that reads it says so in one line, build too.
    versions_file = next(k for k in _keys(client, "wh/quickstart/data/main/versions/"))
    client.delete_object(Bucket="lab", Key=versions_file)
    _one_line(memsynth_cli("versions", "quickstart", *wh, env=machine), "the versions table of quickstart")
    _one_line(memsynth_cli("build", str(config), *QUICK, env=machine, timeout=300), "versions table of quickstart")
    listed = memsynth_cli("versions", "quickstart", "--verify", "--format", "json", *wh, env=machine)
    assert listed.returncode == 1 and json.loads(listed.stdout)[0]["missing"], listed.stderr


def test_the_same_bucket_name_on_another_endpoint_is_another_bucket(tmp_path, s3, monkeypatch):
    """A machine's copy synced with endpoint A is not the catalog of endpoint B's bucket `lab`."""
    client_a, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    local = tmp_path / "machine"
    bind(ObjectStore.parse("s3://lab/endpoints", endpoint_url=env["AWS_ENDPOINT_URL"]), local)
    _publish(local, [Row(id=1, tags=[], extra={})], 1)
    _publish(local, [Row(id=2, tags=[], extra={})], 2)
    assert [v["version"] for v in list_versions(local, "d")] == [1, 2]

    # moto's servers in one process share their buckets: endpoint B is a process of its own.
    other, endpoint_b = _moto_process()
    try:
        client_b = boto3.client("s3", endpoint_url=endpoint_b, region_name="us-east-1",
                                aws_access_key_id=env["AWS_ACCESS_KEY_ID"], aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
        client_b.create_bucket(Bucket="lab")
        monkeypatch.setenv("AWS_ENDPOINT_URL", endpoint_b)
        bind(ObjectStore.parse("s3://lab/endpoints", endpoint_url=endpoint_b), local)
        assert list_datasets(local) == []  # endpoint B's bucket holds nothing
        assert list((local / "d").glob("catalog.ducklake.set-aside-*"))
        assert _publish(local, [Row(id=3, tags=[], extra={})], 3)["version"] == 1
        assert "endpoints/d/catalog.ducklake" in [o["Key"] for o in client_b.list_objects_v2(Bucket="lab")["Contents"]]
        assert verify_versions(local, "d")[0]["missing"] == []
        # Endpoint A's bucket kept its own two versions.
        assert len([k for k in _keys(client_a, "endpoints/d/data/main/versions/")]) == 2
    finally:
        other.kill()
        other.wait()


def _moto_process() -> tuple[subprocess.Popen, str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60  # a hang guard while it starts
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return proc, f"http://127.0.0.1:{port}"
        time.sleep(0.1)
    proc.kill()
    raise AssertionError("moto's server did not start")


def test_a_local_warehouse_names_a_deleted_file_too(tmp_path):
    _publish(tmp_path, [Row(id=1, tags=[], extra={})], 1)
    data = next(p for p in (tmp_path / "d").rglob("things/*.parquet"))
    data.unlink()
    checked = verify_versions(tmp_path, "d")
    assert [Path(m).name for m in checked[0]["missing"]] == [data.name]
    result = memsynth_cli("query", "SELECT * FROM things", "--dataset", "d", "--warehouse", str(tmp_path))
    _one_line(result, "version 1 of d", data.name)
    assert location_of(tmp_path).file_checker("d")(str(data)) is False


def test_a_postgres_catalog_whose_bucket_lost_a_file_names_it(tmp_path, s3, monkeypatch, postgres_cluster):
    """The catalog in PostgreSQL is whole; the bucket lost a data file: one line, and --verify."""
    from memsynth.warehouse.catalogs import bind_catalog

    client, env = s3
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    local = tmp_path / "machine"
    bind(ObjectStore.parse("s3://lab/pgcat", endpoint_url=env["AWS_ENDPOINT_URL"]), local)
    bind_catalog(local, postgres_cluster.database(), [])
    _publish(local, [Row(id=1, tags=[], extra={})], 1)
    _publish(local, [Row(id=2, tags=[], extra={})], 2)
    gone = next(k for k in _keys(client, "pgcat/d/data/main/things/"))
    client.delete_object(Bucket="lab", Key=gone)
    checked = verify_versions(local, "d")
    assert [(c["version"], [m.rsplit("/", 1)[1] for m in c["missing"]]) for c in checked] == \
        [(1, [gone.rsplit("/", 1)[1]]), (2, [])]
    result = memsynth_cli("query", "SELECT * FROM things", "--dataset", "d", "--version", "1",
                          "--warehouse", str(local), env=env)
    _one_line(result, "version 1 of d", gone.rsplit("/", 1)[1])
    assert memsynth_cli("query", "SELECT id FROM things", "--dataset", "d", "--warehouse", str(local),
                        "--format", "json", env=env).stdout.count('"id": 2') == 1
