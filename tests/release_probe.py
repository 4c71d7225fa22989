"""What the release-input tests share: a small real release made without a build, the CLI run
in-process (hypothesis runs it hundreds of times), re-signing a tampered release so that only
the planted fault shows, and an inotify canary that sees any read of a folder outside."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import hashlib
import io
import json
import os
import shutil
import struct
import sys
from pathlib import Path
from unittest import mock

from memsynth.core.inputs import printable

INSTANCE = {
    "id": "locomo_0000000001", "given_type": "A", "inferred_type": "B",
    "query": "你还记得我们上次说的那只猫吗？", "query_time": "2:05 pm on 3 May, 2023", "history": "",
    "roles": {"human": "林悦", "virtual_person": "Bo"},
    "memory": {"must": [{"fact": "林悦在 2023-04-02 领养了一只灰猫。"}],
               "nice": [{"fact": "Bo likes cats."}, {"fact": "林悦住在杭州。"}, {"fact": "Bo 会弹吉他。"}],
               "irr": [{"fact": "Bo ran a half marathon in 2022."}]},
    "virtual_person_persona": {"virtual_person_name": "Bo", "summary": "温和的朋友。", "traits": ["warm"],
                               "style": ["casual"], "domains": ["pets"], "values": ["kindness"]},
}


def make_release(folder: Path) -> Path:
    """A stratmem release (Parquet, JSONL, StratMem-Bench JSON, card, plots) of two imported
    instances: no LLM call, a few seconds."""
    from memsynth.generation.registry import importer
    from memsynth.release.create import create_release

    seed = folder / "seed.json"
    second = {**INSTANCE, "id": "locomo_0000000002", "query": "What was the cat called again?"}
    seed.write_text(json.dumps([INSTANCE, second], ensure_ascii=False), encoding="utf-8")
    importer("stratmem")(seed, folder / "wh", "sm")
    create_release(folder / "wh", "sm", None, "v1.0.0", folder / "out", {"test": 1.0})
    return folder / "out" / "sm-v1.0.0"


def run_cli(*args: str) -> tuple[int, str, str]:
    """`memsynth ARGS` in this process, as its entry point runs it: (exit code, stdout, stderr).
    An exception that escapes `main` (a traceback, for a user) fails the calling test."""
    from memsynth.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
            mock.patch.object(sys, "argv", ["memsynth", *args]):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


UNSAFE = {chr(c) for c in [*range(0x20), *range(0x7f, 0xa0), 0x2028, 0x2029, 0x202e, 0x2066]} - {"\n"}


def assert_one_line_error(code: int, out: str, err: str, expected: str = "") -> None:
    """A refusal as the standards say: non-zero, exactly one line on stderr, nothing a terminal acts on."""
    assert code != 0, (out, err)
    assert err.endswith("\n") and err.count("\n") == 1 and err.startswith("error: "), err
    assert not UNSAFE & set(err), repr(err)
    assert expected in err, err


def assert_verify_lines(code: int, err: str, folder: Path) -> list[str]:
    """verify's report: one line per problem, each under the folder, then one error line
    counting them; no line forged by a name, nothing a terminal acts on. The problems."""
    assert code == 1, err
    assert "Traceback" not in err and not UNSAFE & set(err), repr(err)
    *problems, last = err.rstrip("\n").split("\n")
    assert last == printable(f"error: {len(problems)} problem(s) in {folder}"), err
    assert all(line.startswith(printable(f"{folder}/")) for line in problems), err
    return problems


def resign(folder: Path) -> None:
    """Make manifest.json's sizes and hashes and SHA256SUMS agree with the folder's regular
    files again (links are left for verify to report), so only the planted fault shows."""
    manifest_path = folder / "manifest.json"
    regular = sorted(p for p in _walk(folder) if p.name != "SHA256SUMS")
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for entry in manifest["files"]:
            path = folder / entry["path"]
            if path in regular:
                entry["bytes"], entry["sha256"] = path.stat().st_size, _sha(path)
        manifest_path.write_text(json.dumps(manifest, ensure_ascii=False), encoding="utf-8")
    except (ValueError, KeyError, TypeError, OSError, RecursionError):
        pass  # a manifest planted as the fault stays as planted
    lines = [f"{_sha(p)}  {p.relative_to(folder).as_posix()}\n" for p in regular]
    (folder / "SHA256SUMS").write_bytes("".join(lines).encode("utf-8", "surrogateescape"))


def _walk(folder: Path) -> list[Path]:
    # os.walk does not go into linked folders; linked files are left out here
    return [Path(top) / name for top, _dirs, files in os.walk(folder) for name in files
            if (Path(top) / name).is_file() and not (Path(top) / name).is_symlink()]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Canary:
    """inotify watches on every folder under `root`: any open or read of anything there, by
    a path, through a symbolic link, or a listing, is an event."""

    IN_ACCESS, IN_OPEN = 0x1, 0x20

    def __init__(self, root: Path) -> None:
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        assert self.fd >= 0, os.strerror(ctypes.get_errno())
        for top, _dirs, _files in os.walk(root):
            assert self.libc.inotify_add_watch(self.fd, os.fsencode(top), self.IN_ACCESS | self.IN_OPEN) >= 0
        self.events()  # from here on

    def events(self) -> list[str]:
        """Names opened or read since the last call."""
        seen = []
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError as exc:
                if exc.errno == errno.EAGAIN:
                    return seen
                raise
            at = 0
            while at < len(data):
                _wd, _mask, _cookie, size = struct.unpack_from("iIII", data, at)
                seen.append(data[at + 16:at + 16 + size].rstrip(b"\0").decode(errors="replace") or ".")
                at += 16 + size

    def close(self) -> None:
        os.close(self.fd)


def copy_release(base: Path, to: Path) -> Path:
    shutil.copytree(base, to, symlinks=True)
    return to
