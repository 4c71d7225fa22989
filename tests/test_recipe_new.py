"""`memsynth recipe new NAME`: the project it makes installs with pip, builds on the simulator,
releases and passes its own tests as made; a name that cannot be a new recipe is refused in
one line with nothing written; `MEMSYNTH_RECIPE_PATH` finds a project that is not installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memsynth.cli.recipe_new import check_name, scaffold
from memsynth.core.errors import ConfigError
from memsynth.generation import registry
from tests.conftest import cli_json, memsynth_cli


def project_wheel(project: Path, folder: Path) -> Path:
    """A wheel of the project as its pyproject.toml declares it: its package (prompts included),
    and a dist-info whose entry_points.txt is the project's `memsynth.recipes` table. Made here
    because the test venv's setuptools (65, without `wheel`) cannot build one offline."""
    import base64
    import hashlib
    import tomllib
    import zipfile

    meta = tomllib.loads((project / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    name, version = meta["name"].replace("-", "_"), meta["version"]
    points = meta["entry-points"]["memsynth.recipes"]
    dist = f"{name}-{version}.dist-info"
    files = {str(p.relative_to(project)): p.read_bytes() for package in set(points.values())
             for p in sorted((project / package).rglob("*")) if p.is_file() and "__pycache__" not in p.parts}
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {meta['name']}\nVersion: {version}\n".encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files[f"{dist}/entry_points.txt"] = ("[memsynth.recipes]\n" + "".join(
        f"{k} = {v}\n" for k, v in points.items())).encode()

    def record(data: bytes) -> str:
        return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()

    rows = [f"{n},{record(d)},{len(d)}" for n, d in files.items()] + [f"{dist}/RECORD,,"]
    files[f"{dist}/RECORD"] = ("\n".join(rows) + "\n").encode()
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return wheel


def test_a_new_recipe_installs_builds_releases_and_passes_its_own_tests(tmp_path):
    made = memsynth_cli("recipe", "new", "kitbench", "--dir", str(tmp_path))
    assert made.returncode == 0, made.stderr
    project = tmp_path / "kitbench"
    assert not (project / "kitbench" / "simulated.py").exists()  # answered by the simulator's own path
    for part in ("pyproject.toml", "kitbench/stages.py", "kitbench/rules.py", "kitbench/release.py",
                 "kitbench/prompts/kitbench/facts.zh.j2", "kitbench/prompts/kitbench/conversation.j2",
                 "configs/kitbench-zh.yaml", "tests/test_kitbench.py"):
        assert (project / part).is_file(), part

    # Installed with pip from a wheel of the project, into a folder of its own: the test venv
    # stays as it was.
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                           str(site), str(project_wheel(project, tmp_path))],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    env = {"PYTHONPATH": str(site), "MEMSYNTH_RECIPE_PATH": ""}
    described = cli_json("recipes", "kitbench", "--format", "json", env=env)  # found by its entry point
    assert [s["name"] for s in described["stages"]] == ["facts", "conversation"]
    assert "dates_within_facts_date" in described["stages"][0]["checks"]
    assert "kitbench" not in memsynth_cli("recipes", env={"MEMSYNTH_RECIPE_PATH": ""}).stdout

    # Its own tests: the checks and their mutants in en and zh, the rules table, a build and a release.
    tested = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             f"--basetemp={tmp_path / 'runs'}"], cwd=project, capture_output=True, text=True,
                            timeout=900, env={**os.environ, **env})
    assert tested.returncode == 0, tested.stdout[-4000:] + tested.stderr[-2000:]
    assert "9 passed" in tested.stdout
    # …among them the mutants of every library check it declares (memsynth.quality.mutants.library).
    assert "def test_every_library_check_rejects_its_mutants" in (project / "tests/test_kitbench.py").read_text()
    (warehouse,) = [w for w in (tmp_path / "runs").glob("test_it_builds_and_releases*/warehouse")
                    if not w.parent.is_symlink()]  # pytest's `…current` link names the same run
    facts = cli_json("query", "SELECT count(*) AS n, min(date) AS first FROM kitbench_facts", "--dataset", "kitbench",
                     "--warehouse", str(warehouse), "--format", "json", env=env)
    assert facts[0]["n"] >= 9 and facts[0]["first"] >= "2019-12-02"  # three personas, at least 3 facts each


def test_a_project_on_memsynth_recipe_path_is_a_recipe_without_installing(tmp_path, monkeypatch):
    project = scaffold("pathbench", tmp_path)
    monkeypatch.setenv(registry.PATH_VARIABLE, str(project))
    assert "pathbench" in registry.names()
    cls = registry.recipe_class("pathbench")
    assert [s.name for s in cls.stages] == ["facts", "conversation"]
    assert registry.release_spec("pathbench").views[0].name == "facts"


