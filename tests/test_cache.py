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
