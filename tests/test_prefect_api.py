"""memsynth's own Prefect server: `memsynth build` launches it before importing the build."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import httpx2 as httpx

from memsynth.build import prefect_api


def test_an_early_started_server_is_the_one_the_build_then_uses(monkeypatch):
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    monkeypatch.setattr(prefect_api, "_server", None)  # the session's shared server is left alone
    prefect_api.start_early()
    early = prefect_api._server
    try:
        assert early is not None and not early.healthy  # launched, not waited for
        pid = prefect_api.server_pid()
        url = prefect_api.prefect_api_url()
        assert prefect_api.server_pid() == pid and url == early.url and early.healthy
        assert httpx.get(f"{url}/health", timeout=5).status_code == 200
        prefect_api.start_early()  # a second call keeps the running server
        assert prefect_api.server_pid() == pid
    finally:
        early.stop()
    assert early.process.poll() is not None
    monkeypatch.setenv("PREFECT_API_URL", "http://127.0.0.1:1/api")
    prefect_api.start_early()  # the user's own server: nothing is launched
    assert prefect_api._server is early


def _serves_flows(server: prefect_api._Server) -> None:
    """The API reads and writes its tables (a database without them fails here)."""
    server.wait_healthy()
    empty = httpx.post(f"{server.url}/flows/filter", json={}, timeout=10)
    assert empty.status_code == 200 and empty.json() == []  # a database of its own, empty
    made = httpx.post(f"{server.url}/flows/", json={"name": "memsynth-test"}, timeout=10)
    assert made.status_code in (200, 201), made.text
    found = httpx.post(f"{server.url}/flows/filter", json={}, timeout=10)
    assert found.status_code == 200 and [f["name"] for f in found.json()] == ["memsynth-test"]


def _block_types(server: prefect_api._Server) -> list[str]:
    found = httpx.post(f"{server.url}/block_types/filter", json={}, timeout=10)
    assert found.status_code == 200, found.text
    return sorted(b["slug"] for b in found.json())


def test_a_server_starts_from_the_migrated_database_the_first_one_kept(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    env["PREFECT_HOME"] = str(tmp_path / "prefect-home")
    template = prefect_api.empty_database(env)
    assert template is not None and not template.exists()

    first = prefect_api._Server(env)
    try:
        assert not first.from_template
        _serves_flows(first)
        registered = _block_types(first)
        assert prefect_api._usable(template)  # kept once served, before any flow ran
    finally:
        first.stop()
    assert sorted(p.name for p in template.parent.iterdir()) == [template.name]  # no -wal, no partial

    second = prefect_api._Server(env)
    try:
        assert second.from_template
        _serves_flows(second)  # a copy taken before the first server's flow was made
        # Not registered again: the template's own, all of them.
        assert registered and _block_types(second) == registered
    finally:
        second.stop()
    # Neither wrote its note of registered blocks (memo_store.toml) in the user's Prefect home.
    assert not (tmp_path / "prefect-home").exists() or not list((tmp_path / "prefect-home").iterdir())

    template.write_bytes(b"half a database")  # a damaged template is made anew and kept again
    third = prefect_api._Server(env)
    try:
        assert not third.from_template
        _serves_flows(third)
    finally:
        third.stop()
    assert prefect_api._usable(template)


def test_a_template_that_cannot_be_copied_leaves_the_server_to_make_its_own(tmp_path, monkeypatch):
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    first = prefect_api._Server(env)
    try:
        first.wait_healthy()
    finally:
        first.stop()
    assert prefect_api._usable(prefect_api.empty_database(env))

    def full_disk(src, dst):
        Path(dst).write_bytes(b"part")  # what a copy cut short by a full disk leaves
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(prefect_api.shutil, "copyfile", full_disk)
    second = prefect_api._Server(env)
    try:
        assert not second.from_template
        _serves_flows(second)  # migrated from nothing, not started on the part-copy
    finally:
        second.stop()


def test_a_server_sweeps_the_databases_that_killed_builds_left(tmp_path):
    """kill -9 skips every exit handler, so a build's scratch database stays behind: the
    next server removes each whose building process is gone, and only those."""
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names no running process now
    scratch = Path(tempfile.gettempdir())
    left = scratch / f"{prefect_api.SCRATCH_PREFIX}{gone.pid}-test"
    running = scratch / f"{prefect_api.SCRATCH_PREFIX}{os.getpid()}-test"
    for folder in (left, running):
        folder.mkdir()
        (folder / "prefect.db").write_bytes(b"x" * 1024)
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    try:
        server = prefect_api._Server(env)
        try:
            assert not left.exists() and running.exists()
            assert Path(server.scratch).name.startswith(f"{prefect_api.SCRATCH_PREFIX}{os.getpid()}-")
        finally:
            server.stop()
    finally:
        for folder in (left, running):
            shutil.rmtree(folder, ignore_errors=True)
