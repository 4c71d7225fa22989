"""The response cache: key stability, durability, torn lines, DuckDB readability."""

from __future__ import annotations

import asyncio
import json

import duckdb

from memsynth.llm.cache import ResponseCache, cache_stats
from memsynth.llm.request import LLMRequest


def _request(**changes) -> LLMRequest:
    base = dict(model="m", messages=({"role": "user", "content": "hi"},),
                params={"temperature": 0.5, "max_tokens": 100}, schema_name="s",
                json_schema={"type": "object"}, sample_index=0)
    base.update(changes)
    return LLMRequest(**base)


def test_key_is_stable_and_order_independent():
    a = _request(params={"temperature": 0.5, "max_tokens": 100})
    b = _request(params={"max_tokens": 100, "temperature": 0.5})
    assert a.cache_key() == b.cache_key()
    # A golden value: changing the canonical form must be a deliberate version bump.
    assert a.cache_key() == (
        "v2-" + __import__("hashlib").sha256(a.canonical().encode()).hexdigest())
    schema_hash = __import__("hashlib").sha256(b'{"type":"object"}').hexdigest()
    assert a.canonical().startswith('{"json_schema":"' + schema_hash + '","messages":')
    # The same schema in another dict object gives the same key.
    assert _request(json_schema=dict({"type": "object"})).cache_key() == a.cache_key()


def test_key_changes_with_every_part_of_the_request():
    base = _request().cache_key()
    variants = [
        _request(model="other"),
        _request(messages=({"role": "user", "content": "hi!"},)),
        _request(params={"temperature": 0.6, "max_tokens": 100}),
        _request(json_schema={"type": "array"}),
        _request(schema_name="t"),
        _request(sample_index=1),
        _request(response_mode="json_object"),
    ]
    keys = {v.cache_key() for v in variants}
    assert base not in keys and len(keys) == len(variants)


def test_put_is_durable_and_reloads(tmp_path):
    cache = ResponseCache(tmp_path)

    async def write():
        await cache.put("k1", {"content": "one"}, {"stage": "s", "model": "m"})
        await asyncio.gather(*(cache.put(f"k{i}", {"content": str(i)}, {"stage": "s", "model": "m"})
                               for i in range(2, 50)))

    asyncio.run(write())
    cache.close()
    reopened = ResponseCache(tmp_path)
    assert len(reopened) == 49
    assert reopened.get("k1") == {"content": "one"}
    assert reopened.get("k30") == {"content": "30"}
    assert reopened.get("missing") is None


def test_torn_last_line_is_ignored(tmp_path):
    cache = ResponseCache(tmp_path)
    asyncio.run(cache.put("good", {"content": "x"}, {"stage": "s", "model": "m"}))
    cache.close()
    log = next(tmp_path.glob("*.jsonl"))
    with open(log, "ab") as fh:  # what kill -9 in the middle of a write leaves behind
        fh.write(b'{"key":"torn","created_at":1,"response":{"cont')
    reopened = ResponseCache(tmp_path)
    assert "good" in reopened and "torn" not in reopened
    # DuckDB can still read the log, skipping the damage.
    rows = duckdb.sql(
        f"SELECT key FROM read_json('{tmp_path}/*.jsonl', format='newline_delimited', "
        "ignore_errors=true)").fetchall()
    assert ("good",) in rows


def test_disabled_read_misses_but_still_records(tmp_path):
    cache = ResponseCache(tmp_path, read=False)
    asyncio.run(cache.put("k", {"content": "x"}, {"stage": "s", "model": "m"}))
    assert cache.get("k") is None
    assert ResponseCache(tmp_path).get("k") == {"content": "x"}


