"""`memsynth report`: one HTML page per version, every figure plotted, diversity measured."""

from __future__ import annotations

import base64
import html
import re
import shutil
from pathlib import Path

import pytest

from memsynth.generation.registry import recipe_class
from memsynth.quality.review.report import (
    ENGINE_FIGURES,
    cost_figure,
    distinct_n,
    near_duplicates,
    openings,
    persona_coverage,
)
from memsynth.warehouse.catalog import run_query
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, write_config

LOCOMO_SAMPLE = ROOT / "tests" / "data" / "locomo_sample.json"
BUILDS = {
    "enpmr": {"dialogues_per_persona": 2},
    "pal": {"months": [2, 2]},
    "stratmem": {"source": f"locomo:{LOCOMO_SAMPLE}", "windows": [1], "max_sessions": 2},
}


def test_distinct_n_near_duplicates_and_openings_by_hand():
    texts = ["the cat sat", "the cat ran"]
    assert distinct_n(texts, 1) == pytest.approx(4 / 6, abs=1e-4)  # the, cat, sat, ran of six words
    assert distinct_n(texts, 2) == pytest.approx(3 / 4, abs=1e-4)  # "the cat" twice, "cat sat", "cat ran"
    assert distinct_n(["我们去公园"], 1) == pytest.approx(1.0)  # Chinese by character
    long = "we walked along the river after dinner and talked about the new job offer for an hour"
    found = near_duplicates([("p1", long), ("p1", long + " today"), ("p2", "a different sentence entirely "
                                                                         "about gardening and tomatoes in june")])
    assert found["within_persona"] == pytest.approx(2 / 3, abs=1e-4) and found["across_personas"] == 0
    assert openings(["I am fine", "I am here", "so tired"], words=2)[0] == ("i am", 2)


def test_persona_coverage_by_hand():
    rows = [("p1", "gender", "female"), ("p2", "gender", "male"), ("p3", "gender", "female"),
            ("p4", "gender", "male"), ("p1", "age", "30s"), ("p2", "age", "30s"), ("p3", "age", "30s"),
            ("p4", "age", "40s")]
    got = {c["attribute"]: c for c in persona_coverage(rows)}
    assert got["gender"] == {"attribute": "gender", "personas": 4, "distinct": 2, "top": "female",
                             "top_share": 0.5, "evenness": 1.0}
    # 3:1 over two values: entropy -(.75 ln .75 + .25 ln .25) = 0.5623, over ln 2 = 0.8113
    assert got["age"]["top"] == "30s" and got["age"]["top_share"] == 0.75
    assert got["age"]["evenness"] == pytest.approx(0.8113, abs=1e-4)


