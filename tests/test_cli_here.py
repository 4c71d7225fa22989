"""The suite's in-process CLI (tests/conftest.cli_here), which most builds and reads of the suite
go through instead of a `memsynth` process apiece, and the docs runner's choice of the lines it
runs that way: each must give what a real process, or bash, gives."""

from __future__ import annotations

import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import cli_here, cli_json_here, memsynth_cli, write_config
from tests.test_docs_examples import PAGES, blocks, commands, plain_memsynth
from tests.test_warehouse import Row, _publish


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("here") / "wh"
    root.mkdir()
    _publish(root, [Row(id=1, tags=["猫"], extra={}), Row(id=2, tags=[], extra={})], 1)
    return root


@pytest.mark.parametrize("args", [
    ("query", "SELECT id, tags FROM things ORDER BY id", "--dataset", "d", "--format", "json"),
    ("query", "DROP TABLE things", "--dataset", "d"),  # refused: one line, exit 1
    ("versions", "d", "--bogus"),  # a mistyped command line: exit 2
])
def test_in_process_gives_what_the_process_gives(warehouse, args):
    # the warehouse named relatively: the command runs in the folder it is given
    real = memsynth_cli(*args, "--warehouse", "wh", cwd=warehouse.parent)
    assert cli_here(*args, "--warehouse", "wh", cwd=warehouse.parent) == (real.returncode, real.stdout, real.stderr)
    assert real.stdout or real.stderr.startswith("error: ")


def test_in_process_leaves_the_environment_and_folder_as_they_were(warehouse, tmp_path):
    before_env, before_cwd = dict(os.environ), os.getcwd()
    rows = cli_json_here("query", "SELECT count(*) AS n FROM things", "--dataset", "d", "--format", "json",
                         env={"MEMSYNTH_WAREHOUSE": str(warehouse)}, cwd=tmp_path)  # the warehouse from the env
    assert rows == [{"n": 2}]
    assert dict(os.environ) == before_env and os.getcwd() == before_cwd
    config = write_config(tmp_path / "c.yaml", dataset="early", personas={"count": 1})
    handlers = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    code, _, err = cli_here("build", str(config), "--llm", "simulator", "--regenerate", "p-x", "--warehouse",
                            str(tmp_path / "wh"))  # refused after `build` took SIGTERM
    assert code == 1 and "has no version yet" in err, err
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == handlers
    code, _, err = cli_here("query", "SELECT 1", "--dataset", "d", "--warehouse", "nowhere", cwd=tmp_path)
    assert code == 1 and err.startswith("error: ") and os.getcwd() == before_cwd


def _bash_words(text: str) -> list[str]:
    """The words bash hands `memsynth` for the line `text`."""
    import tempfile

    script = "memsynth() { for w in \"$@\"; do printf '%s\\0' \"$w\"; done; }\n" + text
    with tempfile.TemporaryDirectory() as folder:  # where a stray redirection writes; no PATH to run anything
        done = subprocess.run(["/bin/bash", "-c", script], capture_output=True, timeout=30, cwd=folder,
                              env={"PATH": "", "LANG": "C.UTF-8"})
    assert done.returncode == 0, done.stderr
    return done.stdout.decode().split("\0")[:-1]


def test_the_docs_lines_run_in_process_get_the_words_bash_gives_them():
    lines = [c.text for page in PAGES if page != "README.md" for b in blocks(page) if b.lang == "bash"
             and not b.marker.startswith(("not run:", "file ", "server")) for c in commands(b)]
    plain = [(text, found) for text in lines if (found := plain_memsynth(text)) is not None]
    assert len(plain) >= 30, "the docs pages run most of their lines in-process"
    for text, (_, args) in plain:
        assert args == _bash_words(text), text


@pytest.mark.parametrize("text", [
    "memsynth versions x | grep y", "memsynth query 'x' > out.json", "memsynth build a.yaml && echo ok",
    "memsynth build a.yaml; memsynth versions a", "memsynth build $CONFIG", "memsynth build `pwd`/a.yaml",
    "memsynth check-answers answers/*.json", "memsynth build ~/a.yaml", "cd x && memsynth versions a",
    "python -m memsynth.cli versions a", "memsynth build a.yaml &", "(memsynth versions a)",
])
def test_lines_that_need_the_shell_stay_with_bash(text):
    assert plain_memsynth(text) is None


_WORD = st.text(st.characters(codec="utf-8", exclude_characters="\0"), min_size=1, max_size=12)
# Bare words: the shell's own characters among a few letters that spell no bash builtin.
_BARE = st.text(st.sampled_from(list("xyz0 ;|&<>()$`*?[]{}~'\"\\#=\n\r\t猫🙂\u202e")), min_size=1, max_size=8)


@settings(max_examples=60, deadline=None)
@given(st.lists(_WORD, max_size=4), st.lists(_BARE, max_size=3), st.booleans())
def test_a_line_run_in_process_gets_exactly_the_words_bash_gives(quoted, bare, name):
    """Quoted words (CJK, emoji, RTL, quotes, newlines), bare words as they come: a line the
    runner takes gets bash's words; one it leaves is bash's to run."""
    import shlex

    words = [*map(shlex.quote, quoted), *bare]
    text = " ".join([*(["MEMSYNTH_X=1"] if name else []), "memsynth", *words])
    found = plain_memsynth(text)
    try:
        expected = _bash_words(text)
    except AssertionError:  # not a line bash runs (an open quote, a stray operator)
        assert found is None, text
        return
    if found is not None:
        assert found == ({"MEMSYNTH_X": "1"} if name else {}, expected), text
    if not bare:
        assert found is not None or re.search(r"[$`~#\n\r]", "".join(quoted)), text
