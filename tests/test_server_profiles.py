"""Real servers' behaviour, reproduced by the simulator's profiles (issue 33)."""

from __future__ import annotations

import time

from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import memsynth_cli, write_config
from tests.test_cli import _build


def test_a_server_that_refuses_json_schema_stops_the_build_at_once_saying_what_to_set(tmp_path):
    """llama.cpp answers a json_schema response_format with HTTP 500: that is the request, not
    an outage — one line naming llm.response_mode, after one request, nothing retried."""
    with SimulatorThread(Simulator(profile="llamacpp")) as sim:
        env = {"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        config = write_config(tmp_path / "c.yaml", dataset="llama", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 1,
                                   "response_mode": "json_schema"})
        started = time.monotonic()
        result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"), "--no-progress", env=env)
        took = time.monotonic() - started
        assert result.returncode == 1
        line = result.stderr.strip().splitlines()[-1]
        assert line.startswith("error: ") and "set llm.response_mode: json_object" in line, result.stderr[-1500:]
        assert sim.simulator.counters.requests == 1, "a refusal of the request itself is not retried"
        assert took < 60, took
        # With the setting it names, the same server builds.
        fixed = write_config(tmp_path / "ok.yaml", dataset="llama", personas={"count": 1},
                             recipe_options={"dialogues_per_persona": 0},
                             llm={"model": "m", "stage_variables": True, "concurrency": 4,
                                  "response_mode": "json_object"})
        summary = _build(fixed, tmp_path / "wh", env=env)
        assert summary["version"] == 1 and summary["row_counts"]["memories"] > 0
