"""Every example in the README and docs/ runs as written, top to bottom, on the simulator.

A page runs in a fresh folder that holds what a fresh clone gives a user (`configs/`) and
`../shared` (the seeds' reference data); LoCoMo, which a user downloads, is put where the docs
say to put it. What an example expects is written under it as `#> text` (the command's output
contains it), or `#> exits N` for a command whose point is a non-zero exit. A block is steered by an HTML comment on the line before it:

- `<!-- example: file PATH -->`: the block is a file the next examples use; it is written there;
- `<!-- example: server -->`: each command serves until stopped: it must listen on its port
  (its process or a child of it) and stop within seconds of SIGTERM;
- `<!-- example: after the install -->`: the README's set-up line; the part after its install;
- `<!-- example: not run: REASON -->`: not run, for the reason given (a real endpoint, a
  network download, a service that outlives a test).

A bash command ending in `&` is started in the background and stopped when the page ends.
On the docs/ pages a line that is only `NAME=value ... memsynth ARGS` runs in this process (with
the page's environment and folder; `plain_memsynth` takes only what bash would pass unchanged),
since a process apiece cost about 3 s of imports; the README's page, a line expecting an error
exit and anything the shell must read run in bash, as typed.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]
MARKER = re.compile(r"^<!-- example: (.+?) -->$")
COMMAND_TIMEOUT_S = 300
SERVE_TIMEOUT_S = 60  # until a server example listens; a hang guard, not a measure


@dataclass
class Block:
    page: str
    line: int
    lang: str
    body: str
    marker: str = ""


@dataclass
class Command:
    text: str
    line: int
    expect: list[str] = field(default_factory=list)


def blocks(page: str) -> list[Block]:
    """The fenced blocks of a page, each with the marker on the line before it."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if lines[i].startswith("```"):
            marker = MARKER.match(lines[i - 1]) if i else None
            start, body = i + 1, []
            i += 1
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            out.append(Block(page, start, lines[start - 1][3:].strip(), "\n".join(body) + "\n",
                             marker.group(1) if marker else ""))
        i += 1
    return out


def commands(block: Block) -> list[Command]:
    """A bash block's commands: continued lines and open quotes joined, `#>` lines attached."""
    out: list[Command] = []
    buf: list[str] = []
    for n, line in enumerate(block.body.splitlines()):
        if not buf and line.startswith("#>"):
            assert out, f"{block.page}:{block.line + n}: `#>` before any command"
            out[-1].expect.append(line[2:].strip())
            continue
        if not buf and (not line.strip() or line.lstrip().startswith("#")):
            continue
        buf.append(line)
        text = "\n".join(buf)
        if text.endswith("\\"):
            continue
        try:
            shlex.split(text, comments=True)
        except ValueError:  # a quote still open: the command goes on
            continue
        out.append(Command(text, block.line + n - len(buf) + 1))
        buf = []
    assert not buf, f"{block.page}:{block.line}: a command never ends"
    return out


def workspace(tmp: Path) -> Path:
    """What a user has after a fresh clone and the documented download, outside the repository."""
    if not SHARED.is_dir():
        pytest.skip(f"the seeds' reference data is not at {SHARED}")
    (tmp / "shared").symlink_to(SHARED)
    ws = tmp / "memsynth"
    shutil.copytree(ROOT / "configs", ws / "configs")
    (ws / "data" / "locomo").mkdir(parents=True)
    (ws / "data" / "locomo" / "locomo10.json").symlink_to(SHARED / "reference-data" / "locomo" / "locomo10.json")
    return ws


def environment(tmp: Path, page: str) -> dict[str, str]:
    """A user's shell: none of the suite's settings, and a home of its own (a build's Prefect
    writes nothing in the real one).

    The README's page builds as a new user does, each build starting its own Prefect server.
    The docs/ pages' builds (about forty) use the suite's server instead, as a user with
    `PREFECT_API_URL` set would. A private server costs a build about 4 s of CPU (importing
    Prefect's API), half of what a small build costs, and its start, stop
    and clean-up are tested elsewhere (the README page here, tests/test_prefect_api.py)."""
    shared_server = page != "README.md" and os.environ.get("PREFECT_API_URL")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "MEMSYNTH_", "PREFECT_", "AWS_", "HF_"))}
    if shared_server:
        env["PREFECT_API_URL"] = shared_server
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    (tmp / "home").mkdir()
    env.update(HOME=str(tmp / "home"), HF_HOME=str(tmp / "hf"), HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               COLUMNS="120")
    return env


def normalized(text: str) -> str:
    return " ".join(text.split())


