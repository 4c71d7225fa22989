"""A build that changes nothing publishes nothing: the latest version stays current. "Nothing"
is the same config, code, prompts, schemas, options, model and regenerations, and the same
rows in every table (`llm_calls` aside), whatever order the shards wrote them in."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from pydantic import BaseModel

from memsynth.core.records import LLM_CALLS
from memsynth.core.tables import Table
from memsynth.warehouse.catalog import list_versions
from memsynth.warehouse.publish import publish
from memsynth.warehouse.staging import StagingArea
from tests.test_warehouse import Row, T, _info


class Call(BaseModel):
    call_id: str
    latency_s: float


CALLS = Table(LLM_CALLS.name, Call)


def _build(root: Path, shards: list[list[Row]], n: int, *, latency: float = 0.1, skip: bool = True, **info):
    staging = StagingArea(root / "d", f"b{n}")
    for i, rows in enumerate(shards):
        staging.write(T, f"shard-{i}", rows)
    staging.write(CALLS, "shard-0", [Call(call_id="c1", latency_s=latency)])
    try:
        return publish(root, "d", {"things": staging.files("things"), "llm_calls": staging.files("llm_calls")},
                       dataclasses.replace(_info(n), **info), skip_unchanged=skip)
    finally:
        staging.discard()


A, B, C = Row(id=1, tags=["好"], extra={"k": 1}), Row(id=2, tags=[], extra={}), Row(id=3, tags=["x"], extra={})


def test_the_same_rows_in_another_order_and_another_call_log_publish_nothing(tmp_path: Path):
    first = _build(tmp_path, [[A, B], [C]], 1)
    assert first["version"] == 1 and not first.get("unchanged")
    again = _build(tmp_path, [[C], [B, A]], 2, latency=9.9)  # shards in another order, other timings
    assert again["unchanged"] and again["version"] == 1 and again["row_counts"] == {"things": 3, "llm_calls": 1}
    assert [v["version"] for v in list_versions(tmp_path, "d")] == [1]
    forced = _build(tmp_path, [[A, B, C]], 3, skip=False)  # --publish-unchanged
    assert forced["version"] == 2 and not forced.get("unchanged")


@pytest.mark.parametrize("change", [
    {"rows": [[A, B]]},  # a row fewer
    {"rows": [[A, B, Row(id=3, tags=["y"], extra={})]]},  # one value of one row
    {"config_hash": "h2"},
    {"memsynth_version": "1"},
    {"prompt_hashes": {"enpmr/profile.j2": "p2"}},
    {"schema_hashes": {"enpmr_profile": "s2"}},
    {"options_hash": "o2"},
    {"model": "another"},
    {"regenerations": {"p1": {"enpmr.profile": "from-v1"}}},
], ids=lambda c: next(iter(c)))
def test_anything_changed_publishes_a_version(tmp_path: Path, change):
    _build(tmp_path, [[A, B, C]], 1)
    info = {k: v for k, v in change.items() if k != "rows"}
    changed = _build(tmp_path, change.get("rows", [[A, B, C]]), 2, **info)
    assert changed["version"] == 2 and not changed.get("unchanged")


def test_a_version_written_before_content_hashes_were_recorded_is_not_taken_as_unchanged(tmp_path: Path):
    _build(tmp_path, [[A]], 1)
    from memsynth.warehouse.publish import open_for_write

    con = open_for_write(tmp_path / "d")
    try:
        con.execute("UPDATE lake.versions SET content_hashes = NULL")
    finally:
        con.close()
    assert _build(tmp_path, [[A]], 2)["version"] == 2
