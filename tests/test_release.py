"""Releases of simulator builds through the real CLI: verify, load in `datasets`, the seeds'
file formats against the real PAL-Set files, byte-for-byte reproduction, diff by id."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from flows.pal.seed_format import PalSetFormat
from memsynth.core.errors import MemsynthError
from memsynth.release.card import redact
from memsynth.release.create import create_release
from memsynth.release.splits import assign_splits, parse_splits
from memsynth.warehouse.catalog import run_query
from tests.conftest import cli_here, cli_json_here, memsynth_cli, write_config

# One worker runs the whole module, so its module fixture (builds) is made once, not once per worker.
pytestmark = pytest.mark.xdist_group("release")

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = Path(os.environ.get("MEMSYNTH_REFERENCE_DATA", ROOT.parent / "shared" / "reference-data"))
PAL = REFERENCE / "pal"
SECRET = "sk-release-test-0123456789"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """A zh pal dataset at 2 then 4 users, and a zh enpmr dataset at 2 then 3 personas."""
    folder = tmp_path_factory.mktemp("release")
    warehouse = folder / "wh"
    env = {"OPENAI_API_KEY": SECRET}
    pal = write_config(folder / "pal.yaml", dataset="pal", recipe="pal", language="zh", shard_size=4,
                       recipe_options={"months": [2, 3], "profile_batch_size": 2})
    enpmr = write_config(folder / "enpmr.yaml", dataset="enpmr", language="zh", shard_size=2)
    for config, counts in ((pal, ("2", "4")), (enpmr, ("2", "3"))):
        for count in counts:
            cli_json_here("build", str(config), "--llm", "simulator", "--warehouse", str(warehouse),
                          "--personas", count, "--format", "json", env=env)
    releases = folder / "releases"
    for dataset, splits in (("pal", "train=0.5,test=0.5"), ("enpmr", "test=1")):
        for version, tag in ((1, "v1.0.0"), (2, "v1.1.0")):
            cli_json_here("release", "create", "--dataset", dataset, "--version", str(version), "--tag", tag,
                          "--out", str(releases), "--splits", splits, "--warehouse", str(warehouse),
                          "--accept-violation-rate", "--format", "json", env=env)  # a few audited items prove no rate
    return warehouse, releases


def test_releases_pass_verify_and_hold_every_file(builds):
    _, releases = builds
    for name in ("pal-v1.1.0", "enpmr-v1.1.0"):
        code, _, err = cli_here("release", "verify", str(releases / name))
        assert code == 0, err
        manifest = json.loads((releases / name / "manifest.json").read_text(encoding="utf-8"))
        listed = {f["path"] for f in manifest["files"]}
        on_disk = {p.relative_to(releases / name).as_posix() for p in (releases / name).rglob("*") if p.is_file()}
        assert on_disk - listed == {"SHA256SUMS", "manifest.json"}
        assert any(p.startswith("plots/") and p.endswith(".png") for p in listed)
        assert any(p.startswith("jsonl/") for p in listed)
        # `sha256sum -c` is the check a downloader runs.
        if shutil.which("sha256sum"):
            check = subprocess.run(["sha256sum", "-c", "--quiet", "SHA256SUMS"], cwd=releases / name,
                                   capture_output=True, text=True)
            assert check.returncode == 0, check.stdout + check.stderr


def test_no_key_reaches_a_release(builds):
    _, releases = builds
    for path in releases.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    config = {"llm": {"api_key": "sk-x", "api_key_env": "OPENAI_API_KEY",
                      "base_url": "https://user:pw@example.com/v1"}}
    assert redact(config) == {"llm": {"api_key": "<redacted>", "api_key_env": "OPENAI_API_KEY",
                                      "base_url": "https://<redacted>@example.com/v1"}}


@pytest.mark.parametrize("name,configs", [("pal-v1.1.0", ("samples", "profiles", "preferences")),
                                          ("enpmr-v1.1.0", ("dialogues", "memory_bank", "profiles"))])
def test_releases_load_with_datasets(builds, tmp_path, monkeypatch, name, configs):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    _, releases = builds
    folder = releases / name
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    default = datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf"))
    assert set(default) == set(manifest["splits"]["proportions"])
    for config in configs:
        loaded = datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path / "hf"))
        for split, part in loaded.items():
            jsonl = folder / "jsonl" / config / f"{split}.jsonl"
            assert part.num_rows == sum(1 for _ in jsonl.open(encoding="utf-8"))
            assert manifest["configs"][config]["key"] in part.column_names
    dialogues = datasets.load_dataset(str(folder), configs[0], cache_dir=str(tmp_path / "hf"))
    row = next(iter(dialogues.values()))[0]
    if name.startswith("enpmr"):  # a row is usable alone: the target and negatives come with it
        assert row["target_memory"]["session"] and len(row["negatives"]) >= 2
        assert row["profile"]["name"] and 1 <= row["memory_turn"] <= len(row["turns"])
    else:
        assert row["logs"] and row["topics"] and row["dialogue"][0]["turn"] == "turn_1"


def test_splits_are_by_persona(builds):
    _, releases = builds
    folder = releases / "pal-v1.1.0"
    seen: dict[str, set[str]] = {}
    for line_file in (folder / "jsonl").glob("*/*.jsonl"):
        for line in line_file.open(encoding="utf-8"):
            seen.setdefault(json.loads(line)["persona_id"], set()).add(line_file.stem)
    assert seen and all(len(splits) == 1 for splits in seen.values())
    # A persona keeps its split when later versions add personas.
    first = assign_splits([f"p{i}" for i in range(50)], {"train": 0.8, "test": 0.2}, seed=1)
    more = assign_splits([f"p{i}" for i in range(200)], {"train": 0.8, "test": 0.2}, seed=1)
    assert all(more[p] == s for p, s in first.items())
    assert 0.6 < Counter(more.values())["train"] / 200 < 0.95
    with pytest.raises(MemsynthError, match="sum to 1"):
        parse_splits("train=0.8,test=0.3")


def _signature(value, path=""):
    """Key paths with numbers generalised, each with its value type and format."""
    out = set()
    if isinstance(value, dict):
        for key, item in value.items():
            general = re.sub(r"\d+", "N", re.sub(r"^\d{4}$", "<user>", key))
            out |= _signature(item, f"{path}.{general}")
    elif isinstance(value, list):
        for item in value:
            out |= _signature(item, f"{path}[]")
    else:
        out.add((path, type(value).__name__, _format(value)))
    return out


_FORMATS = {"second": r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", "minute": r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}",
            "sample_id": r"\d{4}_sample\d+", "level": r"low|medium|high", "feedback": r"pos|neg|neu",
            "action": "话题询问|需求确认|方案讨论|方案反馈|需求推测|方案提议|反馈回应"}


def _format(value):
    if not isinstance(value, str):
        return ""
    return next((name for name, pattern in _FORMATS.items() if re.fullmatch(pattern, value)), "text")


@pytest.mark.skipif(not PAL.is_dir(), reason=f"PAL-Set reference data not found at {PAL}")
def test_pal_set_files_have_the_real_files_key_paths_types_and_formats(builds):
    _, releases = builds
    ours = releases / "pal-v1.1.0" / "pal-set"
    real_users = sorted((PAL / "users_zh").glob("*.json"))
    our_users = sorted(ours.glob("*/users_zh/*.json"))
    assert our_users and all(re.fullmatch(r"\d{4}", p.stem) for p in our_users)

    def union(paths):
        return set().union(*(_signature(json.loads(p.read_text(encoding="utf-8"))) for p in paths))

    assert union(our_users) == union(real_users)
    for name in ("background.json", "requirement.json", "preference.json"):
        assert union(sorted(ours.glob(f"*/{name}"))) == union([PAL / name]), name
    combined = union(sorted(ours.glob("*/pal_input.json")))
    assert combined == union(real_users)
    # The real files pass the same checks `release verify` runs on ours.
    real = ours.parent.parent / "real-pal-set"
    (real / "users_zh").mkdir(parents=True)
    everyone = {}
    for path in real_users:
        shutil.copy(path, real / "users_zh" / path.name)
        everyone.update(json.loads(path.read_text(encoding="utf-8")))
    for name in ("background.json", "requirement.json", "preference.json"):
        shutil.copy(PAL / name, real / name)
    (real / "pal_input.json").write_text(json.dumps(everyone, ensure_ascii=False), encoding="utf-8")
    assert list(PalSetFormat().problems(real)) == []


def test_pal_set_samples_follow_the_seeds_numbering_and_windows(builds):
    warehouse, releases = builds
    files = sorted((releases / "pal-v1.1.0" / "pal-set").glob("*/users_zh/*.json"))
    logs_exported = 0
    for path in files:
        (user_id, user), = json.loads(path.read_text(encoding="utf-8")).items()
        samples = user["history"] + user["query"]
        assert [s["sample_id"] for s in samples] == [f"{user_id}_sample{i}" for i in range(len(samples))]
        assert user["query"], "the query month holds at least one dialogue"
        for s in samples:
            assert list(s["dialogue"]) == [f"turn_{i}" for i in range(1, len(s["dialogue"]) + 1)]
            assert list(s["topics"]) == [f"topic-{i}" for i in range(1, len(s["topics"]) + 1)]
            logs_exported += len(s["logs"])
    # Every log before the last dialogue is in exactly one sample's window.
    windowed = run_query(warehouse, "pal", "SELECT count(*) FROM logs WHERE session_id IS NOT NULL")[1][0][0]
    assert logs_exported == windowed
    # The rest were written after a user's last dialogue; the card counts them and says why.
    total = run_query(warehouse, "pal", "SELECT count(*) FROM logs")[1][0][0]
    card = (releases / "pal-v1.1.0" / "README.md").read_text(encoding="utf-8")
    assert f"- {total - logs_exported:,} of {total:,} logs: written after the user's last dialogue" in card


def test_two_runs_give_identical_files(builds, tmp_path):
    warehouse, releases = builds
    create_release(warehouse, "pal", 2, "v1.1.0", tmp_path, parse_splits("train=0.5,test=0.5"),
                   accept_violation_rate=True)
    again = tmp_path / "pal-v1.1.0"
    assert (again / "SHA256SUMS").read_bytes() == (releases / "pal-v1.1.0" / "SHA256SUMS").read_bytes()
    for path in again.rglob("*"):
        if path.is_file():
            assert path.read_bytes() == (releases / "pal-v1.1.0" / path.relative_to(again)).read_bytes(), path


def test_verify_reports_each_damaged_file(builds, tmp_path):
    _, releases = builds
    copy = tmp_path / "damaged"
    shutil.copytree(releases / "pal-v1.1.0", copy)
    parquet = next((copy / "data" / "samples").glob("*.parquet"))
    parquet.write_bytes(parquet.read_bytes()[: parquet.stat().st_size // 2])  # truncated
    user_file = next(copy.glob("pal-set/*/users_zh/*.json"))
    data = json.loads(user_file.read_text(encoding="utf-8"))
    next(iter(data.values()))["history"][0]["topics"]["topic-1"]["candidate_solutions"].pop()
    user_file.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")  # corrupted
    deleted = next((copy / "jsonl" / "profiles").glob("*.jsonl"))
    deleted.unlink()
    result = memsynth_cli("release", "verify", str(copy))
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    rel = lambda p: p.relative_to(copy).as_posix()  # noqa: E731
    assert any(rel(parquet) in line and "SHA-256" in line for line in lines)
    assert any(rel(parquet) in line and "not a readable Parquet file" in line for line in lines)
    assert any(rel(user_file) in line and "candidate_solutions" in line for line in lines)
    assert any(rel(deleted) in line and "missing" in line for line in lines)
    assert "Traceback" not in result.stderr


def test_verify_refuses_links_and_paths_outside_the_release(builds, tmp_path):
    _, releases = builds
    outside = tmp_path / "outside"
    shutil.copytree(releases / "enpmr-v1.1.0", outside)
    # A file swapped for a link to an identical copy elsewhere: the bytes match, the release does not hold them.
    linked = tmp_path / "linked-file"
    shutil.copytree(releases / "enpmr-v1.1.0", linked)
    parquet = next((linked / "data").rglob("*.parquet"))
    parquet.unlink()
    parquet.symlink_to(outside / parquet.relative_to(linked))
    # The whole data/ folder a link.
    linked_dir = tmp_path / "linked-dir"
    shutil.copytree(releases / "enpmr-v1.1.0", linked_dir)
    shutil.rmtree(linked_dir / "data")
    (linked_dir / "data").symlink_to(outside / "data", target_is_directory=True)
    for folder, name in ((linked, parquet.relative_to(linked).as_posix()), (linked_dir, "data")):
        result = memsynth_cli("release", "verify", str(folder))
        assert result.returncode == 1, folder
        assert f"{name}: a symbolic link" in result.stderr
        assert "Traceback" not in result.stderr
    # SHA256SUMS naming paths outside the folder: refused, never read.
    escaping = tmp_path / "escaping"
    shutil.copytree(releases / "enpmr-v1.1.0", escaping)
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    sums = escaping / "SHA256SUMS"
    sums.write_text(sums.read_text() + "0" * 64 + "  ../secret.txt\n" + "0" * 64 + "  /etc/shadow\n")
    result = memsynth_cli("release", "verify", str(escaping))
    assert result.returncode == 1
    assert "'../secret.txt' is not a plain path inside the release" in result.stderr
    assert "'/etc/shadow' is not a plain path inside the release" in result.stderr
    assert "SHA-256 differs" not in result.stderr  # neither file was hashed


@pytest.mark.parametrize("manifest", [b"[]", b'{"files": 3}', b'{"files": [1, {"bytes": 2}]}',
                                      b'{"files": [{"path": "../../etc/passwd"}]}', b"\xff\xfe not text",
                                      b'{"files": [], "seed_format": "pal-set", "recipe": "nope"}'])
def test_a_malformed_manifest_is_one_line_not_a_traceback(builds, tmp_path, manifest):
    _, releases = builds
    copy = tmp_path / "bad"
    shutil.copytree(releases / "enpmr-v1.1.0", copy)
    (copy / "manifest.json").write_bytes(manifest)
    (copy / "SHA256SUMS").write_bytes(b"\xff garbage\n")
    result = memsynth_cli("release", "verify", str(copy))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "manifest.json" in result.stderr


def test_diff_lists_exactly_the_added_personas_rows(builds):
    warehouse, releases = builds
    for dataset in ("pal", "enpmr"):
        old = {r[0] for r in run_query(warehouse, dataset, "SELECT persona_id FROM personas", 1)[1]}
        diff = cli_json_here("release", "diff", "--dataset", dataset, "--from", "1", "--to", "2",
                             "--warehouse", str(warehouse), "--format", "json")
        folders = cli_json_here("release", "diff", str(releases / f"{dataset}-v1.0.0"),
                                str(releases / f"{dataset}-v1.1.0"), "--format", "json")
        for config, d in diff.items():
            key = d["key"]
            rows = [json.loads(line) for f in (releases / f"{dataset}-v1.1.0" / "jsonl" / config).glob("*.jsonl")
                    for line in f.open(encoding="utf-8")]
            new_rows = sorted(str(r[key]) for r in rows if r["persona_id"] not in old)
            assert new_rows, (dataset, config)
            assert d["added_ids"] == new_rows, (dataset, config)
            assert d["removed"] == d["changed"] == 0, (dataset, config, d["changed_columns"])
            assert folders[config]["added_ids"] == new_rows
    code, text, _ = cli_here("release", "diff", "--dataset", "pal", "--from", "1", "--to", "2",
                             "--warehouse", str(warehouse))
    assert code == 0 and "samples (by sample_id)" in text and "added" in text


def test_create_refuses_bad_input_and_leaves_nothing_behind(builds, tmp_path):
    warehouse, releases = builds
    for args, message in ((["--tag", "1.0"], "bad tag"), (["--tag", "v9.0.0", "--version", "99"], "no version 99"),
                          (["--tag", "v9.0.0", "--splits", "train=0.5"], "sum to 1"),
                          (["--tag", "v1.1.0", "--out", str(releases)], "already exists")):
        result = memsynth_cli("release", "create", "--dataset", "pal", "--out", str(tmp_path / "out"),
                              "--warehouse", str(warehouse), *args)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def _card(folder):
    import yaml

    text = (folder / "README.md").read_text(encoding="utf-8")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


@pytest.mark.parametrize("name,plots", [
    ("enpmr-v1.1.0", ("memories_per_category", "dialogues_per_need", "dialogues_per_target_category",
                      "turns_per_dialogue", "check_pass_rates", "blri_distribution")),
    ("pal-v1.1.0", ("sessions_per_user", "turns_per_user", "logs_per_session", "topics_per_dialogue",
                    "feedback_split"))])
def test_the_card_says_how_the_release_was_made(builds, name, plots):
    warehouse, releases = builds
    folder = releases / name
    meta, body = _card(folder)
    assert {"pretty_name", "license", "language", "size_categories", "task_categories", "configs"} <= set(meta)
    assert meta["language"] == ["zh"] and meta["size_categories"] == ["n<1K"]
    assert sum(1 for c in meta["configs"] if c.get("default")) == 1
    for heading in ("## How it was built", "## Statistics", "## Splits", "## Intended use", "## Limitations",
                    "### Compared with the seed's published figures"):
        assert heading in body, heading
    for plot in plots:
        assert f"](plots/{plot}.png)" in body and (folder / "plots" / f"{plot}.png").read_bytes()[:4] == b"\x89PNG"
    # The quality report's figures, diversity and persona coverage, reused.
    recipe = __import__(f"flows.{name.split('-v')[0]}", fromlist=["RECIPE"]).RECIPE
    quality = body.split("## Quality", 1)[1].split("## Splits", 1)[0]
    drawn = re.findall(r"\]\(plots/(quality_[a-z0-9_]+)\.png\)", quality)
    titles = {t.casefold() for t in re.findall(r"^### (.+)$", body, re.M)}
    assert len(drawn) == sum(f.title.casefold() not in titles for f in recipe.report_figures) > 0
    assert all((folder / "plots" / f"{n}.png").read_bytes()[:4] == b"\x89PNG" for n in drawn)
    assert "| distinct-1 |" in quality and "| persona attribute |" in quality
    dataset = name.split("-v")[0]
    version = cli_json_here("versions", dataset, "--warehouse", str(warehouse), "--format", "json")[1]
    for digest in (version["config_hash"], *version["prompt_hashes"].values(), *version["schema_hashes"].values()):
        assert digest in body
    stages = " → ".join(s.name for s in __import__(f"flows.{dataset}", fromlist=["RECIPE"]).RECIPE.stages)
    assert stages in body and version["model"] in body
    # No creation time in the card: the only one is the version's, in manifest.json.
    assert version["created_at"][:19] not in body
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["published_at"] == version["created_at"] and manifest["config_hash"] == version["config_hash"]


def test_diff_reports_changed_and_removed_rows_with_their_columns():
    import pyarrow as pa

    from memsynth.release.diff import diff_tables, format_diff

    old = {"samples": ("id", pa.table({"id": ["a", "b", "c"], "text": ["x", "y", "z"], "n": [1, 2, 3]}))}
    new = {"samples": ("id", pa.table({"id": ["a", "c", "d"], "text": ["x", "Z", "w"], "n": [1, 3, 4]}))}
    d = diff_tables(old, new)["samples"]
    assert (d["added_ids"], d["removed_ids"], d["changed_ids"]) == (["d"], ["b"], ["c"])
    assert d["changed_columns"] == {"c": ["text"]}
    text = format_diff(diff_tables(old, new))
    assert "+1 added, -1 removed, ~1 changed" in text and "changed: c (text)" in text


def test_english_releases_use_table_5_action_names():
    from flows.pal.plan import ACTION_LABELS
    from flows.pal.release import RELEASE
    from flows.pal.seed_format import ACTION_NAMES

    labels = RELEASE.lookup_tables("en")["action_labels"].to_pylist()
    assert {r["action"] for r in labels} == set(ACTION_LABELS["en"])
    assert {r["label"] for r in labels} == {"Topic Inquiry", "Requirement Confirmation", "Solution Discussion",
                                            "Solution Feedback", "Requirement Prediction", "Solution Proposal",
                                            "Feedback Response"}
    assert RELEASE.lookup_tables("zh")["action_labels"].to_pylist() == [
        {"action": k, "label": v} for k, v in ACTION_NAMES["zh"].items()]
