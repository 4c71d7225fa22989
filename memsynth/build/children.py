"""Child processes that never outlive memsynth, however it dies."""

from __future__ import annotations

import os
import sys

# Runs in the child before its real command: die with the parent (PR_SET_PDEATHSIG survives
# the exec), and go at once if the parent is already gone.
_LAUNCHER = """
import ctypes, os, signal, sys
parent = int(sys.argv[1])
try:
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
except (OSError, AttributeError):
    pass  # not Linux: the parent's exit handler is the only guard
if os.getppid() != parent:
    sys.exit(0)
os.execv(sys.executable, [sys.executable, *sys.argv[2:]])
"""


def tied(python_args: list[str]) -> list[str]:
    """The command line running `python <python_args>` as a child killed when this process dies."""
    return [sys.executable, "-c", _LAUNCHER, str(os.getpid()), *python_args]
