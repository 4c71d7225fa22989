"""Every command that calls a model takes a build's endpoint settings (issue 50, part 3):
`annotate`, `eval` (the judge its own endpoint) and `build --estimate`, from a file or from
flags; and what a probe learnt about one endpoint is never taken for another's."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsynth.core.config import BuildConfig, Learnt, LLMConfig, read_llm_config, with_llm
from memsynth.core.errors import ConfigError
from memsynth.generation.endpoints import EndpointChoice, choose, with_judge
from memsynth.generation.session import SIMULATOR_ENDPOINT, endpoint_key, resolve_capabilities
from memsynth.simulator.server import Simulator, SimulatorThread
from tests.conftest import ROOT, cli_json_here, memsynth_cli

SAMPLE = ROOT / "tests" / "data" / "characters_sample.zh.json"
ENV = {"OPENAI_API_KEY": "x"}


def one_slot() -> Simulator:
    """llama-cpp-python as the issue met it: one slot, answers written token by token (~0.35 s
    an emotion score), the rest waiting in a silent queue."""
    return Simulator(profile="llamacpp", token_rate=400, capacity=1)


def imported(wh: Path) -> str:
    cli_json_here("import", "characters", str(SAMPLE), "--dataset", "roles", "--warehouse", str(wh), "--format", "json")
    return str(wh)


def served(path: Path, **llm) -> Path:
    """An llm block for a served simulator, which answers from the stage variables."""
    path.write_text(yaml.safe_dump({"llm": {"stage_variables": True, **llm}}), encoding="utf-8")
    return path


def annotate(wh: str, *flags: str) -> dict:
    return cli_json_here("annotate", "emotions", "--dataset", "roles", "--warehouse", wh, "--no-progress",
                         "--format", "json", *flags, env=ENV)


def test_annotate_on_a_one_slot_local_server_at_default_settings_completes_with_nothing_abandoned(tmp_path):
    """An imported CharacterEval sample, scored on llama.cpp's profile: the imported version's
    llm block says nothing of this server, so it is probed (json_schema refused, the schema
    beside json_object enforced), and every item is answered once."""
    wh = imported(tmp_path / "wh")
    with SimulatorThread(one_slot()) as sim:
        summary = annotate(wh, "--llm-config", str(served(tmp_path / "llm.yaml", model="local")),
                           "--base-url", sim.base_url)
        seen = sim.simulator.counters
    assert summary["annotated"] == summary["items"] == 17 and summary["failed"] == 0
    llm = summary["llm"]
    assert llm["response_mode"] == "json_object_schema" and llm["probe_requests"] == 2, llm
    assert llm["abandoned"] == 0 and llm["retries"] == 0, llm
    assert llm["endpoint"] == f"{sim.base_url} local"
    assert "disconnected" not in seen.by_outcome and seen.by_outcome.get("profile_refused") == 1, seen.by_outcome
    assert llm["requests"] + llm["probe_requests"] == seen.requests
    recorded = cli_json_here("versions", "roles", "--warehouse", wh, "--show", str(summary["version"]),
                             "--format", "json")["config"]["llm"]
    assert recorded["base_url"] == sim.base_url and recorded["model"] == "local"
    assert recorded["learnt"]["endpoint"] == llm["endpoint"] and recorded["learnt"]["response_mode"] == "auto"


def test_concurrency_from_the_flags_reaches_the_engine(tmp_path):
    """--concurrency 1 holds one request in flight (the probe's included); `auto` is taken."""
    wh = imported(tmp_path / "wh")
    block = str(served(tmp_path / "llm.yaml", model="local"))
    with SimulatorThread(Simulator(profile="llamacpp", token_rate=2000)) as sim:
        one = annotate(wh, "--llm-config", block, "--base-url", sim.base_url, "--concurrency", "1")
        assert sim.simulator.counters.peak_in_flight == 1 and one["failed"] == 0
    with SimulatorThread(Simulator(profile="llamacpp", token_rate=2000)) as sim:
        # Another model name: not one answer is in the cache, so all 17 are asked.
        auto = annotate(wh, "--version", "1", "--llm-config", block, "--base-url", sim.base_url,
                        "--model", "local2", "--concurrency", "auto")
        assert sim.simulator.counters.peak_in_flight > 1
    assert auto["failed"] == 0
    recorded = cli_json_here("versions", "roles", "--warehouse", wh, "--show", str(auto["version"]),
                             "--format", "json")["config"]["llm"]
    assert recorded["concurrency_auto"] is True


def test_a_version_learnt_on_the_simulator_is_probed_again_on_another_server(tmp_path):
    """The issue's failure: a version made on the built-in simulator records json_schema (what
    the simulator takes); annotated against llama.cpp with only --base-url, that mode is not
    reused (llama.cpp answers it with HTTP 500): the new server is probed and answered."""
    wh = imported(tmp_path / "wh")
    first = annotate(wh, "--llm", "simulator", "--llm-config", str(served(tmp_path / "llm.yaml", model="local")))
    assert first["llm"]["response_mode"] == "json_schema" and first["llm"]["endpoint"] == SIMULATOR_ENDPOINT
    with SimulatorThread(one_slot()) as sim:
        sim.simulator.record = True
        second = annotate(wh, "--base-url", sim.base_url)
        formats = {b.get("response_format", {}).get("type") for b in sim.simulator.recorded if "memsynth" in b}
        refused = sim.simulator.counters.by_outcome.get("profile_refused", 0)
    assert second["failed"] == 0 and second["llm"]["response_mode"] == "json_object_schema"
    assert second["llm"]["probe_requests"] == 2 and refused == 1, "the probe's json_schema only"
    assert formats == {"json_object"}, formats
    # Back on an endpoint that takes json_schema, the llama.cpp mode is not kept either.
    with SimulatorThread(Simulator(models=("local",))) as sim:
        third = annotate(wh, "--base-url", sim.base_url)
    assert third["llm"]["response_mode"] == "json_schema" and third["failed"] == 0


def test_eval_scores_the_model_on_one_server_and_judges_on_another(tmp_path):
    """`eval response`: the model under test on a one-slot llama.cpp server, the judge on a
    second endpoint with its own model, key variable, concurrency and response mode."""
    from tests.conftest import write_config

    wh = tmp_path / "wh"
    config = write_config(tmp_path / "en.yaml", dataset="en", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 2})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(wh), "--format", "json")
    with SimulatorThread(one_slot()) as model, SimulatorThread(Simulator(models=("judge-m",))) as judge:
        model.simulator.record = judge.simulator.record = True
        run = cli_json_here("eval", "response", "--dataset", "en", "--warehouse", str(wh), "--format", "json",
                            "--systems", "base", "--limit", "2", "--base-url", model.base_url, "--model", "under-test",
                            "--judge-base-url", judge.base_url, "--judge-model", "judge-m", "--judge-api-key-env", "JUDGE_KEY",
                            "--judge-concurrency", "auto", "--judge-response-mode", "json_schema",
                            "--audit-rate", "1", env={**ENV, "JUDGE_KEY": "j"})
        asked = {b["memsynth"]["stage"] for b in model.simulator.recorded if "memsynth" in b}
        judged = {b["memsynth"]["stage"] for b in judge.simulator.recorded if "memsynth" in b}
        judge_models = {b["model"] for b in judge.simulator.recorded}
        keys = ({h.get("Authorization") for h in model.simulator.recorded_headers},
                {h.get("Authorization") for h in judge.simulator.recorded_headers})
        refused = model.simulator.counters.by_outcome.get("profile_refused", 0)
    # Every answer audited (--audit-rate 1), the replies of the model under test too: by the judge.
    assert asked == {"enpmr.eval_respond"}, asked
    assert judged == {"enpmr.eval_judge", "enpmr.audit_eval_judge", "enpmr.audit_eval_respond"}, judged
    assert judge_models == {"judge-m"} and refused == 1
    assert keys == ({"Bearer x"}, {"Bearer j"}), keys
    assert run["model"] == "under-test" and run["judge_model"] == "judge-m"
    assert run["settings"]["endpoint"] == f"{model.base_url} under-test"
    assert run["settings"]["judge_endpoint"] == f"{judge.base_url} judge-m"
    assert run["llm"]["abandoned"] == 0 and run["llm"]["retries"] == 0, run["llm"]
    audited = {(s["system"], s["metric"]): s["n"] for s in run["scores"] if s["scope"] == "audit"}
    assert audited == {("audit:enpmr.eval_respond", "eval-companion"): 2, ("audit:enpmr.eval_respond", "eval-reply"): 2,
                       ("audit:enpmr.eval_respond", "eval-chooses-memory"): 2, ("audit:enpmr.eval_judge", "eval-grades"): 2}, audited
    grades = {s["metric"]: s for s in run["scores"] if s["system"] == "base" and s["scope"] == "all"}
    assert grades["empathy"]["n"] == 2 and 1 <= grades["empathy"]["value"] <= 5


