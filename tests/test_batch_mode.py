"""llm.mode: batch — requests go out in Batch API files to the simulator's /v1/files and
/v1/batches, and a build killed while batches are out collects them when run again."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from memsynth.core.errors import ConfigError
from memsynth.generation.registry import load_config
from memsynth.simulator.batches import BatchFaults
from tests.conftest import ROOT, cli_json_here, start_simulator, write_config
from tests.test_cluster import _recipe_rows

ENV = {"OPENAI_API_KEY": "test"}
PRICE = {"input_per_1m": 2.0, "output_per_1m": 8.0}  # batch: half of each, by default
QUICK = {"gather_s": 0.2, "max_wait_s": 5, "poll_s": 0.1, "poll_cap_s": 0.5}


def _llm(base_url: str, **extra) -> dict:
    return {"model": "test-model", "stage_variables": True, "concurrency": 8, "base_url": base_url,
            "prices": {"test-model": PRICE}, **extra}


def _stats(simulator) -> dict:
    with urllib.request.urlopen(simulator.base_url.removesuffix("/v1") + "/stats") as response:
        return json.load(response)


def _build(config: Path, warehouse: Path) -> dict:
    return cli_json_here("build", str(config), "--warehouse", str(warehouse), "--no-progress", "--format", "json",
                         env=ENV)


def test_a_batch_build_publishes_the_online_build_s_rows_at_the_batch_price(tmp_path: Path):
    # Lines 3 and 40 of all the batches fail: their requests go into a later batch.
    simulator = start_simulator(batch_faults=BatchFaults(delay_s=0.1, failed_lines=(3, 40)))
    try:
        online = write_config(tmp_path / "online.yaml", personas={"count": 2}, llm=_llm(simulator.base_url))
        batch = write_config(tmp_path / "batch.yaml", personas={"count": 2},
                             llm=_llm(simulator.base_url, mode="batch", batch=QUICK))
        first = _build(online, tmp_path / "a")
        online_requests = _stats(simulator)["requests"]
        second = _build(batch, tmp_path / "b")
        stats = _stats(simulator)
    finally:
        simulator.stop()
    assert load_config(batch).hash() == load_config(online).hash()  # the mode is not part of the data
    # Every answer came in a batch: the one chat completion POSTed was the capability probe's.
    assert second["llm"]["probe_requests"] == 1
    assert stats["requests"] == online_requests + 1
    assert second["batch"]["submitted"] == stats["batches_created"] >= 5  # about one per step of the chain
    assert stats["batch_lines_failed"] == 2 and second["batch"]["lines_failed"] == 2
    assert stats["batch_paid_twice"] == 0
    assert second["batch"]["lines"] == stats["batch_lines"] == second["llm"]["requests"]
    assert second["llm"]["retries"] == 2
    rows_online, rows_batch = _recipe_rows(online, tmp_path / "a"), _recipe_rows(batch, tmp_path / "b")
    assert sum(len(r) for r in rows_online.values()) > 100
    assert rows_batch == rows_online
    assert second["row_counts"] == first["row_counts"]
    # Same tokens, half the price per token.
    llm_a, llm_b = first["llm"], second["llm"]
    assert (llm_b["prompt_tokens"], llm_b["completion_tokens"]) == (llm_a["prompt_tokens"], llm_a["completion_tokens"])
    expected = (llm_b["prompt_tokens"] * 1.0 + llm_b["completion_tokens"] * 4.0) / 1e6
    assert llm_b["estimated_cost_usd"] == pytest.approx(expected, rel=1e-6)
    assert llm_a["estimated_cost_usd"] == pytest.approx(2 * expected, rel=1e-6)


def test_a_build_killed_with_batches_out_collects_them_when_run_again(tmp_path: Path):
    simulator = start_simulator(batch_faults=BatchFaults(delay_s=1.5))
    try:
        config = write_config(tmp_path / "batch.yaml", personas={"count": 2}, cache_dir=str(tmp_path / "cache"),
                              llm=_llm(simulator.base_url, mode="batch", batch=QUICK))
        command = [sys.executable, "-m", "memsynth.cli", "build", str(config), "--warehouse", str(tmp_path / "w"),
                   "--no-progress", "--format", "json"]
        victim = subprocess.Popen(command, env={**os.environ, **ENV}, cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            # Wait until a later batch is out (the first ones collected), then kill it hard.
            while _stats(simulator)["batches_created"] < 3 and time.monotonic() < deadline:
                time.sleep(0.05)
            assert victim.poll() is None
            time.sleep(0.3)  # the batch is recorded before the build waits on it
            victim.send_signal(signal.SIGKILL)
            victim.wait(30)
        finally:
            if victim.poll() is None:
                victim.kill()
        before = _stats(simulator)
        with sqlite3.connect(tmp_path / "cache" / "batches.sqlite") as journal:
            out = journal.execute("SELECT count(*) FROM batches WHERE batch_id IS NOT NULL").fetchone()[0]
        assert out >= 1  # the killed build left a batch out, recorded

        summary = _build(config, tmp_path / "w")
        after = _stats(simulator)
    finally:
        simulator.stop()
    assert summary["batch"]["resumed"] == out
    assert after["batch_paid_twice"] == 0  # no line was sent again after it had been answered
    assert after["batches_created"] - before["batches_created"] == summary["batch"]["submitted"]
    with sqlite3.connect(tmp_path / "cache" / "batches.sqlite") as journal:
        assert journal.execute("SELECT count(*) FROM batches").fetchone()[0] == 0
        assert journal.execute("SELECT count(*) FROM lines").fetchone()[0] == 0
    assert summary["row_counts"]["support_dialogues"] > 0


def test_batch_mode_refuses_the_dask_runner(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", runner="dask", llm={"mode": "batch"})
    with pytest.raises(ConfigError, match="runner: thread"):
        load_config(config)


def test_a_batch_uploaded_but_not_recorded_as_created_is_found_by_its_file(tmp_path: Path):
    # A build killed between creating a batch and recording it: the next run lists the
    # provider's batches, adopts the one made from its file, and sends nothing again.
    import asyncio

    import openai

    from memsynth.llm.batch import BatchQueue, BatchSettings
    from memsynth.llm.request import LLMResponse

    simulator = start_simulator(batch_faults=BatchFaults(delay_s=0.1))
    kept: dict[str, dict] = {}

    async def keep(custom_id: str, body: dict, stage: str, model: str) -> LLMResponse:
        kept[custom_id] = body
        return LLMResponse(content=body["choices"][0]["message"]["content"], finish_reason="stop",
                           prompt_tokens=1, completion_tokens=1, model=model)

    def body(text: str) -> dict:
        return {"model": "m", "messages": [{"role": "user", "content": text}]}

    async def scenario() -> tuple[str, str]:
        client = openai.AsyncOpenAI(api_key="test", base_url=simulator.base_url)
        settings = BatchSettings(gather_s=0.05, poll_s=0.05)
        killed = BatchQueue(lambda: client, tmp_path, settings, keep)
        line = json.dumps({"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions", "body": body("one")})
        adopted = await client.files.create(file=("b.jsonl", line.encode(), "application/jsonl"), purpose="batch")
        await client.batches.create(input_file_id=adopted.id, endpoint="/v1/chat/completions",
                                    completion_window="24h")
        killed.journal.uploaded(adopted.id, [("k1", "s", "m")])
        # And one whose batch was never created: its line is asked again.
        line = json.dumps({"custom_id": "k2", "method": "POST", "url": "/v1/chat/completions", "body": body("two")})
        orphan = await client.files.create(file=("b.jsonl", line.encode(), "application/jsonl"), purpose="batch")
        killed.journal.uploaded(orphan.id, [("k2", "s", "m")])
        killed.journal.close()

        queue = BatchQueue(lambda: client, tmp_path, settings, keep)
        one, two = await asyncio.gather(queue.answer("k1", body("one"), "s", "m"),
                                        queue.answer("k2", body("two"), "s", "m"))
        counters = queue.counters
        await queue.aclose()
        await client.close()
        assert counters.resumed == 1 and counters.submitted == 1
        return one.content, two.content

    try:
        one, two = asyncio.run(scenario())
        stats = _stats(simulator)
    finally:
        simulator.stop()
    assert one and two and set(kept) == {"k1", "k2"}
    assert stats["batches_created"] == 2 and stats["batch_lines"] == 2 and stats["batch_paid_twice"] == 0
    with sqlite3.connect(tmp_path / "batches.sqlite") as journal:
        assert journal.execute("SELECT count(*) FROM batches").fetchone()[0] == 0