def test_cache_stats_counts_entries(tmp_path):
    cache = ResponseCache(tmp_path)

    async def write():
        for i in range(3):
            await cache.put(f"a{i}", {"content": "x", "prompt_tokens": 10, "completion_tokens": 5},
                            {"stage": "enpmr.profile", "model": "m"})
        await cache.put("b", {"content": "y", "prompt_tokens": 1, "completion_tokens": 1},
                        {"stage": "enpmr.life_themes", "model": "m"})

    asyncio.run(write())
    stats = cache_stats(tmp_path)
    assert stats["entries"] == 4
    assert stats["by_stage"]["enpmr.profile [m]"]["prompt_tokens"] == 30
    json.dumps(stats)  # serialisable for --format json


def test_a_full_disk_stops_every_call_at_once_with_one_message(tmp_path):
    """Writes to /dev/full fail with ENOSPC, as a full disk does: every waiting call is
    released with the same error, and no further request is sent for an answer that
    could not be kept."""
    import os
    from pathlib import Path

    import pytest

    from memsynth.core.errors import BuildFailed
    from memsynth.llm.engine import LLMEngine
    from memsynth.llm.settings import EngineSettings
    from tests.conftest import start_simulator

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full on this system")
    sim = start_simulator(latency_ms=20)
    cache = ResponseCache(tmp_path / "cache")
    engine = LLMEngine(EngineSettings(base_url=sim.base_url, api_key_env="X", concurrency=8), cache, api_key="k")

    async def main():
        await engine.complete(LLMRequest(model="m", messages=({"role": "user", "content": "first"},)))
        cache._log_fd, cache._log_path = os.open("/dev/full", os.O_WRONLY), Path("/dev/full")
        calls = [engine.complete(LLMRequest(model="m", messages=({"role": "user", "content": str(i)},)))
                 for i in range(100)]
        try:
            return await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), timeout=30)
        finally:
            await engine.aclose()

    try:
        results = asyncio.run(main())
    finally:
        sim.stop()
    assert all(isinstance(r, BuildFailed) for r in results), {type(r).__name__ for r in results}
    assert "No space left on device" in str(results[0]) and "cannot write the response cache" in str(results[0])
    # The calls already in flight when the disk filled were sent; none after.
    assert sim.simulator.counters.requests <= 1 + 2 * 8
    assert len(ResponseCache(tmp_path / "cache")) == 1  # the answer written before is kept


def test_a_cache_folder_that_cannot_be_written_fails_before_any_call(tmp_path):
    import pytest

    from memsynth.core.errors import BuildFailed

    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(BuildFailed, match="cannot write the response cache in .*file/c: Not a directory"):
        ResponseCache(tmp_path / "file" / "c")


def _put_all(cache: ResponseCache, items: dict[str, str]) -> None:
    async def write():
        await asyncio.gather(*(cache.put(k, {"content": v}, {"stage": "s", "model": "m"}) for k, v in items.items()))

    asyncio.run(write())


def test_an_open_cache_reads_only_its_index_not_the_logs(tmp_path, monkeypatch):
    from memsynth.llm import cache as cache_module

    first = ResponseCache(tmp_path)
    _put_all(first, {f"k{i}": str(i) for i in range(200)})
    first.close()

    def no_scan(*args, **kwargs):
        raise AssertionError("the logs were scanned although the index was up to date")

    monkeypatch.setattr(cache_module, "scan", no_scan)
    reopened = ResponseCache(tmp_path)
    assert reopened.get("k7") == {"content": "7"} and len(reopened) == 200 and "k200" not in reopened


def test_the_index_catches_up_with_lines_it_never_saw(tmp_path):
    """A write is fsynced to its log before it is indexed: lines a crash left unindexed (here
    appended behind the index's back) are indexed when the cache next opens."""
    cache = ResponseCache(tmp_path)
    _put_all(cache, {"a": "1"})
    cache.close()
    log = next(tmp_path.glob("*.jsonl"))
    with open(log, "ab") as fh:
        fh.write(b'{"key":"b","created_at":1,"response":{"content":"2"}}\n')
        fh.write(b'{"key":"a","created_at":1,"response":{"content":"later copy"}}\n')
    other = tmp_path / "calls-other.jsonl"
    other.write_bytes(b'{"key":"c","created_at":1,"response":{"content":"3"}}\n')
    reopened = ResponseCache(tmp_path)
    assert reopened.get("b") == {"content": "2"} and reopened.get("c") == {"content": "3"}
    assert reopened.get("a") == {"content": "1"}  # the first answer of a key stays its answer
    other.unlink()  # a log removed by hand: its entries are forgotten, not misread
    reopened.close()
    assert ResponseCache(tmp_path).get("c") is None


