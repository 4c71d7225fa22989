"""No API key or password in anything memsynth prints or writes, whatever an endpoint echoes.

An endpoint that quotes the request's `Authorization` header in its 400 is the case measured
in issue 50: the key was printed and stored in run.json, `llm_calls` and `stage_failures`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.core.secrets import MASK, mask, masked_table, remember
from tests.conftest import ROOT, write_config

KEY = "sk-memsynth-echo-7f3a9c2e1b"
URL_PASSWORD = "urlpass-4d1e8b"


class _Echo(BaseHTTPRequestHandler):
    """Every request answered 400 with what it was sent: headers, key and all."""

    def _echo(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        body = json.dumps({"error": {
            "message": f"invalid request; you sent Authorization: {self.headers.get('Authorization')}",
            "type": "invalid_request_error", "headers": dict(self.headers.items())}}).encode()
        self.send_response(400)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _echo

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def echo_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _leaks(folder: Path, needles: tuple[str, ...]) -> list[str]:
    """Every file under `folder` but the build's config (the input) holding a needle: its
    bytes, and each Parquet file's values (compressed pages hide a needle from a byte search)."""
    found = []
    for path in folder.rglob("*"):
        if not path.is_file() or path.name == "c.yaml":
            continue
        texts = [path.read_bytes().decode("utf-8", "replace")]
        if path.suffix == ".parquet":
            texts.append(json.dumps(pq.read_table(path).to_pylist(), default=str, ensure_ascii=False))
        found += [f"{path}: {n}" for n in needles for t in texts if n in t]
    return found


def test_a_key_echoed_in_a_400_is_in_no_output_file_log_or_column(tmp_path, echo_server):
    """A build against an endpoint that echoes the Authorization header in every 400, on a
    Prefect server whose database is kept (its logs are grepped too)."""
    config = write_config(tmp_path / "c.yaml", dataset="echo", personas={"count": 2},
                          llm={"model": "m", "concurrency": 2, "response_mode": "json_schema",
                               "max_attempts": 1, "retry_base_s": 0.01})
    env = {**os.environ, "OPENAI_BASE_URL": echo_server, "OPENAI_API_KEY": KEY,
           "PREFECT_SERVER_DATABASE_CONNECTION_URL": f"sqlite+aiosqlite:///{tmp_path / 'prefect.db'}",
           "PREFECT_LOGGING_LEVEL": "INFO"}  # every log Prefect writes, to the terminal and its database
    env.pop("PREFECT_API_URL", None)
    result = subprocess.run([str(Path(sys.executable).parent / "memsynth"), "build", str(config),
                             "--warehouse", str(tmp_path / "wh"), "--no-progress", "-v"],
                            env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stderr[-3000:]
    assert "HTTP 400" in result.stderr and MASK in result.stderr, result.stderr[-3000:]  # relayed, masked
    assert KEY not in result.stdout + result.stderr
    run = next((tmp_path / "wh" / "echo" / "_runs").glob("*/run.json"))
    assert "HTTP 400" in json.loads(run.read_text())["error"]
    staged = {p.parent.name for p in run.parent.rglob("*.parquet")}
    assert {"llm_calls", "stage_failures"} <= staged, staged
    assert (tmp_path / "prefect.db").is_file()
    assert _leaks(tmp_path, (KEY,)) == []


def test_a_password_in_the_base_url_is_in_no_output_or_file(tmp_path):
    """An endpoint that cannot be reached at a URL with user:password: the error names the
    URL, masked, on the terminal and in the run it keeps."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens there once closed
    config = write_config(tmp_path / "c.yaml", dataset="gone", personas={"count": 1},
                          llm={"model": "m", "concurrency": 2, "response_mode": "json_schema",
                               "base_url": f"http://lab:{URL_PASSWORD}@127.0.0.1:{port}/v1"})
    result = subprocess.run([str(Path(sys.executable).parent / "memsynth"), "build", str(config),
                             "--warehouse", str(tmp_path / "wh"), "--no-progress"],
                            env={**os.environ, "OPENAI_API_KEY": KEY}, cwd=ROOT, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 1 and "127.0.0.1" in result.stderr, result.stderr[-3000:]
    assert URL_PASSWORD not in result.stdout + result.stderr and KEY not in result.stderr
    assert _leaks(tmp_path, (URL_PASSWORD, KEY)) == []


def test_the_probe_quoting_a_key_raises_it_masked(tmp_path, echo_server, monkeypatch):
    """`response_mode: auto` probes the endpoint first; its refusal quotes the 400's body."""
    from memsynth.core.errors import MemsynthError
    from memsynth.llm.cache import ResponseCache
    from memsynth.llm.engine import LLMEngine
    from memsynth.llm.settings import EngineSettings

    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    engine = LLMEngine(EngineSettings(base_url=echo_server, api_key_env="OPENAI_API_KEY"),
                       ResponseCache(tmp_path / "cache"))
    with pytest.raises(MemsynthError) as raised:
        engine.learn_capabilities("m", probe_formats=True)
    assert "HTTP 400" in str(raised.value) and KEY not in str(raised.value)
    assert raised.value.__cause__ is None and raised.value.__context__ is None  # nothing holds the body
    engine.cache.close()


# --- the mask itself --------------------------------------------------------------------

_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=40) | st.text(
    st.sampled_from("好的记忆ＳＥＬＥＣＴ😀\u202e\u0301عربي \n\t\"'{}:=@/"), max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_TEXT, after=_TEXT, form=st.sampled_from([
    "{k}", "Bearer {k}", "\"authorization\": \"Bearer {k}\"", "api_key={k}", "https://u:{k}@host/v1",
    "{q}", "\"{k}\""]))
def test_a_known_key_never_survives_the_mask_in_any_text(before, after, form):
    import urllib.parse

    remember(KEY)
    text = before + form.format(k=KEY, q=urllib.parse.quote(KEY, safe="")) + after
    masked = mask(text)
    assert KEY not in masked and urllib.parse.quote(KEY, safe="") not in masked
    assert mask(masked) == masked  # masking twice changes nothing more


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.characters(codec="utf-8", exclude_characters="\x00:=@"), max_size=80))
def test_text_with_no_secret_passes_the_mask_unchanged(text):
    if "bearer" not in text.lower():
        assert mask(text) == text


def test_a_table_s_columns_are_masked_lists_too_and_clean_ones_kept():
    import pyarrow as pa

    remember(KEY)
    table = pa.table({"error": ["ok", f"HTTP 400: Bearer {KEY}", None],
                      "problems": [[], [f"sent {KEY}"], ["fine"]], "n": [1, 2, 3],
                      "note": ["postgres://bob:pw123456@db/x", "好", ""]})
    masked = masked_table(table, patterns=True).to_pylist()
    assert KEY not in json.dumps(masked) and "pw123456" not in json.dumps(masked)
    assert masked[0] == {"error": "ok", "problems": [], "n": 1, "note": "postgres://bob:***@db/x"}
    assert masked[2] == {"error": None, "problems": ["fine"], "n": 3, "note": ""}
    assert masked_table(table, patterns=False).column("note").to_pylist()[0].endswith("pw123456@db/x")
