"""Commands that only read, print help or refuse bad input start in a blink: they import
neither Prefect nor the LLM client (openai) nor pandas, which a build needs and a query
does not, nor numpy and pyarrow (0.1 s with each other), which writing Parquet and scoring
an evaluation need, nor Hugging Face `datasets` (a second), which a release's card tells
its readers to load it with and memsynth itself never needs (issue 35). Timings are bench/startup.py's; this checks what makes them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.test_warehouse import Row, _publish

HEAVY = ("prefect", "openai", "pandas", "matplotlib", "streamlit", "dask", "numpy", "pyarrow", "datasets")


def _imported(*args: str, cwd: Path) -> tuple[set[str], subprocess.CompletedProcess]:
    """The top-level packages `memsynth ARGS` imported, as `python -X importtime` lists them."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "memsynth.cli", *args],
                            capture_output=True, text=True, cwd=cwd, timeout=120)
    names = {line.rsplit("|", 1)[1].strip().split(".")[0] for line in result.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names, result


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("light")
    _publish(root, [Row(id=1, tags=["a"], extra={})], 1)
    return root


@pytest.mark.parametrize("args", [
    ("query", "SELECT count(*) FROM things", "--dataset", "d"),
    ("versions", "d"),
    ("datasets", "list"),
    ("query", "SELECT", "--dataset", "d"),  # refused: not a query
    ("versions", "nope"),  # refused: no such dataset
])
def test_a_read_imports_no_build_machinery(warehouse, args):
    names, result = _imported(*args, "--warehouse", str(warehouse), cwd=warehouse)
    assert result.stdout or result.returncode == 1, result.stderr[-1000:]
    assert not names & set(HEAVY), sorted(names & set(HEAVY))


@pytest.mark.parametrize("args", [
    ("--help",), ("build", "--help"), ("query", "--help"), ("catalog", "move", "--help"),
    ("release", "create", "--help"), ("eval", "--help"),
    ("build", "configs/quickstart.yaml", "--personas", "0"),  # a bad argument
    ("build", "no-such-config.yaml"),  # a missing config
    ("build", "configs/quickstart.yaml", "--from-stage", "nope", "--regenerate", "x"),  # not a stage
])
def test_help_and_bad_input_import_no_build_machinery(args):
    names, result = _imported(*args, cwd=ROOT)
    assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr, result.stderr[-1000:]
    assert not names & set(HEAVY), sorted(names & set(HEAVY))