WRITER = """
import asyncio, sys
from memsynth.llm.cache import ResponseCache
cache = ResponseCache(sys.argv[1])
async def main():
    n = 0
    while True:
        await asyncio.gather(*(cache.put(f"key-{n + i}", {"content": "x" * 300}, {"stage": "s", "model": "m"})
                               for i in range(50)))
        n += 50
        print(n, flush=True)
asyncio.run(main())
"""


def test_the_index_survives_kill_9_in_the_middle_of_writes(tmp_path):
    import signal
    import subprocess
    import sys

    from memsynth.llm.cache import scan

    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    for line in proc.stdout:
        if int(line) >= 3000:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    written = {key for log in tmp_path.glob("*.jsonl") for key, _, _ in scan(log)}
    assert len(written) >= 3000
    cache = ResponseCache(tmp_path)
    assert len(cache) == len(written)
    assert all(cache.get(k) == {"content": "x" * 300} for k in written)


def test_compact_keeps_each_key_once_and_drops_damage(tmp_path):
    from memsynth.llm.maintenance import compact

    first = ResponseCache(tmp_path)
    _put_all(first, {f"k{i}": str(i) for i in range(30)})
    first.close()
    second = ResponseCache(tmp_path)
    _put_all(second, {"k3": "again", "new": "n"})  # a copy of k3 in a second log
    second.close()
    with open(next(iter(sorted(tmp_path.glob("*.jsonl")))), "ab") as fh:
        fh.write(b'{"key":"broken","created_at":1,"response":{"con\n')  # damaged but whole
        fh.write(b'{"key":"torn","created_at":1,"resp')  # torn
    summary = compact(tmp_path)
    assert summary["files_before"] == 2 and summary["files_after"] == 1
    assert summary["entries_after"] == 31
    log = next(tmp_path.glob("*.jsonl"))
    assert len(log.read_bytes().splitlines()) == 31 and summary["bytes_after"] < summary["bytes_before"]
    cache = ResponseCache(tmp_path)
    assert cache.get("k3") == {"content": "3"} and cache.get("new") == {"content": "n"}
    assert cache.get("broken") is None and len(cache) == 31


def test_compact_is_refused_while_a_build_holds_the_cache(tmp_path):
    import pytest

    from memsynth.core.errors import MemsynthError
    from memsynth.llm.maintenance import compact

    held = ResponseCache(tmp_path)
    _put_all(held, {"a": "1"})
    with pytest.raises(MemsynthError, match="is in use"):
        compact(tmp_path)
    held.close()
    assert compact(tmp_path)["entries_after"] == 1


def test_gc_drops_what_no_kept_version_used_and_a_rebuild_still_pays_nothing(tmp_path):
    from tests.conftest import cli_json_here, write_config

    config = write_config(tmp_path / "c.yaml", dataset="g", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 1})
    wh = str(tmp_path / "wh")
    built = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", wh, "--format", "json")
    junk = ResponseCache(tmp_path / "wh" / "_cache")
    _put_all(junk, {f"unused-{i}": "x" for i in range(25)})
    junk.close()
    summary = cli_json_here("cache", "gc", "--keep-versions", "1", "--warehouse", wh, "--format", "json")
    assert summary["entries_before"] - summary["entries_after"] == summary["dropped"] >= 25
    assert ResponseCache(tmp_path / "wh" / "_cache").get("unused-3") is None
    rebuilt = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", wh, "--format", "json")
    assert rebuilt["llm"]["requests"] == 0 and rebuilt["llm"]["calls"] == built["llm"]["calls"]
