"""Real servers' behaviour, reproduced by the simulator's profiles (issue 33)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from aiohttp import web

from memsynth.simulator.profiles import PROFILES
from memsynth.simulator.server import Faults, Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here, memsynth_cli, write_config
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
        result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"), "--no-progress", env=env)
        assert result.returncode == 1
        line = result.stderr.strip().splitlines()[-1]
        assert line.startswith("error: ") and "set llm.response_mode: auto" in line, result.stderr[-1500:]
        assert sim.simulator.counters.requests == 1, "a refusal of the request itself is not retried"
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
    """Refused from /models in one line listing the served names, before any chat request."""
    with SimulatorThread(Simulator(models=("gpt-4o-mini", "gpt-4o"))) as sim:
        line = _refused_line(tmp_path, sim, model="gpt-4o-mni")
        assert "does not serve the model 'gpt-4o-mni'; it serves gpt-4o-mini, gpt-4o" in line, line
        assert "set llm.model (or $MEMSYNTH_MODEL)" in line
        assert sim.simulator.counters.requests == 0, "nothing is paid for a name the server does not serve"


def test_a_model_not_pulled_is_refused_with_a_set_response_mode_too(tmp_path):
    """With response_mode set (no chat probe) the name is still checked at /models: Ollama's
    profile, a model not pulled."""
    with SimulatorThread(Simulator(models=("gpt-4o-mini",), profile="ollama")) as sim:
        line = _refused_line(tmp_path, sim, model="llama3", response_mode="json_schema")
        assert 'does not serve the model \'llama3\'; it serves gpt-4o-mini' in line, line


def test_a_base_url_without_v1_says_so(tmp_path):
    with SimulatorThread(Simulator()) as sim:
        root = sim.base_url.removesuffix("/v1")
        line = _refused_line(tmp_path, sim, model="m", base_url=root)
        assert "has no /models" in line and "does not end in /v1" in line, line
        assert sim.simulator.counters.requests == 0


def _quickstart(tmp_path: Path, sim: SimulatorThread, name: str, **llm) -> Path:
    """configs/quickstart.yaml pointed at a served simulator, as a user points it at a server."""
    config = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    config["dataset"] = name
    config["llm"] = {**config.get("llm", {}), "base_url": sim.base_url, "stage_variables": True,
                     "retry_base_s": 0.01, **llm}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return path


FORMAT_SENT = {"openai": "json_schema", "vllm": "json_schema", "ollama": "json_schema",
               "llamacpp": "json_object_schema"}


@pytest.mark.parametrize("profile", sorted(PROFILES))
def test_the_quickstart_builds_on_every_server_profile_with_auto(tmp_path, profile):
    """auto (the default) probes the server once, uses the strongest form it enforces, records
    it in the version, and a rebuild sends nothing at all (the probe is kept)."""
    with SimulatorThread(Simulator(profile=profile, models=("local-model",))) as sim:
        sim.simulator.record = True
        config = _quickstart(tmp_path, sim, f"qs_{profile}", model="local-model")
        summary = _build(config, tmp_path / "wh", "--personas", "1", env={"OPENAI_API_KEY": "x"})
        assert summary["version"] == 1 and summary["row_counts"]["benchmark"] > 0, summary["row_counts"]
        mode = FORMAT_SENT[profile]
        assert summary["llm"]["response_mode"] == mode
        probes = summary["llm"]["probe_requests"]
        assert probes == (1 if mode == "json_schema" else 2)
        built = [b for b in sim.simulator.recorded if "memsynth" in b]
        formats = {json.dumps(b["response_format"], sort_keys=True)[:60] for b in built}
        if mode == "json_schema":
            assert {b["response_format"]["type"] for b in built} == {"json_schema"}, formats
        else:  # the schema in llama-cpp-python's own field, and in the prompt for its meaning
            assert all(b["response_format"]["type"] == "json_object" and "properties" in b["response_format"]["schema"]
                       for b in built), formats
            assert all("<json-schema" in b["messages"][0]["content"] for b in built)
        shown = cli_json_here("versions", f"qs_{profile}", "--warehouse", str(tmp_path / "wh"), "--show", "1",
                              "--format", "json")
        assert shown["config"]["llm"]["response_mode"] == mode
        sent = sim.simulator.counters.requests
        again = _build(config, tmp_path / "wh", "--personas", "1", env={"OPENAI_API_KEY": "x"})
        assert again["llm"]["requests"] == 0 and again["llm"]["probe_requests"] == 0
        assert sim.simulator.counters.requests == sent, "a rebuild reads the kept probe"


def test_a_server_that_accepts_a_schema_field_but_ignores_it_gets_the_schema_in_the_prompt(tmp_path):
    """Ollama Cloud takes json_schema without enforcing it: the probe's answer lacks the key it
    required, so the build falls back to JSON mode with the schema in the prompt."""
    with SimulatorThread(Simulator(models=("m",))) as sim:
        sim.simulator.script("probe", ['{"answer": 1}'])  # json_schema accepted, not enforced
        config = write_config(tmp_path / "c.yaml", dataset="lax", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 4})
        summary = _build(config, tmp_path / "wh", env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"})
        assert summary["llm"]["response_mode"] == "json_object"


def test_a_long_answer_grows_to_the_context_vllm_lists_and_never_past_it(tmp_path):
    """max_tokens_ceiling unset: a cut-off answer is asked again with max_tokens doubled up to
    the context /models gives (less the prompt), so vLLM never refuses it as too long."""
    faults = Faults(schedule=("ok", "truncated", "truncated", "truncated", "truncated"))
    with SimulatorThread(Simulator(profile="vllm", models=("m",), faults=faults)) as sim:
        sim.simulator.record = True
        config = write_config(tmp_path / "c.yaml", dataset="long", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 1, "max_tokens": 2048})
        summary = _build(config, tmp_path / "wh", env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"})
        assert summary["version"] == 1
        asked = [b["max_tokens"] for b in sim.simulator.recorded[1:5]]
        assert asked[0] == 2048 and asked[1] == 4096 and 4096 < asked[2] < 8192 and asked[3] == asked[2], asked
        assert "too_long" not in sim.simulator.counters.by_outcome


def test_a_slow_server_that_is_working_is_never_asked_twice(tmp_path):
    """A local server at 1500 tokens a second writes most answers for longer than the 0.2 s
    the build waits for a whole answer. Streamed (the default), the wait is for silence (1 s
    without a token), not for the whole answer:
    every answer arrives once, nothing is abandoned or re-sent, and the server generated
    exactly the tokens the build counts."""
    rate = 1500
    with SimulatorThread(Simulator(profile="llamacpp", models=("m",), token_rate=rate)) as sim:
        config = write_config(tmp_path / "c.yaml", dataset="slow", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 8, "retry_base_s": 0.01,
                                   "response_mode": "json_object_schema", "timeout_s": 0.2, "idle_timeout_s": 1,
                                   "base_url": sim.base_url})
        summary = _build(config, tmp_path / "wh", env={"OPENAI_API_KEY": "x"})
        assert summary["version"] == 1
        llm, seen = summary["llm"], sim.simulator.counters
        assert llm["retries"] == 0 and llm["abandoned"] == 0, llm
        assert llm["requests"] == seen.requests and "disconnected" not in seen.by_outcome
        assert llm["completion_tokens"] == seen.completion_tokens and llm["prompt_tokens"] == seen.prompt_tokens
        # The average answer took longer than the 0.2 s a whole answer may take when not streamed.
        assert seen.completion_tokens / seen.requests / rate > 0.2, seen.completion_tokens / seen.requests


def test_a_one_slot_server_keeps_generating_what_a_client_gave_up_on_unless_streamed(tmp_path):
    """llama.cpp runs one request at a time and finishes an answer sent whole even after the
    client left. Not streamed, with a total timeout shorter than an answer, answers are given
    up on and asked again while the server still writes them: the issue's snowball. Streamed,
    at the server's one slot, every answer is read once and nothing is made for nobody."""
    def config(name: str, sim: SimulatorThread, **llm) -> Path:
        return write_config(tmp_path / f"{name}.yaml", dataset=name, personas={"count": 1},
                            recipe_options={"dialogues_per_persona": 0},
                            llm={"model": "m", "stage_variables": True, "retry_base_s": 0.01, "timeout_s": 0.03,
                                 "response_mode": "json_object_schema", "base_url": sim.base_url, **llm})

    def one_slot(rate: float) -> Simulator:  # an answer of ~250 tokens takes ~0.04 s at 6000: past the 0.03 s timeout
        return Simulator(profile="llamacpp", models=("m", ), token_rate=rate, capacity=1)

    env = {**os.environ, "OPENAI_API_KEY": "x"}
    with SimulatorThread(one_slot(6000)) as sim:
        path = config("whole", sim, stream=False, concurrency=4)
        build = subprocess.Popen([sys.executable, "-m", "memsynth.cli", "build", str(path), "--warehouse",
                                  str(tmp_path / "wh"), "--no-progress"], env=env, cwd=ROOT,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 120
            while sim.simulator.counters.by_outcome.get("generated_for_nobody", 0) < 3:
                assert build.poll() is None and time.monotonic() < deadline, sim.simulator.counters.by_outcome
                time.sleep(0.1)
        finally:
            build.kill()
            build.wait()
    # Streamed, the whole build runs one answer at a time: at 10000 tokens a second its average
    # answer (~390 tokens) still takes longer than the 0.03 s timeout.
    rate = 10000
    with SimulatorThread(one_slot(rate)) as sim:
        summary = _build(config("streamed", sim, concurrency=1, idle_timeout_s=1), tmp_path / "wh", env=env)
        llm, seen = summary["llm"], sim.simulator.counters
        assert "generated_for_nobody" not in seen.by_outcome and "disconnected" not in seen.by_outcome
        assert llm["retries"] == 0 and llm["abandoned"] == 0, llm
        assert llm["completion_tokens"] == seen.completion_tokens
        # Longer than the 0.03 s an unstreamed answer may take.
        assert seen.completion_tokens / seen.requests / rate > 0.03, seen.completion_tokens / seen.requests


@pytest.mark.parametrize("ignores_seed", [False, True])
def test_the_probe_learns_whether_the_seed_makes_an_answer_repeat(tmp_path, ignores_seed):
    """Two sampled answers under one seed: equal on a server that honours it, not on one that
    samples afresh; the summary says which, and the record is kept for the next build."""
    with SimulatorThread(Simulator(models=("m",), ignores_seed=ignores_seed)) as sim:
        env = {"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"}
        config = write_config(tmp_path / "c.yaml", dataset="seeded", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 4, "seed": 5})
        summary = _build(config, tmp_path / "wh", env=env)
        assert summary["llm"]["seed_honoured"] is (not ignores_seed)
        assert summary["llm"]["probe_requests"] == 3  # json_schema, then the seed's two samples
        again = _build(config, tmp_path / "wh", env=env)
        assert again["llm"]["probe_requests"] == 0


