"""The engine's shape: the import contracts in pyproject.toml are kept (import-linter), and no
module of memsynth, the recipes or their schemas is part of an import cycle (grimp)."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT = Path(sys.executable).parent / "lint-imports"


def layers() -> list[str]:
    """The engine's packages, top first, as the layers contract in pyproject.toml declares them."""
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "layers"]
    return contract["layers"]


def test_the_import_contracts_are_kept():
    done = subprocess.run([str(LINT), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "broken" not in done.stdout.split("Contracts:")[-1].replace("0 broken", "")


def import_cycles(packages: tuple[str, ...]) -> list[list[str]]:
    """The strongly connected groups of two or more modules in the packages' import graph."""
    import grimp

    graph = grimp.build_graph(*packages)
    edges = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    for root in sorted(edges):  # Tarjan's algorithm, iteratively: the graph is deep
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            for nxt in edges[node]:
                if nxt in on_stack:
                    low[node] = min(low[node], low[nxt])
            if low[node] == index[node]:
                group = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    group.append(top)
                    if top == node:
                        break
                if len(group) > 1:
                    cycles.append(sorted(group))
    return cycles


def test_no_module_is_in_an_import_cycle():
    assert import_cycles(("memsynth", "flows", "schemas")) == []


def test_the_cycle_finder_finds_a_cycle(tmp_path, monkeypatch):
    package = tmp_path / "loopy"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from loopy import b\n")
    (package / "b.py").write_text("from loopy import c\n")
    (package / "c.py").write_text("import loopy.a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert import_cycles(("loopy",)) == [["loopy.a", "loopy.b", "loopy.c"]]


def test_an_upward_import_breaks_the_layers_contract(tmp_path):
    for name in ("memsynth", "flows", "schemas"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    with open(tmp_path / "memsynth" / "llm" / "retry.py", "a") as f:
        f.write("from memsynth.build.progress import BuildProgress  # the LLM layer reaching up\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}  # the copy comes before the editable install
    done = subprocess.run([str(LINT), "--no-cache"], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=300)
    assert "1 broken" in done.stdout, done.stdout[-3000:]
    assert "memsynth.llm is not allowed to import memsynth.build" in done.stdout
    assert "memsynth.llm.retry -> memsynth.build.progress" in done.stdout


def test_memsynth_is_its_packages_and_nothing_loose():
    package = ROOT / "memsynth"
    loose = sorted(p.name for p in package.glob("*.py") if p.name != "__init__.py")
    assert loose == []
    folders = sorted(p.name for p in package.iterdir() if (p / "__init__.py").is_file())
    assert folders == sorted(layers())


def test_each_package_says_what_it_may_import_as_the_contract_does():
    order = layers()
    for i, name in enumerate(order):
        doc = ast.get_docstring(ast.parse((ROOT / "memsynth" / name / "__init__.py").read_text()))
        assert doc, f"memsynth/{name} has no docstring"
        if name == "cli":
            assert "every package below it" in doc
            continue
        said = re.search(r"May import: (.*?)(?:\.|$)", doc, re.S)
        assert said, f"memsynth/{name}'s docstring does not say what it may import"
        named = set(re.findall(r"`(\w+)`", said.group(1)))
        assert named <= set(order[i + 1:]), (name, named - set(order[i + 1:]))


def test_the_readme_draws_the_layers_in_the_contract_s_order():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Architecture", 1)[1].split("\n## ", 1)[0]
    drawing = section.split("```text\n", 1)[1].split("```", 1)[0]
    assert [line.split("/", 1)[0] for line in drawing.splitlines()] == layers()


def test_only_the_location_tells_a_bucket_from_a_folder():
    """Storage goes through `warehouse.location.Location`: nothing else asks whether a warehouse
    is remote or reaches for the object store itself."""
    allowed = {"memsynth/warehouse/location.py", "memsynth/warehouse/objectstore.py"}
    asking = re.compile(r"\b(is_remote|store_of|ObjectStore|BucketLocation|objectstore)\b|startswith\(\"s3://\"\)")
    offenders = []
    for path in sorted((ROOT / "memsynth").rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        code = "\n".join(line.split("#", 1)[0] for line in path.read_text().splitlines())
        if relative not in allowed and asking.search(code):
            offenders.append(relative)
    assert offenders == []


def test_no_source_file_is_ignored_by_git():
    """A source file git ignores is missing from every clone (`build/` once hid memsynth/build/)."""
    if not (ROOT / ".git").exists():
        return  # not a checkout: nothing git could have left out
    ignored = subprocess.run(["git", "ls-files", "--others", "--ignored", "--exclude-standard", "memsynth", "flows",
                              "schemas", "prompts", "tests", "bench", "configs", "docs"],
                             cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines()
    # Left by runs, not sources: bytecode, the browser tests' screenshots, the benchmarks'
    # peer and server environments (bench/.venvs).
    assert [f for f in ignored if "__pycache__" not in f and not f.endswith(".pyc")
            and not f.startswith(("tests/artifacts/", "bench/.venvs/"))] == []