class Page:
    """Runs one page's examples in order, in one folder, as a user would type them."""

    def __init__(self, page: str, tmp: Path):
        self.page, self.ws, self.env = page, workspace(tmp), environment(tmp, page)
        self.exports: list[str] = []
        self.background: list[subprocess.Popen] = []

    def where(self, line: int) -> str:
        return f"{self.page}:{line}"

    def script(self, text: str) -> str:
        return "set -eo pipefail\n" + "".join(e + "\n" for e in self.exports) + text

    def run(self, command: Command) -> None:
        text = command.text
        if text.startswith("export "):
            self.exports.append(text)
        if text.rstrip().endswith("&"):
            self.background.append(self.start(text.rstrip()[:-1]))
            self.wait_listening(self.background[-1], served_port(text), command.line)
            return
        started = time.monotonic()
        status = next((int(e.split()[1]) for e in command.expect if re.fullmatch(r"exits \d+", e)), 0)
        in_process = None if status or self.page == "README.md" or self.exports else plain_memsynth(text)
        if in_process is not None and self.starts_workers(in_process[1]):
            in_process = None
        if in_process is not None:
            returncode, output = self.run_here(*in_process)
        else:
            done = subprocess.run(["bash", "-c", self.script(text)], cwd=self.ws, env=self.env,
                                  capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
            returncode, output = done.returncode, done.stdout + done.stderr
        print(f"{self.where(command.line)} ({time.monotonic() - started:.1f} s): {text.splitlines()[0]}")
        assert returncode == status, (
            f"{self.where(command.line)}: `{text}` exited {returncode}:\n{output[-3000:]}")
        for noise in ("Traceback", "EventsWorker"):  # nothing a user should have to read past
            assert noise not in output, f"{self.where(command.line)}: `{text}` printed {noise}:\n{output[-3000:]}"
        for expected in (e for e in command.expect if not re.fullmatch(r"exits \d+", e)):
            assert normalized(expected) in normalized(output), (
                f"{self.where(command.line)}: `{text}` did not print {expected!r}:\n{output[-3000:]}")

    def starts_workers(self, args: list[str]) -> bool:
        """A build on a Dask cluster of its own starts worker processes, which a pytest worker
        cannot host (its `__main__` is not a program to re-import): such a line runs as a
        process of its own."""
        configs = (self.ws / a for a in args if a.endswith((".yaml", ".yml")))
        return any(c.is_file() and re.search(r"^runner:\s*dask", c.read_text(encoding="utf-8"), re.M)
                   for c in configs)

    def run_here(self, assignments: dict[str, str], args: list[str]) -> tuple[int, str]:
        """A plain `memsynth ...` line in this process, in the page's environment and folder
        (tests/conftest.cli_here): a process apiece spent about 3 s of CPU importing, and the
        docs/ pages run some sixty. The README's page, lines that expect an error exit and lines
        that need the shell keep a real `bash` and a real process."""
        from unittest import mock

        from tests.conftest import cli_here

        with mock.patch.dict(os.environ, {**self.env, **assignments}, clear=True):
            code, out, err = cli_here(*args, cwd=self.ws)
        return code, out + err

    def start(self, text: str) -> subprocess.Popen:
        return subprocess.Popen(["bash", "-c", self.script("exec " + text)], cwd=self.ws, env=self.env,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)

    def wait_listening(self, process: subprocess.Popen, port: int | None, line: int) -> None:
        """Until a server listens on its port: a line run in-process comes at once, where a
        process of its own took seconds to start (the page's next line is its client)."""
        deadline = time.monotonic() + SERVE_TIMEOUT_S
        while port is not None and process.poll() is None and not listening(process, port):
            assert time.monotonic() < deadline, f"{self.where(line)}: nothing listens on {port}"
            time.sleep(0.1)

    def serve(self, command: Command) -> None:
        process = self.start(command.text)
        try:
            port = served_port(command.text)
            if port is None:
                time.sleep(4)
            self.wait_listening(process, port, command.line)
            if process.poll() is not None:
                raise AssertionError(f"{self.where(command.line)}: `{command.text}` exited "
                                     f"{process.returncode} instead of serving:\n{process.stdout.read()[-3000:]}")
            os.killpg(process.pid, signal.SIGTERM)
            output = process.communicate(timeout=20)[0]
        finally:
            stop(process)
        for expected in command.expect:
            assert normalized(expected) in normalized(output), (
                f"{self.where(command.line)}: `{command.text}` did not print {expected!r}:\n{output[-3000:]}")

    def file(self, block: Block, path: str) -> None:
        target = (self.ws / path).resolve()
        assert target.is_relative_to(self.ws), f"{self.where(block.line)}: {path} is outside the folder"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.body, encoding="utf-8")

    def close(self) -> None:
        for process in self.background:
            stop(process)


def plain_memsynth(text: str) -> tuple[dict[str, str], list[str]] | None:
    """`NAME=value ... memsynth ARGS` with nothing for the shell to do (no expansion, pipe,
    redirection, unquoted glob or list): (the assignments, ARGS). Anything else is None."""
    try:
        if any("\n" in w and re.search("['\"]", w) for w in _words(text, posix=False)):
            return None  # a line break inside quotes: bash's to read
        text = text.replace("\\\n", " ")  # a continued line
        # `#` starts a comment only at a word's start (`0#` is a word): bash's to read.
        if re.search(r"[$`~#\n\r]", text):
            return None
        raw, words = _words(text, posix=False), _words(text, posix=True)
    except ValueError:
        return None
    if any(set(w) <= set("();<>|&") or (w[0] not in "'\"" and re.search(r"[*?[{]", w)) for w in raw):
        return None
    assignments = {}
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0], re.S):
        name, value = words.pop(0).split("=", 1)
        assignments[name] = value
    return (assignments, words[1:]) if words and words[0] == "memsynth" else None