def test_estimate_takes_the_endpoint_flags_and_calls_no_endpoint(tmp_path):
    """`build --estimate` with the flags a build takes: priced at --model from the file's
    prices, and the endpoint they name is never called."""
    quick = yaml.safe_load((ROOT / "configs" / "quickstart.yaml").read_text(encoding="utf-8"))
    quick["dataset"] = "est"
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump(quick), encoding="utf-8")
    with SimulatorThread(one_slot()) as sim:
        block = served(tmp_path / "llm.yaml", base_url=sim.base_url, concurrency="auto",
                       prices={"local-q4": {"input_per_1m": 1.0, "output_per_1m": 2.0}})
        estimate = cli_json_here("build", str(config), "--estimate", "--personas", "1", "--llm-config", str(block),
                                 "--model", "local-q4", "--concurrency", "auto", "--response-mode", "auto",
                                 "--warehouse", str(tmp_path / "wh"), "--no-progress", "--format", "json", env=ENV)
        assert sim.simulator.counters.requests == 0 and not sim.simulator.counters.by_outcome
    assert estimate["model"] == "local-q4" and estimate["models"] == ["local-q4"]
    assert estimate["calls"] > 0 and estimate["cost_usd"]["online"] > 0
    assert not (tmp_path / "wh").exists() or not any((tmp_path / "wh").iterdir())


