"""`release verify` and `release diff` on crafted and random releases, as an attacker would
hand them over: nothing outside the release is ever opened (an inotify canary watches a
release-shaped folder beside it, which every link and `..` points at), every fault is a
line, never a traceback, and no name can forge a line or drive the terminal."""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memsynth.release.diff import diff_tables, format_diff
from tests.release_probe import (
    UNSAFE,
    Canary,
    assert_one_line_error,
    assert_verify_lines,
    copy_release,
    make_release,
    resign,
    run_cli,
)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the canary is inotify")

PARQUET = "data/instances/test-00000-of-00001.parquet"
SEED = "stratmem-bench/test"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    return make_release(tmp_path_factory.mktemp("base"))


@pytest.fixture
def scene(base, tmp_path):
    """(a copy of the release to tamper with, a release-shaped folder outside it with a canary)."""
    release = copy_release(base, tmp_path / "release")
    outside = copy_release(base, tmp_path / "outside")
    (outside / "canary.txt").write_text("if this is read, verify left the release", encoding="utf-8")
    return release, outside


def _manifest(release: Path, change: Callable[[dict], None]) -> None:
    path = release / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    change(manifest)
    path.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")


def _link(release: Path, outside: Path, rel: str) -> None:
    target = release / rel
    shutil.rmtree(target) if target.is_dir() else target.unlink()
    target.symlink_to(outside / rel, target_is_directory=(outside / rel).is_dir())


def _deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def _aliases(release: Path) -> None:
    """Front matter whose aliases would expand to 9**6 data_files entries."""
    levels = ["a: &a [{split: test, path: 'data/*/test-*.parquet'}]"]
    levels += [f"{n}: &{n} [{', '.join(['*' + p] * 9)}]" for p, n in zip("abcde", "bcdef")]
    text = "---\n" + "\n".join(levels) + "\nconfigs: [{config_name: x, data_files: *f}]\n---\n"
    (release / "README.md").write_text(text, encoding="utf-8")


