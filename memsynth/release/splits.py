"""Splitting a release by persona: no persona in two splits, and none moves between versions."""

from __future__ import annotations

import hashlib
import re

from memsynth.core.errors import MemsynthError

_NAME = re.compile(r"^[a-z][a-z0-9_]{0,31}$")
DEFAULT_SPLITS = {"test": 1.0}


def parse_splits(text: str | None) -> dict[str, float]:
    """`train=0.8,test=0.2` → {"train": 0.8, "test": 0.2}; proportions must sum to 1."""
    if not text:
        return dict(DEFAULT_SPLITS)
    splits: dict[str, float] = {}
    for part in text.split(","):
        name, sep, share = part.strip().partition("=")
        if not sep:
            raise MemsynthError(f"bad split {part.strip()!r}: write name=proportion, e.g. train=0.8,test=0.2")
        if not _NAME.match(name):
            raise MemsynthError(f"bad split name {name!r}: lowercase letters, digits and '_'")
        if name in splits:
            raise MemsynthError(f"split {name!r} is given twice")
        try:
            value = float(share)
        except ValueError:
            raise MemsynthError(f"split {name!r}: {share!r} is not a number") from None
        if not 0 < value <= 1:
            raise MemsynthError(f"split {name!r}: the proportion must be in (0, 1], got {share}")
        splits[name] = value
    if abs(sum(splits.values()) - 1) > 1e-6:
        raise MemsynthError(f"split proportions must sum to 1, got {sum(splits.values()):g}")
    return splits


def assign_splits(persona_ids: list[str], splits: dict[str, float], seed: int) -> dict[str, str]:
    """Each persona's split, drawn from a hash of (seed, persona id).

    The draw depends on the persona alone, so a persona added in v1.1 never pushes an
    earlier one from test into train; proportions are met in expectation, not exactly.
    """
    out = {}
    for pid in persona_ids:
        digest = hashlib.sha256(f"{seed}:{pid}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        total = 0.0
        chosen = next(reversed(splits))
        for name, share in splits.items():
            total += share
            if u < total:
                chosen = name
                break
        out[pid] = chosen
    return out