# --- the settings themselves -------------------------------------------------------------


def test_an_llm_block_reads_from_a_build_config_an_llm_file_or_bare_fields(tmp_path):
    for name, data in [("build.yaml", {"dataset": "d", "llm": {"model": "好模型", "concurrency": "auto"}}),
                       ("only.yaml", {"llm": {"model": "好模型", "concurrency": "auto"}}),
                       ("bare.yaml", {"model": "好模型", "concurrency": "auto"})]:
        path = tmp_path / name
        path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
        llm = read_llm_config(path)
        assert llm.model == "好模型" and llm.concurrency_auto and llm.concurrency == 512


@pytest.mark.parametrize("content, says", [
    ("llm: {concurrency: 0}", "llm.concurrency"),
    ("llm: {base_url: 'ftp://x/v1'}", "llm.base_url: "),
    ("llm: {base_url: 'http://u:hunter2@ bad/v1'}", "http://***@ bad/v1"),
    ("llm: {learnt: {endpoint: x, response_mode: auto}}", "set by memsynth's probe"),
    ("- a list", "expected a mapping"),
    ("llm: [unclosed", "not valid YAML"),
    ("respons_mode: auto", "respons_mode"),
])
def test_a_bad_llm_file_is_one_line_naming_the_setting(tmp_path, content, says):
    path = tmp_path / "llm.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        read_llm_config(path)
    assert says in str(caught.value) and "\n" not in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("flags, says", [
    (["--concurrency", "0"], "--concurrency"),
    (["--concurrency", "lots"], "whole number or `auto`"),
    (["--concurrency", "99999"], "llm.concurrency"),
    (["--base-url", "好"], "llm.base_url"),
    (["--response-mode", "xml"], "--response-mode"),
    (["--llm-config", "missing.yaml"], "config file not found"),
])
def test_bad_endpoint_flags_are_one_line_before_anything_is_sent(tmp_path, flags, says):
    wh = imported(tmp_path / "wh")
    result = memsynth_cli("annotate", "emotions", "--dataset", "roles", "--warehouse", wh, *flags, env=ENV)
    assert result.returncode != 0 and says in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert len(cli_json_here("versions", "roles", "--warehouse", wh, "--format", "json")) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=40), st.sampled_from(["base_url", "model", "api_key_env", "response_mode"]))
def test_any_text_in_an_endpoint_setting_is_taken_or_refused_in_one_line(text, field):
    """Unicode of every kind (CJK, full-width, emoji, RTL, NUL, lone surrogates) in a flag:
    a ConfigError line or a valid block, never another exception."""
    try:
        llm = with_llm(LLMConfig(), **{field: text})
    except ConfigError as exc:
        assert "\n" not in str(exc)
    else:
        assert getattr(llm, field) == text