# (what is planted, whether the release is re-signed after it, a line verify must print)
CASES: dict[str, tuple[Callable[[Path, Path], None], bool, str]] = {
    "data folder a link": (lambda r, o: _link(r, o, "data"), True, "data: a symbolic link"),
    "parquet file a link": (lambda r, o: _link(r, o, PARQUET), True, f"{PARQUET}: a symbolic link"),
    "seed split folder a link": (lambda r, o: _link(r, o, SEED), True, f"{SEED}: a symbolic link"),
    "card a link": (lambda r, o: _link(r, o, "README.md"), True, "README.md: a symbolic link"),
    "manifest a link": (lambda r, o: _link(r, o, "manifest.json"), True, "manifest.json: a symbolic link"),
    "split name ..": (lambda r, o: _manifest(r, lambda m: m["splits"].update(
        proportions={"../../outside/stratmem-bench/test": 1})), True, "is not a split's name"),
    "split name absolute": (lambda r, o: _manifest(r, lambda m: m["splits"].update(
        proportions={str(o / SEED): 1})), True, "is not a split's name"),
    "splits a list": (lambda r, o: _manifest(r, lambda m: m.update(splits=["test"])), True,
                      "manifest.json: splits: not an object"),
    "proportions a string": (lambda r, o: _manifest(r, lambda m: m.update(splits={"proportions": "test"})), True,
                             "manifest.json: splits: not an object"),
    "manifest path absolute": (lambda r, o: _manifest(r, lambda m: m["files"].append(
        {"path": str(o / "canary.txt")})), True, "is not a plain path inside the release"),
    "manifest path ..": (lambda r, o: _manifest(r, lambda m: m["files"].append(
        {"path": "../outside/canary.txt", "bytes": 1})), True, "is not a plain path inside the release"),
    "sums path ..": (lambda r, o: (r / "SHA256SUMS").write_text("0" * 64 + "  ../outside/canary.txt\n"), False,
                     "SHA256SUMS:1: the path '../outside/canary.txt' is not a plain path"),
    "a listed .json holding 5": (lambda r, o: (r / SEED / "StratMemBench.json").write_text("5"), True,
                                 f"{SEED}/StratMemBench.json: holds a JSON int, not a list or object"),
    "card not UTF-8": (lambda r, o: (r / "README.md").write_bytes(b"---\nx: \xff\xfe\n---\n"), True,
                       "README.md: not UTF-8 text"),
    "seed file not JSON": (lambda r, o: (r / SEED / "StratMemBench_test.json").write_text("{nope"), True,
                           "StratMemBench_test.json: Invalid JSON"),
    "seed file without id": (lambda r, o: [(r / SEED / f).write_text(json.dumps(
        [{k: v for k, v in i.items() if k != "id"} for i in json.loads((r / SEED / f).read_text())]))
        for f in ("StratMemBench.json", "StratMemBench_test.json")], True, "0.id: Field required"),
    "not a Parquet file": (lambda r, o: (r / PARQUET).write_bytes(b"PAR1 this is not Parquet PAR1"), True,
                           f"{PARQUET}: not a readable Parquet file"),
    "manifest 5000 deep": (lambda r, o: (r / "manifest.json").write_text(_deep(5000)), True,
                           "manifest.json: nested more than 64 levels deep"),
    "seed file 5000 deep": (lambda r, o: (r / SEED / "StratMemBench.json").write_text(_deep(5000)), True,
                            "StratMemBench.json: nested more than 64 levels deep"),
    "card 5000 deep": (lambda r, o: (r / "README.md").write_text(f"---\nconfigs: {_deep(5000)}\n---\n"), True,
                       "README.md front matter:2:"),
    "card aliases": (lambda r, o: _aliases(r), True, "YAML aliases (*name) are not accepted here"),
    "card data_files outside": (lambda r, o: (r / "README.md").write_text(
        "---\nconfigs: [{config_name: x, data_files: [{split: t, path: ../outside/*.txt}]}]\n---\n"), True,
        "README.md: config x: a data_files path outside the release"),
    "a FIFO named in the manifest": (lambda r, o: (os.mkfifo(r / "data" / "pipe.parquet"), _manifest(
        r, lambda m: m["files"].append({"path": "data/pipe.parquet"}))), True,
        "data/pipe.parquet: not a regular file or folder"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_crafted_release_is_reported_line_by_line_and_nothing_outside_is_opened(scene, case):
    release, outside = scene
    plant, sign, expected = CASES[case]
    plant(release, outside)
    if sign:
        resign(release)
    canary = Canary(outside)
    try:
        code, _out, err = run_cli("release", "verify", str(release))
        problems = assert_verify_lines(code, err, release)
        assert canary.events() == []
    finally:
        canary.close()
    assert any(expected in line for line in problems), err


def test_the_untampered_release_passes(base):
    code, out, err = run_cli("release", "verify", str(base))
    assert (code, err) == (0, "") and out.endswith(": OK\n")


def test_names_with_newlines_and_escape_sequences_cannot_forge_lines_or_drive_the_terminal(scene):
    release, _ = scene
    (release / "x\nforged: OK").write_text("1")
    (release / "\x1b]0;owned\x07\x1b[2J.parquet").write_text("2")
    (release / "rtl\u202etxt.json").write_text("3")
    code, _out, err = run_cli("release", "verify", str(release))
    problems = assert_verify_lines(code, err, release)
    assert any("x\\nforged: OK: not listed in SHA256SUMS" in p for p in problems), err
    assert any("\\x1b]0;owned\\x07\\x1b[2J.parquet" in p for p in problems), err
    assert any("rtl\\u202etxt.json" in p for p in problems), err


def test_diff_of_two_sound_releases_runs(base, tmp_path):
    other = copy_release(base, tmp_path / "other")
    code, out, err = run_cli("release", "diff", str(base), str(other))
    assert (code, err) == (0, "") and "instances (by id): 2 → 2 rows" in out


def _other_schema(release: Path) -> None:
    pq.write_table(pa.table({"x": [1]}), release / "data" / "instances" / "test-extra.parquet")


DIFF_CASES: dict[str, tuple[Callable[[Path, Path], None], str]] = {
    "no configs": (lambda r, o: _manifest(r, lambda m: m.pop("configs")), "no `configs` object"),
    "configs a list": (lambda r, o: _manifest(r, lambda m: m.update(configs=["instances"])), "no `configs` object"),
    "no key": (lambda r, o: _manifest(r, lambda m: m["configs"].update(instances={})), "has no `key` column named"),
    "config name ..": (lambda r, o: _manifest(r, lambda m: m["configs"].update(
        {"../../outside/data/instances": {"key": "id"}})), "is not a config's name"),
    "config name absolute": (lambda r, o: _manifest(r, lambda m: m["configs"].update(
        {str(o / "data" / "instances"): {"key": "id"}})), "is not a config's name"),
    "data/<config> a link": (lambda r, o: _link(r, o, "data/instances"), "data/instances: not a regular file"),
    "not Parquet": (lambda r, o: (r / PARQUET).write_bytes(b"PAR1 nope PAR1"), "not a readable Parquet file"),
    "shard schemas differ": (lambda r, o: _other_schema(r), "config instances's Parquet files have different schemas"),
    "key not a column": (lambda r, o: _manifest(r, lambda m: m["configs"]["instances"].update(key="nope")),
                         "config instances has no column 'nope'"),
    "manifest 5000 deep": (lambda r, o: (r / "manifest.json").write_text(_deep(5000)), "nested more than 64"),
    "manifest not UTF-8": (lambda r, o: (r / "manifest.json").write_bytes(b"\xff\xfe{"), "not UTF-8"),
    "manifest a link": (lambda r, o: _link(r, o, "manifest.json"), "no readable manifest.json"),
}


@pytest.mark.parametrize("case", list(DIFF_CASES))
def test_diff_of_a_crafted_release_is_one_line_and_opens_nothing_outside(base, scene, case):
    release, outside = scene
    plant, expected = DIFF_CASES[case]
    plant(release, outside)
    canary = Canary(outside)
    try:
        assert_one_line_error(*run_cli("release", "diff", str(base), str(release)), expected)
        assert canary.events() == []
    finally:
        canary.close()


def test_diff_of_differently_keyed_configs_is_one_line(base, scene):
    release, _ = scene
    _manifest(release, lambda m: m["configs"]["instances"].update(key="query"))
    assert_one_line_error(*run_cli("release", "diff", str(base), str(release)), "keyed by 'id' before and 'query'")


def test_diff_text_escapes_ids_and_names():
    old = {"c\x1b[2J": ("id", pa.table({"id": ["a"]}))}
    new = {"c\x1b[2J": ("id", pa.table({"id": ["a", "b\nforged: +0 added", "\x1b]0;t\x07"]}))}
    text = format_diff(diff_tables(old, new))
    assert not UNSAFE & set(text) and text.count("\n") == 1, text
    assert "b\\nforged: +0 added" in text and "c\\x1b[2J" in text


# Hostile file names: any text a file name can hold (CJK, emoji, RTL, controls, escapes,
# newlines, undecodable bytes as lone surrogates), not "/" or NUL.
def _file_name(text: str) -> bool:
    try:
        return text not in (".", "..") and 0 < len(os.fsencode(text)) <= 200
    except UnicodeEncodeError:
        return False


NAMES = st.one_of(
    st.text(st.characters(exclude_characters="/\x00"), min_size=1, max_size=30),
    st.builds(lambda a, b: a + b, st.sampled_from(["\x1b]0;x\x07", "\x1b[2J", "\n", "\r", "\u202e", "\udcff",
                                                   "\u2028", "好", "😀", "\u200f"]),
              st.text(st.characters(exclude_characters="/\x00"), max_size=10)),
).filter(_file_name)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=NAMES, where=st.sampled_from(["", "data/", f"{SEED}/"]), kind=st.sampled_from(["file", "link", "dir"]))
def test_property_hostile_names_never_forge_lines_or_leave_the_release(base, tmp_path, name, where, kind):
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        release = copy_release(base, Path(scratch) / "release")
        outside = copy_release(base, Path(scratch) / "outside")
        target = release / where / name
        if kind == "file":
            target.write_bytes(b"x")
        elif kind == "link":
            target.symlink_to(outside / "data", target_is_directory=True)
        else:
            target.mkdir()
            (target / "inner.json").symlink_to(outside / "manifest.json")
        resign(release)
        canary = Canary(outside)
        try:
            code, _out, err = run_cli("release", "verify", str(release))
            problems = assert_verify_lines(code, err, release)
            assert canary.events() == []
        finally:
            canary.close()
        assert problems


JUNK = st.one_of(
    st.binary(max_size=300),
    st.integers(1, 3000).map(lambda d: _deep(d).encode()),
    st.integers(1, 3000).map(lambda d: ("---\nconfigs: " + _deep(d) + "\n---\n").encode()),
    st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                 lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=5), kids, max_size=3),
                 max_leaves=20).map(lambda v: json.dumps(v, ensure_ascii=False).encode()),
    st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
)
FILES = ["manifest.json", "SHA256SUMS", "README.md", PARQUET, "jsonl/instances/test.jsonl",
         f"{SEED}/StratMemBench.json", f"{SEED}/StratMemBench_test.json"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rel=st.sampled_from(FILES), junk=JUNK, sign=st.booleans())
def test_property_junk_in_any_listed_file_is_reported_never_a_traceback(base, tmp_path, rel, junk, sign):
    with tempfile.TemporaryDirectory(dir=tmp_path) as scratch:
        release = copy_release(base, Path(scratch) / "release")
        (release / rel).write_bytes(junk)
        if sign:
            resign(release)
        code, _out, err = run_cli("release", "verify", str(release))  # an exception fails the test
        if code or err:
            assert_verify_lines(code, err, release)
        code, out, err = run_cli("release", "diff", str(base), str(release))
        assert (code == 0 and err == "") or (code == 1 and err.count("\n") == 1 and err.startswith("error: ")), err
