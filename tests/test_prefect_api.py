"""memsynth's own Prefect server: `memsynth build` launches it before importing the build."""

from __future__ import annotations

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