def _version_config(**llm) -> BuildConfig:
    return BuildConfig.of_version({"dataset": "d", "llm": {"model": "m", **llm}})


class _Engine:
    """What resolve_capabilities asks of an engine: where it sends, and the probe's answer."""

    def __init__(self, base_url: str, mode: str, seed: bool = True):
        self.base_url = base_url
        self.cache = SimpleNamespace(read_enabled=True)
        self.asked: list[bool] = []
        self._found = SimpleNamespace(response_mode=mode, seed=seed)

    def learn_capabilities(self, model: str, *, probe_formats: bool, seed: int | None, refresh: bool):
        self.asked.append(probe_formats)
        return self._found


def test_a_learnt_mode_and_seed_hold_on_their_endpoint_only():
    config = _version_config(response_mode="auto", seed=7)
    a = _Engine("http://a:1/v1", "json_schema", seed=False)
    resolve_capabilities(config, a, "m", known=False)
    assert (config.llm.response_mode, config.llm.seed, a.asked) == ("json_schema", None, [True])
    assert config.llm.learnt == Learnt(endpoint=endpoint_key("http://a:1/v1", "m"), response_mode="auto", seed=7)
    recorded = config.model_dump(mode="json")
    again = choose(BuildConfig.of_version(recorded), EndpointChoice(), of_version=True)
    same = _Engine("http://a:1/v1", "text")
    resolve_capabilities(again, same, "m", known=False)
    assert (again.llm.response_mode, again.llm.seed, same.asked) == ("json_schema", None, [False])
    other = choose(BuildConfig.of_version(recorded), EndpointChoice(), of_version=True)
    b = _Engine("http://b:2/v1", "json_object_schema")
    resolve_capabilities(other, b, "m", known=False)
    assert (other.llm.response_mode, other.llm.seed, b.asked) == ("json_object_schema", 7, [True])
    # Another model on the same server is another endpoint too.
    model = choose(BuildConfig.of_version(recorded), EndpointChoice(), of_version=True)
    c = _Engine("http://a:1/v1", "json_object")
    resolve_capabilities(model, c, "m2", known=False)
    assert model.llm.response_mode == "json_object" and c.asked == [True]


def test_a_version_recorded_before_learnt_is_asked_anew_and_a_flag_wins():
    old = choose(_version_config(response_mode="json_schema"), EndpointChoice(), of_version=True)
    engine = _Engine("http://a:1/v1", "json_object_schema")
    resolve_capabilities(old, engine, "m", known=False)
    assert old.llm.response_mode == "json_object_schema" and engine.asked == [True]
    told = choose(_version_config(response_mode="json_schema"), EndpointChoice(response_mode="json_object"),
                  of_version=True)
    engine = _Engine("http://a:1/v1", "json_object_schema")
    resolve_capabilities(told, engine, "m", known=False)
    assert told.llm.response_mode == "json_object" and engine.asked == [False]


def test_naming_an_endpoint_drops_the_versions_own_model_aliases():
    version = _version_config(models={"strong": {"model": "gpt-4o"}}, stages={"judges": "strong"})
    kept = choose(version, EndpointChoice(concurrency=2), of_version=True)
    assert "strong" in kept.llm.models and kept.llm.concurrency == 2
    named = choose(version, EndpointChoice(base_url="http://127.0.0.1:8080/v1"), of_version=True)
    assert named.llm.models == {} and named.llm.stages == {}


def test_the_judge_is_an_alias_of_its_own_and_refused_in_one_line(tmp_path):
    config = _version_config()
    assert with_judge(config, EndpointChoice()) is config
    judged = with_judge(config, EndpointChoice(base_url="http://j:1/v1", concurrency="auto"))
    alias = judged.llm.models["judge"]
    assert alias.model == "m" and alias.base_url == "http://j:1/v1" and alias.concurrency_auto
    with pytest.raises(ConfigError, match="the judge's endpoint: base_url: expected an http"):
        with_judge(config, EndpointChoice(base_url="judge"))
    path = tmp_path / "judge.yaml"
    path.write_text(json.dumps({"llm": {"model": "big", "prices": {"big": {"input_per_1m": 1,
                                                                          "output_per_1m": 2}}}}))
    from_file = with_judge(config, EndpointChoice(config=str(path)))
    assert from_file.llm.models["judge"].model == "big" and "big" in from_file.llm.prices