@pytest.mark.parametrize("content, said", [
    (None, "holds no pyproject.toml"),
    ("[project\n", "cannot be read"),
    ("[project]\nname = 'x'\n", 'declares no [project.entry-points."memsynth.recipes"]'),
    ("[project.entry-points.'memsynth.recipes']\n'Bad Name' = 'x'\n", "registers 'Bad Name'"),
    ("[project.entry-points.'memsynth.recipes']\nok = 'os; rm -rf'\n", "a dotted module name"),
])
def test_a_bad_recipe_path_is_one_line(tmp_path, monkeypatch, content, said):
    if content is not None:
        (tmp_path / "pyproject.toml").write_text(content, encoding="utf-8")
    monkeypatch.setenv(registry.PATH_VARIABLE, str(tmp_path))
    with pytest.raises(ConfigError, match="MEMSYNTH_RECIPE_PATH") as caught:
        registry.names()
    assert said in str(caught.value) and "\n" not in str(caught.value)
    done = memsynth_cli("recipes", env={registry.PATH_VARIABLE: str(tmp_path)})
    assert done.returncode == 1 and len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("name, said", [
    ("enpmr", "already installed"), ("json", "already importable"), ("class", "Python keyword"),
    ("match", "Python keyword"), ("My Bench", "lower-case"), ("../evil", "lower-case"), ("a" * 33, "lower-case"),
    ("bench_", "start and end"), ("", "lower-case"), ("基准", "lower-case"), ("bench\n", "lower-case"),
])
def test_a_name_that_cannot_be_a_new_recipe_is_refused_in_one_line(tmp_path, name, said):
    done = memsynth_cli("recipe", "new", name, "--dir", str(tmp_path))
    assert done.returncode == 1, done.stdout
    assert len(done.stderr.strip().splitlines()) == 1 and said in done.stderr
    assert list(tmp_path.iterdir()) == []  # nothing written, not even the hidden work folder


def test_an_existing_folder_is_left_alone(tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep")
    done = memsynth_cli("recipe", "new", "taken", "--dir", str(tmp_path))
    assert done.returncode == 1 and "already exists" in done.stderr
    assert [p.name for p in (tmp_path / "taken").iterdir()] == ["mine.txt"]
    missing = memsynth_cli("recipe", "new", "fresh", "--dir", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "no such folder" in missing.stderr


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(max_size=40), st.from_regex(r"[a-z][a-z0-9_]{0,40}", fullmatch=True),
                 st.sampled_from(["con", "nul", "a/b", "a\x00b", "\ud800", "ａｂｃ", "x" * 200, "__init__", "os"])))
def test_any_name_is_taken_or_refused_with_one_line(name):
    try:
        check_name(name)
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message and len(message) < 300
        return
    # Taken only as a fresh package name a config and a table prefix can use.
    assert name.isidentifier() and name.isascii() and name == name.lower() and len(name) <= 32
    assert name not in registry.names()


def test_the_scaffold_s_prompts_render_in_both_languages(tmp_path):
    from memsynth.generation.prompts import DEFAULT_PROMPTS_DIR, PromptLibrary

    project = scaffold("renderbench", tmp_path)
    library = PromptLibrary(DEFAULT_PROMPTS_DIR, project / "renderbench" / "prompts")
    fact = {"title": "搬到杭州", "detail": "她搬到了杭州。", "date": "2021-03-04"}
    for language, suffix in (("en", ""), ("zh", ".zh")):
        facts = library.render(f"renderbench/facts{suffix}.j2", {"persona": "{{ 7*7 }}", "min_facts": 3,
                                                                 "window_start": "2019-12-02",
                                                                 "reference_date": "2024-12-02"})
        assert "{{ 7*7 }}" in facts[1]["content"]  # data is sent as written, never run as a template
        assert ("请在" in facts[1]["content"]) == (language == "zh")
        chat = library.render(f"renderbench/conversation{suffix}.j2", {"persona": "Ana", "fact": fact})
        assert "搬到杭州" in chat[1]["content"]
    assert json.loads(json.dumps(facts))  # plain messages


def test_the_scaffold_s_prompts_name_rules_of_its_table_alike_in_en_and_zh(tmp_path, monkeypatch):
    """A new recipe starts with its prompts' lines naming their rules (issue 51, item 1), so
    its own tests can hold every later line to the same."""
    import importlib

    from memsynth.generation.rules import prompt_lines, rule_problems

    project = scaffold("idsbench", tmp_path)
    monkeypatch.syspath_prepend(str(project))
    rules = importlib.import_module("idsbench.rules").RULES
    stages = importlib.import_module("idsbench.stages").STAGES
    assert list(rule_problems(rules, stages)) == []
    known = {r.id for r in rules}
    named: dict[str, set[str]] = {}
    for path in sorted((project / "idsbench" / "prompts" / "idsbench").glob("*.j2")):
        lines = prompt_lines(path.read_text(encoding="utf-8"))
        assert [n.number for n in lines if n.kind == "instruction" and not n.ids] == [], path.name
        named[path.name] = {i for n in lines for i in n.ids}
        assert named[path.name] <= known, path.name
    assert named["facts.j2"] == named["facts.zh.j2"] and named["conversation.j2"] == named["conversation.zh.j2"]
    assert {"language", "json-only"} <= known  # the shared snippets' rules, which its prompts include
    assert "def test_every_instruction_line_of_a_prompt_names_rules" in (project / "tests/test_idsbench.py").read_text()
