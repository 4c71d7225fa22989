"""A server that hands its one slot to the next request mid-answer, as llama-cpp-python's does
by default (`interrupt_requests`): every streamed answer but one ends early with `[DONE]` and
no finish_reason. At memsynth's default settings (`concurrency: auto`, 32 in flight at first)
each was retried into the same queue until the endpoint's failure budget ran out (the real
server's run in bench/RESULTS.md: "failed a request 40 times in a row while answering
others"). Now two such cuts pin the build to one request at a time, and the summary says why.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from memsynth.llm.limits import AdaptiveConcurrency, AutoConcurrency
from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here

SAMPLE = ROOT / "tests" / "data" / "characters_sample.zh.json"


def test_two_cuts_while_others_are_in_flight_pin_auto_and_fixed_concurrency_to_one():
    for limit in (AutoConcurrency(64), AdaptiveConcurrency(8)):
        limit.on_cut()
        assert int(limit.ceiling) > 1 and not limit.preempts  # once may be a glitch
        limit.on_cut()
        assert limit.preempts and int(limit.ceiling) == 1 and limit.maximum == 1
        limit.on_success(1.0, 100)  # answers that come later never raise it again
        assert int(limit.ceiling) == 1
        assert "interrupt_requests" in str(limit.report()["why"])


def test_annotate_at_default_settings_on_an_interrupting_one_slot_server_scores_every_item(tmp_path):
    wh = tmp_path / "wh"
    cli_json_here("import", "characters", str(SAMPLE), "--dataset", "roles", "--warehouse", str(wh), "--format", "json")
    # Stage variables: what lets the simulator answer a stage as its checks expect; nothing else.
    llm = tmp_path / "llm.yaml"
    llm.write_text(yaml.safe_dump({"llm": {"stage_variables": True}}), encoding="utf-8")
    sim = Simulator(profile="llamacpp", token_rate=400, capacity=1, interrupts=True)
    with SimulatorThread(sim) as served:
        summary = cli_json_here("annotate", "emotions", "--dataset", "roles", "--warehouse", str(wh), "--no-progress",
                                "--format", "json", "--llm-config", str(llm), "--base-url", served.base_url,
                                "--model", "local",
                                env={"OPENAI_API_KEY": "x"})
        outcomes = dict(served.simulator.counters.by_outcome)
    assert summary["annotated"] == summary["items"] == 17 and summary["failed"] == 0, summary
    assert outcomes.get("interrupted", 0) >= 2, outcomes  # the server did cut answers short
    report = summary["llm"]["concurrency"]
    assert report["concurrency"] == 1 and "interrupt_requests" in report["why"], report


def test_the_simulator_cuts_a_streamed_answer_only_while_another_request_waits(tmp_path: Path):
    """One request alone is answered whole: the cut is the server's, not a broken stream."""
    import httpx

    sim = Simulator(profile="llamacpp", token_rate=2000, capacity=1, interrupts=True)
    with SimulatorThread(sim) as served:
        body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": "hello"}]}
        with httpx.stream("POST", f"{served.base_url}/chat/completions", json=body, timeout=30,
                          headers={"Authorization": "Bearer x"}) as r:
            lines = [line for line in r.iter_lines() if line.startswith("data:")]
    assert lines[-1] == "data: [DONE]" and '"finish_reason": "stop"' in "".join(lines)
    assert "interrupted" not in served.simulator.counters.by_outcome
