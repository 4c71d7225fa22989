"""The seed-reproduction configs, built on the simulator, land near the seeds' figures."""

from __future__ import annotations

import pytest

from memsynth.warehouse.catalog import run_query
from tests.conftest import ROOT, cli_json_here

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("seed_reproduction")


def _build(tmp_path_factory, config: str, personas: int):
    warehouse = tmp_path_factory.mktemp(config) / "wh"
    summary = cli_json_here("build", str(ROOT / "configs" / f"{config}.yaml"), "--llm", "simulator",
                            "--personas", str(personas), "--warehouse", str(warehouse), "--format", "json")
    return warehouse, summary


@pytest.fixture(scope="module")
def pal_set(tmp_path_factory):
    return _build(tmp_path_factory, "pal-set", 5)


@pytest.fixture(scope="module")
def enpmr_bench(tmp_path_factory):
    return _build(tmp_path_factory, "enpmr-bench", 2)


@pytest.mark.parametrize("figure", ["sessions_per_user", "dialogues_per_month", "logs_per_session"])
def test_pal_set_lands_within_15_percent_of_the_real_users(pal_set, figure):
    _, summary = pal_set
    ours, seed = summary["statistics"][figure], summary["seed_figures"][figure]
    assert abs(ours - seed) / seed <= 0.15, (figure, ours, seed)


def test_pal_set_is_chinese_and_ends_in_the_query_month(pal_set):
    warehouse, summary = pal_set
    assert summary["personas"] == 5
    months = run_query(warehouse, "pal-set", "SELECT max(month), min(month) FROM situations")[1][0]
    assert months[0] == "2024-12" and months[1] >= "2024-01"
    query = run_query(warehouse, "pal-set", "SELECT DISTINCT month FROM situations WHERE split = 'query'")[1]
    assert query == [("2024-12",)]
    content = run_query(warehouse, "pal-set", "SELECT content FROM dialogue_turns LIMIT 1")[1][0][0]
    assert any("\u4e00" <= ch <= "\u9fff" for ch in content)


def test_enpmr_bench_category_shares_are_the_seeds(enpmr_bench):
    _, summary = enpmr_bench
    for category in ("highlight", "power", "relationship", "goal", "preference"):
        name = f"{category}_share_pct"
        ours, seed = summary["statistics"][name], summary["seed_figures"][name]
        assert abs(ours - seed) <= 5, (category, ours, seed)


def test_enpmr_bench_gold_labels_follow_the_need(enpmr_bench):
    warehouse, summary = enpmr_bench
    rows = run_query(warehouse, "enpmr-bench", """
        SELECT b.need, m.category, json_extract_string(m.attributes, '$.relationship_quality'),
               len(b.negative_memory_ids)
        FROM benchmark b JOIN memories m ON m.memory_id = b.target_memory_id""")[1]
    assert len(rows) >= 40
    assert not [r for r in rows if r[0] in ("LB", "EN") and r[1] == "relationship" and r[2] != "good"]
    assert {r[3] for r in rows} <= {2, 3}
    assert {r[0] for r in rows} == {"SA", "EN", "PN", "LB"}


def test_enpmr_bench_filters_on_the_inventory_scale(enpmr_bench):
    warehouse, _ = enpmr_bench
    scales = run_query(warehouse, "enpmr-bench", """
        SELECT DISTINCT json_extract_string(details, '$.scale'), json_extract_string(details, '$.threshold')
        FROM quality_checks WHERE check_name = 'blri'""")[1]
    assert scales == [("[-3,3]", "2.0")]
    zero = run_query(warehouse, "enpmr-bench", """
        SELECT count(*) FROM quality_checks, unnest(CAST(json_extract(details, '$.items') AS INT[])) t(s)
        WHERE check_name = 'blri' AND s = 0""")[1][0][0]
    assert zero == 0
