"""The suite's temp-folder guard (tests/tmp_guard.py) fails a run that leaves something behind,
and memsynth's own code leaves nothing in the system's temp folder."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT

LEAKY = '''
import tempfile


def test_leaks():
    tempfile.mkdtemp(prefix="leaked-by-a-test-")


def test_clean(tmp_path):
    (tmp_path / "kept-by-pytest").write_text("x")
    with tempfile.TemporaryDirectory(prefix="removed-by-its-test-"):
        pass
'''


def _pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "pytest.ini").write_text("[pytest]\n")
    (folder / "test_inner.py").write_text(LEAKY)
    # A run of its own: not a worker of this one, making its private folder in a temp folder of
    # its own (another test's run may be going on in this run's).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["TMPDIR"] = str(folder / "temp")
    (folder / "temp").mkdir()
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.tmp_guard", "-p", "no:cacheprovider",
                           "-c", str(folder / "pytest.ini"), "--rootdir", str(folder), "-q",
                           str(folder / "test_inner.py"), *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=240)


def _left(folder: Path) -> list[str]:
    return [p.name for p in (folder / "temp").iterdir()]


def test_a_run_that_leaves_a_temp_folder_fails_and_names_it_once_across_workers(tmp_path):
    result = _pytest(tmp_path, "-n", "2")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    assert "2 passed" in result.stdout
    assert result.stdout.count("leaked-by-a-test-") == 1, result.stdout[-3000:]
    assert "removed-by-its-test-" not in result.stdout and "pytest-of-" not in result.stdout
    assert _left(tmp_path) == []  # the run's folder went with it, leak and all


def test_a_clean_run_passes_and_removes_its_folder(tmp_path):
    result = _pytest(tmp_path, "-k", "clean")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "temp folder not clean" not in result.stdout
    assert _left(tmp_path) == []


def test_chinese_word_splitting_keeps_its_dictionary_in_memsynths_cache_not_the_temp_folder(tmp_path):
    temp, cache = tmp_path / "temp", tmp_path / "cache"
    temp.mkdir()
    code = ("from memsynth.core.textmatch import zh_words; from memsynth.quality.evaluation.text import bleu_tokens;"
            "assert zh_words('以前天天去公园') and bleu_tokens('以前天天')")
    env = {**os.environ, "TMPDIR": str(temp), "XDG_CACHE_HOME": str(cache)}
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=120)
    assert list(temp.iterdir()) == []
    assert (cache / "memsynth" / "jieba.cache").is_file()
