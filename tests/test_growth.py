"""A user's first week with growth: every shipped config has personas for its size, pal
builds past the persona pool, and growing a dataset never changes an earlier row (issue 31)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memsynth.build.shards import recipe_for
from memsynth.core.errors import ConfigError
from memsynth.generation.personas import build_personas
from memsynth.generation.registry import load_config
from memsynth.warehouse.catalog import run_query
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, write_config

ENGINE_TABLES = {"llm_calls", "stage_failures"}
REAL_LOCOMO = Path(os.environ.get("MEMSYNTH_REFERENCE_DATA", ROOT.parent / "shared" / "reference-data")) / "locomo" / "locomo10.json"


@pytest.mark.parametrize("path", sorted((ROOT / "configs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_shipped_config_has_the_personas_its_size_needs(path, tmp_path):
    config = load_config(path)
    source = config.recipe_options.get("source", "")
    if source.startswith("locomo:") and not config.resolve_path(source.split(":", 1)[1]).is_file():
        # LoCoMo is not shipped: a fresh clone is told in one line where to get it.
        with pytest.raises(ConfigError, match="https://github.com/snap-research/locomo"):
            build_personas(recipe_for(config), config, tmp_path, config.personas.count)
        if not REAL_LOCOMO.is_file():
            pytest.skip(f"LoCoMo not found at {REAL_LOCOMO}")
        config.recipe_options["source"] = f"locomo:{REAL_LOCOMO}"
    recipe = recipe_for(config)
    pool = build_personas(recipe, config, tmp_path, config.personas.count)
    assert len(pool) >= config.personas.count or recipe.persona_stage is not None


def test_the_estimate_refuses_what_the_build_refuses(tmp_path):
    config = write_config(tmp_path / "s.yaml", dataset="s", recipe="stratmem", personas={"count": 50},
                          recipe_options={"source": f"locomo:{ROOT / 'tests' / 'data' / 'locomo_sample.json'}"})
    for args in (["--estimate"], ["--llm", "simulator"]):
        result = memsynth_cli("build", str(config), "--warehouse", str(tmp_path / "wh"), *args)
        assert result.returncode == 1, args
        assert "asks for 50 personas but only 1 are available" in result.stderr.strip().splitlines()[-1]
    # Refused before any call: no cache entry, no catalog (the build's lock file may be there).
    assert not list((tmp_path / "wh").rglob("*.jsonl")) and not list((tmp_path / "wh").rglob("*.ducklake"))
    with pytest.raises(ConfigError):
        build_personas(recipe_for(load_config(config)), load_config(config), tmp_path, 50)


def test_pal_builds_past_the_pool_with_numbered_users(tmp_path):
    config = write_config(tmp_path / "p.yaml", dataset="p", recipe="pal", language="zh", shard_size=4,
                          personas={"count": 3, "include_seed": False},
                          recipe_options={"months": [2, 2], "profile_batch_size": 2})
    summary = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"),
                            "--format", "json")
    assert summary["row_counts"]["pal_profiles"] == 3
    rows = cli_json_here("query", "SELECT persona_id, source FROM personas ORDER BY ordinal", "--dataset", "p",
                         "--warehouse", str(tmp_path / "wh"), "--format", "json")
    assert [r["persona_id"] for r in rows] == ["slot-0000000", "slot-0000001", "slot-0000002"]


def _rows(warehouse: Path, dataset: str, version: int) -> dict[str, set[str]]:
    """Every row of every recipe table at `version`, read in this process (a `memsynth query`
    process per table and version was most of this file's time)."""
    tables = run_query(warehouse, dataset, "SELECT table_name FROM duckdb_tables() WHERE database_name = 'lake'",
                       version)[1]
    out = {}
    for (t,) in tables:
        if t in ENGINE_TABLES or t == "versions":
            continue
        columns, rows, _ = run_query(warehouse, dataset, f"SELECT * FROM {t}", version)
        out[t] = {json.dumps(dict(zip(columns, r)), sort_keys=True, default=str) for r in rows}
    return out


def _two_conversations(folder: Path) -> Path:
    """The LoCoMo test sample and a second conversation made from it (the speakers renamed)."""
    sample = json.loads((ROOT / "tests" / "data" / "locomo_sample.json").read_text(encoding="utf-8"))[0]
    text = json.dumps(sample, ensure_ascii=False).replace("Mira", "Noor").replace("Tomas", "Karel")
    second = {**json.loads(text), "sample_id": "second"}
    path = folder / "two.json"
    path.write_text(json.dumps([sample, second], ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("recipe,options,count", [
    ("enpmr", {"dialogues_per_persona": 1}, 2),
    ("pal", {"months": [2, 2], "profile_batch_size": 5}, 3),
    ("stratmem", {"windows": [1], "max_sessions": 2}, 1),
])
def test_growing_by_one_persona_changes_no_earlier_row(tmp_path, recipe, options, count):
    if recipe == "stratmem":
        options = {**options, "source": f"locomo:{_two_conversations(tmp_path)}"}
    warehouse = tmp_path / "wh"
    config = write_config(tmp_path / "c.yaml", dataset="g", recipe=recipe, shard_size=5,
                          personas={"count": count}, recipe_options=options)
    first = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(warehouse),
                          "--format", "json")
    grown = cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(warehouse),
                          "--add-personas", "1", "--format", "json")
    assert grown["version"] == first["version"] + 1
    before, after = _rows(warehouse, "g", first["version"]), _rows(warehouse, "g", grown["version"])
    for table, rows in before.items():
        assert rows <= after[table], f"{table}: growth changed {len(rows - after[table])} earlier rows"
    # Every earlier call is answered from the cache: only the new persona's are sent.
    assert grown["llm"]["cache_hits"] >= first["llm"]["calls"] - first["llm"]["cache_hits"]


def test_a_plain_build_after_growth_keeps_the_grown_personas(tmp_path):
    warehouse = tmp_path / "wh"
    config = write_config(tmp_path / "c.yaml", dataset="g", personas={"count": 2},
                          recipe_options={"dialogues_per_persona": 0})
    build = ["build", str(config), "--llm", "simulator", "--warehouse", str(warehouse), "--format", "json"]
    cli_json_here(*build)
    grown = cli_json_here(*build, "--add-personas", "2")
    again = cli_json_here(*build)
    assert grown["personas"] == again["personas"] == 4
    assert "built 4 personas, as the last version has" in again["personas_note"]
    code, text, _ = cli_here(*build[:-2])
    assert code == 0 and "note: built 4 personas" in text
    asked = cli_json_here(*build, "--personas", "2")  # asked for explicitly: honoured
    assert asked["personas"] == 2 and asked["personas_note"] is None


def test_a_build_into_another_recipe_s_dataset_is_refused_before_any_request(tmp_path):
    """Item 7 of issue 31: the mismatch is found before the first call, not at publish."""
    from tests.conftest import ROOT, start_simulator
    from tests.test_cli import refused_before_prefect  # before Prefect's server starts and the build imports

    release = ROOT.parent / "shared" / "reference-data" / "stratmem" / "StratMemBench.json"
    if not release.is_file():
        pytest.skip(f"the StratMem-Bench release is not at {release}")
    wh = tmp_path / "wh"
    cli_json_here("import", "stratmem", str(release), "--dataset", "t", "--warehouse", str(wh), "--format", "json")
    sim = start_simulator()
    try:
        config = write_config(tmp_path / "c.yaml", llm={"base_url": sim.base_url, "stage_variables": True})
        done = refused_before_prefect("build", str(config), "--warehouse", str(wh), env={"OPENAI_API_KEY": "x"})
        assert sim.simulator.counters.requests == 0
    finally:
        sim.stop()
    assert done.returncode == 1 and done.stderr.count("\n") == 1, done.stderr
    assert "dataset 't' holds stratmem versions; a build of recipe enpmr cannot add to it" in done.stderr