def _words(text: str, posix: bool) -> list[str]:
    lexer = shlex.shlex(text, posix=posix, punctuation_chars=True)
    lexer.whitespace_split, lexer.commenters = True, ""
    return list(lexer)


def served_port(text: str) -> int | None:
    """The port a server example listens on: its `--port`, else its command's default."""
    given = re.search(r"--port[ =](\d+)", text)
    if given:
        return int(given.group(1))
    defaults = {"memsynth review": 8501, "memsynth simulator serve": 8001}
    return next((port for prefix, port in defaults.items() if text.startswith(prefix)), None)


def listening(process: subprocess.Popen, port: int) -> bool:
    """The example's own process (or a child of it) listens on `port`: it serves, rather than
    having been left alive (a port someone else holds does not count)."""
    import psutil

    try:
        family = [psutil.Process(process.pid), *psutil.Process(process.pid).children(recursive=True)]
        return any(c.status == psutil.CONN_LISTEN and c.laddr.port == port
                   for p in family for c in p.net_connections(kind="inet"))
    except psutil.Error:
        return False


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.mark.timeout(900)
@pytest.mark.parametrize("page", PAGES)
def test_every_example_runs(page, tmp_path):
    runner = Page(page, tmp_path)
    try:
        for block in blocks(page):
            marker = block.marker
            if marker.startswith("not run:"):
                continue
            if marker == "after the install":  # the set-up line: its install is .ci/run's, its build is ours
                text = block.body.strip().rsplit("&& ", 1)[1].removeprefix(".venv/bin/")
                runner.run(Command(text, block.line))
            elif marker.startswith("file "):
                runner.file(block, marker.removeprefix("file ").strip())
            elif block.lang == "bash":
                for command in commands(block):
                    runner.serve(command) if marker == "server" else runner.run(command)
            elif block.lang == "python":
                runner.run(Command(f"python - <<'PYTHON'\n{block.body}PYTHON", block.line))
            else:
                assert not marker, f"{page}:{block.line}: unknown example marker {marker!r}"
    finally:
        runner.close()


def test_examples_not_run_say_why_and_are_few():
    skipped = [(b.page, b.line, b.marker) for page in PAGES for b in blocks(page)
               if b.marker.startswith("not run:")]
    for page, line, marker in skipped:
        assert len(marker.removeprefix("not run:").strip()) > 20, f"{page}:{line}: say why it is not run"
    unknown = [(b.page, b.line, b.marker) for page in PAGES for b in blocks(page)
               if b.marker and not b.marker.startswith(("not run:", "file ", "server", "after the install"))]
    assert unknown == []
    runnable = [b for page in PAGES for b in blocks(page) if b.lang in ("bash", "python") and not b.marker.startswith("not run:")]
    assert len(skipped) <= len(runnable) // 3, f"{len(skipped)} blocks not run: {skipped}"


def test_the_readme_is_short_and_has_the_two_set_up_commands():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    setup = [b.body.strip() for b in blocks("README.md")[:2]]
    assert setup == [
        "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/memsynth build configs/quickstart.yaml --llm simulator",
        "python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && .venv/bin/python -m pytest -q -n 3",
    ]
    assert setup[1].split("&& ", 2)[2] in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for link in re.findall(r"\]\((docs/[^)#]+)", text):
        assert (ROOT / link).is_file(), link


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES)
def test_every_link_between_the_pages_resolves(page):
    source = ROOT / page
    text = re.sub(r"```.*?```", "", source.read_text(encoding="utf-8"), flags=re.S)
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]+))?\)", text):
        if target.startswith(("http://", "https://")):
            continue
        path = (source.parent / target).resolve() if target else source
        assert path.exists(), f"{page}: a link to {target}, which does not exist"
        if anchor:
            assert anchor in _anchors(path), f"{page}: no heading for #{anchor} in {path.name}"


def test_no_two_pages_serve_on_one_port():
    """The pages run side by side on the suite's workers: a port two pages' servers share lets
    one page's build talk to the other's server (and the second server fail to listen)."""
    owners: dict[int, set[str]] = {}
    for page in PAGES:
        for b in blocks(page):
            if b.lang == "bash" and not b.marker.startswith("not run:"):
                for port in re.findall(r"--port[ =](\d+)", b.body):
                    owners.setdefault(int(port), set()).add(page)
    assert {p: sorted(o) for p, o in owners.items() if len(o) > 1} == {}


def test_eval_tasks_have_an_example_the_docs_test_runs():
    """`memsynth eval longmem` (issue 54) among them: documented by a command this test runs,
    not only named. (`eval response` and `eval pal` have none yet.)"""
    run = {task for page in PAGES for b in blocks(page)
           if b.lang == "bash" and not b.marker.startswith("not run:")
           for task in re.findall(r"^memsynth eval (\w+)", b.body, re.M)}
    assert {"retrieval", "stratmem", "longmem"} <= run, run
