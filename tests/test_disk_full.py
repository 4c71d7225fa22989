"""A disk that fills during a build, on a real (tiny) tmpfs: one line, nothing published.

The tmpfs is mounted in a private mount namespace (`unshare`), so only the build under test
sees it; where the machine allows no namespace the tests skip and say why.
"""
from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import write_config

MEMSYNTH = Path(sys.executable).parent / "memsynth"


def _unshare() -> list[str] | None:
    """The `unshare` that gives this user a private mount namespace here, if any does."""
    if not shutil.which("unshare"):
        return None
    for flags in (["-m"], ["-r", "-m"]):
        probe = subprocess.run(["unshare", *flags, "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
                               capture_output=True)
        if probe.returncode == 0:
            return ["unshare", *flags]
    return None


def build_on_a_tiny_disk(folder: Path, config: Path, size: str) -> subprocess.CompletedProcess[str]:
    """`memsynth build CONFIG` with `folder` a tmpfs of `size`, seen by this build alone."""
    unshare = _unshare()
    if unshare is None:
        pytest.skip("no private mount namespace here (unshare -m / -rm), so no tmpfs to fill")
    folder.mkdir(parents=True, exist_ok=True)
    script = (f"mount -t tmpfs -o size={size} tmpfs {shlex.quote(str(folder))} && "
              f"exec {shlex.quote(str(MEMSYNTH))} build {shlex.quote(str(config))} --llm simulator --no-progress")
    return subprocess.run([*unshare, "sh", "-c", script], capture_output=True, text=True, timeout=240)


def test_a_full_disk_while_staging_rows_is_one_line_and_publishes_nothing(tmp_path):
    config = write_config(tmp_path / "c.yaml", personas={"count": 3}, warehouse=str(tmp_path / "disk" / "wh"),
                          cache_dir=str(tmp_path / "cache"))
    done = build_on_a_tiny_disk(tmp_path / "disk", config, "120k")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stdout + done.stderr, done.stderr
    assert lines[0].startswith("error: cannot write the build's staged rows in ")
    assert "No space left on device" in lines[0] and "nothing was published" in lines[0]
    assert any((tmp_path / "cache").glob("*.jsonl"))  # the answers received are kept


def test_a_full_disk_under_the_cache_index_names_the_cause(tmp_path):
    config = write_config(tmp_path / "c.yaml", personas={"count": 3}, warehouse=str(tmp_path / "wh"),
                          cache_dir=str(tmp_path / "disk" / "cache"))
    done = build_on_a_tiny_disk(tmp_path / "disk", config, "200k")
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: cannot write the response cache in ")
    assert "cannot rollback" not in lines[0]
    assert "disk is full" in lines[0] or "No space left on device" in lines[0], lines[0]
