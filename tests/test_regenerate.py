"""Regenerating personas: a new version equal to the last one except the named personas'
rows from one stage on, with only their calls sent; growing a dataset leaves its rows."""

from __future__ import annotations

import json

import pytest

from memsynth.build.regenerate import RegenerationRequest
from memsynth.build.run import BuildOptions, run_build
from memsynth.core.errors import ConfigError
from memsynth.generation.registry import load_config
from memsynth.warehouse.catalog import open_version, run_query
from tests.conftest import ROOT, cli_json_here, memsynth_cli

QUICKSTART = str(ROOT / "configs/quickstart.yaml")
# The quickstart with half its dialogues: the same chain, fewer calls.
SMALL = {"dialogues_per_persona": 2}
TABLES = ("personas", "profiles", "life_themes", "memories", "memory_sessions", "support_dialogues",
          "negatives", "quality_checks", "benchmark", "stage_failures")


def _snapshot(wh, version: int) -> dict[str, set[str]]:
    """Every row of every table at `version` (llm_calls by call, cache key and persona)."""
    con, _ = open_version(wh, "quickstart", version)
    try:
        out = {}
        for table in TABLES:
            cur = con.execute(f"SELECT * FROM {table}")
            columns = [d[0] for d in cur.description]
            out[table] = {json.dumps(dict(zip(columns, r)), default=str, sort_keys=True) for r in cur.fetchall()}
        out["llm_calls"] = {json.dumps(r) for r in con.execute(
            "SELECT call_id, cache_key, persona_id FROM llm_calls").fetchall()}
        return out
    finally:
        con.close()


def _changed(wh, old: int, new: int) -> dict[str, set[str]]:
    """Per table, the rows in one version and not the other."""
    a, b = _snapshot(wh, old), _snapshot(wh, new)
    return {t: a[t] ^ b[t] for t in a if a[t] ^ b[t]}


def _build(wh, personas: int | None = None, **regeneration) -> dict:
    """A build in this process (its Prefect API server is shared by the test's builds)."""
    config = load_config(QUICKSTART)
    config.recipe_options.update(SMALL)
    return run_build(config, BuildOptions(
        llm="simulator", warehouse=str(wh), personas=personas, progress=False,
        regeneration=RegenerationRequest(**regeneration)))


def test_regenerating_a_persona_changes_only_its_rows_and_sends_only_its_calls(tmp_path):
    wh = tmp_path / "wh"
    _build(wh, 2)
    target, other = sorted(r[0] for r in run_query(wh, "quickstart", "SELECT persona_id FROM personas")[1])
    redo = ("enpmr.support_dialogue", "enpmr.faithfulness", "enpmr.blri")
    # A regenerated answer is audited again when its item is sampled (the same items as before).
    audits = tuple(f"enpmr.audit_{s.split('.')[1]}" for s in redo)
    expected = run_query(wh, "quickstart", "SELECT count(*) FROM llm_calls WHERE persona_id = ? AND stage IN "
                         f"{redo + audits} AND repair_index = 0".replace("?", f"'{target}'"))[1][0][0]

    second = _build(wh, persona_ids=[target], from_stage="support_dialogue")
    assert second["version"] == 2 and second["row_counts"]["personas"] == 2
    assert second["derivation"] == {"parent_version": 1, "regenerated": [target], "from_stage": "support_dialogue"}
    # Only the regenerated items were asked again: one request per item (the simulator's
    # answers pass their checks), all of them the target's, from the stage on.
    assert second["llm"]["requests"] == expected > 0
    sent = run_query(wh, "quickstart", "SELECT DISTINCT persona_id, stage FROM llm_calls WHERE NOT cache_hit")[1]
    assert {p for p, _ in sent} == {target} and set(redo) <= {s for _, s in sent} <= set(redo + audits)

    changed = _changed(wh, 1, 2)
    assert {"support_dialogues", "quality_checks", "benchmark", "llm_calls"} <= set(changed)
    assert not {"personas", "profiles", "life_themes", "memories", "memory_sessions"} & set(changed)
    for table, rows in changed.items():  # every row that differs is the target's
        assert all(target in row and other not in row for row in rows), table

    # A plain rebuild keeps the regeneration (it is in force for later versions) and sends
    # nothing: every table equals version 2's, so nothing is published.
    third = _build(wh, 2)
    assert third["llm"]["requests"] == 0 and third["row_counts"] == second["row_counts"]
    assert third["unchanged"] and third["version"] == 2

    # --where picks personas with a query; --add-personas grows the dataset and leaves its rows.
    fourth = _build(wh, where=f"SELECT persona_id FROM personas WHERE persona_id = '{other}'",
                    from_stage="blri")
    assert fourth["derivation"]["regenerated"] == [other] and fourth["version"] == 3
    assert set(_changed(wh, 2, 3)) <= {"quality_checks", "benchmark", "llm_calls", "stage_failures"}
    fifth = _build(wh, add_personas=1)
    assert fifth["row_counts"]["personas"] == 3 and fifth["derivation"]["added_personas"] == 1
    before, after = _snapshot(wh, 3), _snapshot(wh, 4)
    assert all(before[t] <= after[t] for t in TABLES)

    listed = cli_json_here("versions", "quickstart", "--warehouse", str(wh), "--format", "json")
    assert listed[1]["derivation"]["regenerated"] == [target]
    assert listed[3]["regenerations"].keys() == {target, other}
    table = memsynth_cli("versions", "quickstart", "--warehouse", str(wh), env={"COLUMNS": "400"})
    assert f"v1 + 1 regenerated from support_dialogue ({target})" in table.stdout
    assert "v3 + 1 personas added" in table.stdout


def test_regenerating_unknown_personas_or_stages_is_one_line(tmp_path):
    wh = tmp_path / "wh"
    with pytest.raises(ConfigError, match="has no version yet"):
        _build(wh, persona_ids=["p-x"])
    _build(wh, 1)
    first = run_query(wh, "quickstart", "SELECT min(persona_id) FROM personas")[1][0][0]
    with pytest.raises(ConfigError, match="not a stage of enpmr"):
        _build(wh, persona_ids=[first], from_stage="nope")
    with pytest.raises(ConfigError, match="--where matched no persona"):
        _build(wh, where="SELECT 'x' WHERE false")
    result = memsynth_cli("build", QUICKSTART, "--llm", "simulator", "--warehouse", str(wh), "--regenerate", "p-nope")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == ["error: not personas of quickstart version 1: p-nope"]
