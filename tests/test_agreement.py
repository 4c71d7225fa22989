"""`memsynth agreement`: κ between annotators and with the LLM's labels, against hand computations."""

from __future__ import annotations

from pathlib import Path

import pytest

from memsynth.quality.review.agreement import agreement, cohen_kappa, fleiss_kappa
from memsynth.warehouse.annotations import AnnotationLog, Judgment
from tests.conftest import ROOT, cli_here, cli_json_here, memsynth_cli, write_config

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("agreement")

# A stratmem build from the test conversation: 30 memories with their labellers' roles.
STRATMEM_OPTIONS = {"source": f"locomo:{ROOT / 'tests' / 'data' / 'locomo_sample.json'}",
                    "windows": [1, 2, 3], "max_sessions": 6}


@pytest.fixture(scope="module")
def stratmem_build(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("agreement")
    config = write_config(folder / "c.yaml", dataset="smb", recipe="stratmem", personas={"count": 1},
                          recipe_options=STRATMEM_OPTIONS)
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(folder / "wh"), "--no-progress",
                  "--format", "json")
    return folder / "wh"


def test_cohen_kappa_matches_the_textbook_two_by_two():
    # 50 items: both yes 20, A yes / B no 5, A no / B yes 10, both no 15.
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    # p_o = 35/50 = 0.7; p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5; κ = 0.2 / 0.5
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["yes"] * 4, ["yes"] * 4) is None  # one label throughout: undefined


def test_fleiss_kappa_matches_the_classic_worked_example():
    # Fleiss (1971) as worked on Wikipedia: 10 items, 14 raters, 5 categories; κ = 0.210.
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
              [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    ratings = [[str(k) for k, n in enumerate(row) for _ in range(n)] for row in counts]
    assert fleiss_kappa(ratings) == pytest.approx(0.2099, abs=1e-4)


def test_judgments_of_two_annotators_never_collide_and_the_latest_counts(tmp_path: Path):
    log = AnnotationLog(tmp_path)
    log.record(Judgment("i1", "relevant", "yes", "ann"))
    log.record(Judgment("i1", "relevant", "no", "bo"))
    log.record(Judgment("i1", "relevant", "no", "ann"))  # ann changes her mind
    with open(tmp_path / "_annotations" / "bo.jsonl", "a") as fh:
        fh.write('{"item_id": "i2", "crit')  # a line cut by a crash
    # A fresh reader (another process, after a restart) sees the same.
    got = {(j.annotator, j.item_id): j.value for j in AnnotationLog(tmp_path).judgments()}
    assert got == {("ann", "i1"): "no", ("bo", "i1"): "no"}
    assert sorted(p.name for p in (tmp_path / "_annotations").iterdir()) == ["ann.jsonl", "bo.jsonl"]
    with pytest.raises(Exception, match="annotator"):
        log.record(Judgment("i1", "relevant", "yes", "../escape"))


def test_two_annotators_label_20_items_and_agreement_prints_the_hand_computed_kappas(stratmem_build: Path):
    wh = stratmem_build
    memories = cli_json_here("query", "SELECT instance_id || '#' || memory_index AS item, role FROM stratmem_memories "
                             "ORDER BY instance_id, memory_index LIMIT 20", "--dataset", "smb",
                             "--warehouse", str(wh), "--format", "json")
    items = [m["item"] for m in memories]
    log = AnnotationLog(wh / "smb")
    # "appropriate": both yes on 9 items, ann yes / bo no on 3, ann no / bo yes on 2, both no on 6.
    ann = ["yes"] * 9 + ["yes"] * 3 + ["no"] * 2 + ["no"] * 6
    bo = ["yes"] * 9 + ["no"] * 3 + ["yes"] * 2 + ["no"] * 6
    for item, a, b in zip(items, ann, bo):
        log.record(Judgment(item, "appropriate", a, "ann"))
        log.record(Judgment(item, "appropriate", b, "bo"))
    # "role": ann gives the labellers' role except on the first 4 items, where she differs.
    roles = [m["role"] for m in memories]
    other = {"must": "irr", "nice": "irr", "irr": "must"}
    ann_roles = [other[r] if i < 4 else r for i, r in enumerate(roles)]
    for item, role in zip(items, ann_roles):
        log.record(Judgment(item, "role", role, "ann"))

    result = cli_json_here("agreement", "--dataset", "smb", "--warehouse", str(wh), "--format", "json")
    by = {c["criterion"]: c for c in result["criteria"]}
    # By hand: p_o = 15/20; p_e = (12/20)(11/20) + (8/20)(9/20) = 0.51; κ = 0.24 / 0.49.
    assert by["appropriate"]["cohen"]["ann~bo"] == pytest.approx(0.24 / 0.49, abs=1e-4)
    assert by["appropriate"]["items"] == 20 and by["appropriate"]["shares"] == {"no": 0.425, "yes": 0.575}
    # The judge (the build's roles) against ann, by hand from the label counts.
    n = 20
    p_o = sum(a == r for a, r in zip(ann_roles, roles)) / n
    p_e = sum(ann_roles.count(k) * roles.count(k) for k in set(roles) | set(ann_roles)) / (n * n)
    assert p_o == 16 / 20
    assert by["role"]["judge"]["ann"]["items"] == 20
    assert by["role"]["judge"]["ann"]["kappa"] == pytest.approx((p_o - p_e) / (1 - p_e), abs=1e-4)
    assert result["judge_labels"] > 20

    code, text, _ = cli_here("agreement", "--dataset", "smb", "--warehouse", str(wh))
    assert code == 0 and "0.490" in text, text


def test_three_annotators_give_fleiss_kappa_over_the_items_all_judged():
    js = []
    labels = {"a": ["yes", "yes", "no", "no"], "b": ["yes", "no", "no", "no"], "c": ["yes", "yes", "yes", "no"]}
    for name, values in labels.items():
        js += [Judgment(f"i{i}", "ok", v, name) for i, v in enumerate(values)]
    js.append(Judgment("i9", "ok", "yes", "a"))  # judged by one annotator only: not in Fleiss
    (row,) = agreement(js)
    assert row["fleiss_items"] == 4
    assert row["fleiss"] == pytest.approx(fleiss_kappa([["yes", "yes", "yes"], ["yes", "no", "yes"],
                                                         ["no", "no", "yes"], ["no", "no", "no"]]), abs=1e-4)
    assert set(row["cohen"]) == {"a~b", "a~c", "b~c"}


def test_agreement_without_judgments_is_one_clear_line(tmp_path: Path):
    config = write_config(tmp_path / "c.yaml", dataset="smb", recipe="stratmem", personas={"count": 1},
                          recipe_options={**STRATMEM_OPTIONS, "windows": [1], "max_sessions": 2})
    wh = tmp_path / "wh"
    cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(wh), "--no-progress", "--format", "json")
    result = memsynth_cli("agreement", "--dataset", "smb", "--warehouse", str(wh))
    assert result.returncode != 0 and "no judgments recorded for smb" in result.stderr
    as_json = memsynth_cli("agreement", "--dataset", "smb", "--warehouse", str(wh), "--format", "json")
    assert as_json.returncode == result.returncode == 1, "both formats exit alike"
    assert "no judgments recorded for smb" in as_json.stderr and as_json.stdout == ""