@pytest.mark.parametrize("recipe", sorted(BUILDS))
def test_the_report_of_a_simulator_build_renders_every_figure(tmp_path: Path, recipe: str, monkeypatch):
    # One recipe's config prices its model: the report then adds cost per stage.
    llm = {"model": "test-model", "stage_variables": True, "concurrency": 8, "retry_base_s": 0.01,
           **({"prices": {"memsynth-simulator": {"input_per_1m": 0.15, "output_per_1m": 0.6}}}
              if recipe == "pal" else {})}
    config = write_config(tmp_path / "c.yaml", dataset="r", recipe=recipe, personas={"count": 1},
                          recipe_options=BUILDS[recipe], llm=llm)
    wh = tmp_path / "wh"
    compare = recipe == "enpmr"  # one recipe also builds version 2 (from the cache) to compare with
    for again in range(2 if compare else 1):  # the same rows again: published only when asked to
        cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(wh), "--no-progress", "--format", "json",
                      *(["--publish-unchanged"] if again else []))
    cost = [cost_figure({"llm": llm})] if recipe == "pal" else []
    figures = (*ENGINE_FIGURES[:3], *cost, *ENGINE_FIGURES[3:], *recipe_class(recipe).report_figures)
    out = tmp_path / "report.html"
    code, _, err = cli_here("report", "--dataset", "r", "--warehouse", str(wh), "--out", str(out))
    assert code == 0, err
    page = out.read_text(encoding="utf-8")
    titles = [html.unescape(t) for t in re.findall(r"<h2>([^<]*)</h2>", page)]
    coverage = ["Persona attribute coverage"] if recipe_class(recipe).report_personas else []
    plotted = [f for f in figures if run_query(wh, "r", f.sql)[1]]
    empty = [f.title for f in figures if f not in plotted]
    # The page opens with what decides, draws no chart of nothing, and names those it skipped.
    assert titles == ["What decides"] + [f.title for f in plotted] + ["Diversity of generated text"] + coverage
    assert "nothing to plot" not in page
    assert (f"Nothing to plot (no rows): {'; '.join(empty)}." in html.unescape(page)) == bool(empty)
    asked = run_query(wh, "r", "SELECT count(DISTINCT (stage, item_key)) FROM llm_calls")[1][0][0]
    assert f"<td>items asked</td><td>{asked:,}</td>" in page
    dropped = run_query(wh, "r", "SELECT count(*) FROM stage_failures WHERE action = 'dropped'")[1][0][0]
    assert f"<td>dropped</td><td>{dropped:,}</td>" in page
    if recipe == "pal":  # its judges' pass rates are among what decides
        seen = run_query(wh, "r", "SELECT count(*) FROM llm_calls WHERE stage = 'pal.preferences' "
                         "AND outcome IN ('ok', 'judge_rejected')")[1][0][0]
        assert f"<td>judge of pal.preferences: passed</td><td>{seen:,} of {seen:,} (100%)</td>" in page
    images = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    assert len(images) == len(plotted)
    assert all(base64.b64decode(i).startswith(b"\x89PNG\r\n\x1a\n") for i in images)
    for figure in figures:  # every recipe figure has data to plot from this build
        if figure in ENGINE_FIGURES and "stage_failures" in figure.sql:
            continue  # a clean build drops nothing
        assert run_query(wh, "r", figure.sql)[1], figure.title
    if cost:  # by hand: every call of a first build is paid, at 0.15 and 0.6 dollars per million
        paid = run_query(wh, "r", "SELECT sum(prompt_tokens), sum(completion_tokens) FROM llm_calls")[1][0]
        usd = sum(r[1] for r in run_query(wh, "r", cost[0].sql)[1])
        assert usd == pytest.approx((paid[0] * 0.15 + paid[1] * 0.6) / 1e6, rel=1e-3) and usd > 0
    distinct = float(re.search(r"distinct-1</td><td>([0-9.]+)", page).group(1))
    assert 0 < distinct <= 1
    if coverage:  # one row per attribute, counting the build's one persona
        attributes = {r[1] for r in run_query(wh, "r", recipe_class(recipe).report_personas)[1]}
        rows = re.findall(r"<tr><td>([a-z]+)</td><td>1</td><td>1</td>", page)
        assert attributes and sorted(rows) == sorted(attributes)
    if not compare:
        return
    compared = tmp_path / "compared.html"
    code, _, err = cli_here("report", "--dataset", "r", "--warehouse", str(wh), "--compare", "1", "--out", str(compared))
    assert code == 0, err
    page = compared.read_text(encoding="utf-8")
    assert len(re.findall(r"data:image/png;base64,", page)) == 2 * len(plotted)
    assert "r version 2 beside version 1" in page
    # Every query of a version's page runs in one attach of its catalog, not one per figure.
    import memsynth.warehouse.catalog as catalog
    from memsynth.quality.review.report import build_report

    opened, real = [], catalog.open_version
    monkeypatch.setattr(catalog, "open_version", lambda *a, **k: opened.append(a) or real(*a, **k))
    assert build_report(wh, "r", compare=1).count("<img") == 2 * len(plotted)
    assert len(opened) == 4, opened  # each version's row, then each version's queries


def test_a_missing_version_is_one_clear_line(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", dataset="r", recipe="stratmem", personas={"count": 1},
                          recipe_options=BUILDS["stratmem"])
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"), "--no-progress",
                  "--format", "json")
    result = memsynth_cli("report", "--dataset", "r", "--warehouse", str(tmp_path / "wh"), "--version", "7",
                          "--out", str(tmp_path / "x.html"))
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "x.html").exists()


@pytest.mark.skipif(shutil.which("script") is None, reason="needs util-linux `script` for a terminal")
def test_the_report_shows_a_progress_bar_on_a_terminal(tmp_path: Path):
    import shlex
    import subprocess
    import sys

    config = write_config(tmp_path / "c.yaml", dataset="r", personas={"count": 1},
                          recipe_options={"dialogues_per_persona": 0})
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(tmp_path / "wh"), "--format", "json")
    exe = Path(sys.executable).parent / "memsynth"
    command = shlex.join([str(exe), "report", "--dataset", "r", "--warehouse", str(tmp_path / "wh"),
                          "--out", str(tmp_path / "r.html")])
    shown = subprocess.run(["script", "-qec", command, "/dev/null"], capture_output=True, text=True, timeout=120)
    assert shown.returncode == 0, shown.stdout[-2000:]
    assert re.search(r"report.*\d+/\d+", shown.stdout), "a bar with steps done of the total"
    piped = memsynth_cli("report", "--dataset", "r", "--warehouse", str(tmp_path / "wh"), "--out", str(tmp_path / "p.html"))
    assert "━" not in piped.stderr, "no bar when the output is not a terminal"
