"""Nothing a version has is dropped silently by the next build: `annotate emotions`, then a
build, keeps the emotion scores (unchanged rows' from the LLM cache), or says in one line,
in the summary and the version's record, what it did not carry and why."""

from __future__ import annotations

from pathlib import Path

from memsynth.build.carry import carry
from memsynth.core.config import BuildConfig
from memsynth.generation.registry import recipe_class
from tests.conftest import cli_json_here, memsynth_cli, write_config


def _query(wh: Path, sql: str, version: int | None = None) -> list[dict]:
    extra = ["--version", str(version)] if version else []
    return cli_json_here("query", sql, "--dataset", "t", "--warehouse", str(wh), "--format", "json", *extra)


def test_a_build_after_annotate_carries_the_emotions_and_scores_only_what_changed(tmp_path: Path):
    wh = tmp_path / "wh"
    config = write_config(tmp_path / "c.yaml", personas={"count": 2})
    build = ["build", str(config), "--llm", "simulator", "--warehouse", str(wh), "--no-progress"]
    cli_json_here(*build, "--format", "json")
    annotated = cli_json_here("annotate", "emotions", "--dataset", "t", "--llm", "simulator", "--warehouse", str(wh),
                              "--no-progress", "--format", "json")
    assert annotated["version"] == 2 and annotated["annotated"] > 0

    # The same config again: the scores are carried, every one from the cache, and as the rows
    # are those of version 2, nothing is published (before: version 3, without `emotions`).
    same = memsynth_cli(*build)
    assert same.returncode == 0, same.stderr[-2000:]
    assert "carried emotions: version 2 has emotion scores" in same.stdout
    assert "nothing changed: t version 2 is current" in same.stdout

    grown = cli_json_here(*build, "--personas", "3", "--format", "json")
    assert grown["version"] == 3 and "carried emotions" in grown["carried"]
    record = cli_json_here("versions", "t", "--warehouse", str(wh), "--format", "json")[-1]
    assert "emotions" in record["derivation"]["carried"]
    new = _query(wh, "SELECT min(persona_id) AS p FROM personas WHERE persona_id NOT IN "
                     "(SELECT persona_id FROM emotions)", version=2)  # nobody: v2 scored all
    assert new == [{"p": None}]
    scored = _query(wh, "SELECT persona_id, count(*) AS n FROM emotions GROUP BY 1 ORDER BY 1")
    assert len(scored) == 3 and all(r["n"] > 0 for r in scored)
    # Only the added persona's items were asked; the others' scores came from the cache, unchanged.
    asked = _query(wh, "SELECT DISTINCT persona_id AS p FROM llm_calls WHERE stage = 'emotions.score' AND NOT cache_hit")
    old = {r["persona_id"] for r in _query(wh, "SELECT DISTINCT persona_id FROM emotions", version=2)}
    assert [r["p"] for r in asked] and not {r["p"] for r in asked} & old
    sql = "SELECT * FROM emotions WHERE persona_id IN ({}) ORDER BY ALL".format(", ".join(f"'{p}'" for p in sorted(old)))
    assert _query(wh, sql) == _query(wh, sql, version=2)


def _config(**options) -> BuildConfig:
    config = BuildConfig.model_validate({"dataset": "t", "recipe": "enpmr", "reference_date": "2024-12-02",
                                         "llm": {"model": "gpt-4o-mini"}})
    config.recipe_options = {**recipe_class("enpmr").options_model().model_dump(mode="json"), **options}
    return config


def test_scores_by_another_model_are_not_carried_and_the_build_says_why():
    config = _config()
    recipe = recipe_class("enpmr")(config.recipe_options)
    latest = {"version": 4, "model": "qwen-max", "derivation": {"parent_version": 3, "annotated": "emotions"},
              "row_counts": {"personas": 2, "memories": 9, "emotions": 11, "old_extra": 3, "llm_calls": 5}}
    decided = carry(latest, recipe, config, "gpt-4o-mini", "t")
    assert not decided.carried and config.recipe_options["emotions"] is False
    assert set(decided.not_carried) == {"emotions", "old_extra"}
    line = decided.line()
    assert "not carried emotions: version 4's scores are by qwen-max, this build's model is gpt-4o-mini" in line
    assert "memsynth annotate emotions --dataset t --model qwen-max" in line
    assert "not carried old_extra: version 4 has it, this build's config does not write it" in line
    assert decided.record() == {"not_carried": decided.not_carried}


def test_a_version_without_annotations_carries_nothing_and_says_nothing():
    config = _config()
    recipe = recipe_class("enpmr")(config.recipe_options)
    decided = carry({"version": 1, "model": "m", "row_counts": {t.name: 1 for t in recipe.output_tables()}},
                    recipe, config, "m", "t")
    assert decided.line() is None and decided.record() == {}
    assert carry(None, recipe, config, "m", "t").line() is None


def test_scores_a_version_s_own_config_asked_for_stop_when_the_config_no_longer_asks():
    config = _config()
    recipe = recipe_class("enpmr")(config.recipe_options)
    latest = {"version": 2, "model": "m", "derivation": {"parent_version": 1},
              "row_counts": {"personas": 2, "emotions": 11}}
    decided = carry(latest, recipe, config, "m", "t")
    assert not decided.carried and config.recipe_options["emotions"] is False
    assert decided.line() == ("not carried emotions: version 2's config set recipe_options.emotions: true, "
                              "this build's config does not")
    # Carried once, carried on: a version that carried them is as good as the annotated one.
    latest["derivation"] = {"parent_version": 1, "carried": {"emotions": "..."}}
    assert "emotions" in carry(latest, recipe, config, "m", "t").carried and config.recipe_options["emotions"] is True