def test_a_request_longer_than_the_context_is_a_setting_to_change_not_an_outage(tmp_path):
    """vLLM refuses max_tokens past its context with a 400: one line naming the setting, at once.
    (Sent each stage's budget, as by default, enpmr's requests stay well inside the context.)"""
    with SimulatorThread(Simulator(profile="vllm", models=("m",))) as sim:
        line = _refused_line(tmp_path, sim, model="m", max_tokens=9000, budgets=False)
        assert "maximum context length is 8192 tokens" in line and "lower llm.max_tokens" in line, line
        assert sim.simulator.counters.by_outcome == {"ok": 1, "too_long": 1}  # the probe, then one refusal


def test_a_server_that_refuses_seed_gets_requests_without_it(tmp_path):
    """The probe sees the refusal of `seed` and the build sends none (the version says so)."""
    with SimulatorThread(Simulator(models=("m",))) as sim:
        sim.simulator.record = True
        original = sim.simulator._profile_refusal

        def no_seed(body):
            if "seed" in body:
                return web.json_response({"error": {"message": "Unrecognized request argument: seed"}}, status=400)
            return original(body)

        sim.simulator._profile_refusal = no_seed
        config = write_config(tmp_path / "c.yaml", dataset="noseed", personas={"count": 1},
                              recipe_options={"dialogues_per_persona": 0},
                              llm={"model": "m", "stage_variables": True, "concurrency": 4, "seed": 5})
        summary = _build(config, tmp_path / "wh", env={"OPENAI_BASE_URL": sim.base_url, "OPENAI_API_KEY": "x"})
        assert summary["version"] == 1
        assert not [b for b in sim.simulator.recorded if "memsynth" in b and "seed" in b]
        shown = cli_json_here("versions", "noseed", "--warehouse", str(tmp_path / "wh"), "--show", "1", "--format", "json")
        assert shown["config"]["llm"]["seed"] is None


def test_a_password_in_the_base_url_is_kept_nowhere_by_the_probe(tmp_path):
    """The kept capability record and the probe's error lines mask a URL's user:password."""
    from memsynth.core.errors import BuildFailed
    from memsynth.llm.capabilities import learn

    with SimulatorThread(Simulator(models=("m",))) as sim:
        url = sim.base_url.replace("http://", "http://user:sekrit@")
        found = learn(tmp_path, url, "k", "m", probe_formats=True)
        assert found.response_mode == "json_schema"
        kept = "".join(p.read_text() for p in (tmp_path / "endpoints").glob("*.json"))
        assert kept and "sekrit" not in kept and "***@" in kept
    with pytest.raises(BuildFailed) as refused:
        learn(tmp_path / "x", "http://user:sekrit@127.0.0.1:9/v1", "k", "m", probe_formats=True)
    assert "sekrit" not in str(refused.value) and "cannot reach" in str(refused.value)
