"""Whether a process recorded by its pid (in a folder's name) is still running on this machine."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True unless no process has this pid (another user's counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
