"""Secret-looking values of a config masked: what is hashed, recorded or shown of it keeps no
key, token or password (the key's *name* in api_key_env stays)."""

from __future__ import annotations

import re
from typing import Any

_SECRET_KEY = re.compile(r"(api[_-]?key|secret|token|password|authorization)$", re.I)
_URL_CREDENTIALS = re.compile(r"(?<=://)[^/@\s]+@")


def redacted(value: Any, key: str = "") -> Any:
    """A copy with secret-looking values masked (the key's *name* in api_key_env stays)."""
    if isinstance(value, dict):
        return {k: redacted(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redacted(v, key) for v in value]
    if isinstance(value, str):
        if _SECRET_KEY.search(key):
            return "***"
        return _URL_CREDENTIALS.sub("***@", value)
    return value
