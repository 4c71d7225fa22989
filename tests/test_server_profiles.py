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


def _refused_line(tmp_path, sim, **llm) -> str:
    env = {"OPENAI_BASE_URL": llm.pop("base_url", sim.base_url), "OPENAI_API_KEY": "x"}
    config = write_config(tmp_path / "c.yaml", dataset="named", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0},
                          llm={"stage_variables": True, "concurrency": 1, **llm})
    result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"), "--no-progress", env=env)
    assert result.returncode == 1, result.stdout[-1000:]
    (line,) = result.stderr.strip().splitlines()
    return line


def test_a_model_the_server_does_not_serve_is_named_with_those_it_does(tmp_path):
    """OpenAI answers an unknown model with a 404: one line listing the served names, at once."""
    with SimulatorThread(Simulator(models=("gpt-4o-mini", "gpt-4o"))) as sim:
        line = _refused_line(tmp_path, sim, model="gpt-4o-mni")
        assert "the model 'gpt-4o-mni' is not served there (it serves gpt-4o-mini, gpt-4o)" in line, line
        assert "set llm.model or $MEMSYNTH_MODEL" in line
        assert sim.simulator.counters.requests == 1


def test_a_base_url_without_v1_says_so(tmp_path):
    with SimulatorThread(Simulator()) as sim:
        root = sim.base_url.removesuffix("/v1")
        line = _refused_line(tmp_path, sim, model="m", base_url=root)
        assert "HTTP 404" in line and f"the base URL {root} does not end in /v1" in line, line
