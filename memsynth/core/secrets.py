"""Secrets kept out of every message memsynth relays or writes.

An endpoint may echo a request back in an error (a 400 that quotes the `Authorization`
header), and a URL may carry a password. Text that leaves the LLM layer, and text a writer
puts in a file, a log or a Parquet column, goes through `mask`: the values of the API keys in
use and of every secret-named environment variable, `Bearer` tokens, a URL's
user:password and `password=…`-style pairs become `***`, whoever sent them.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import urllib.parse
from typing import Any

MASK = "***"
# Shorter values are not searched for in free text: a key of "x" would mask every x. (A
# credential that short is no secret anyway.)
MIN_LENGTH = 8
_SECRET_ENV = re.compile(r"(api[_-]?key|(^|_)key$|token|secret|passw(or)?d|credential)", re.I)
# Bearer tokens only: "Basic" is a word too, and basic-auth credentials come from a URL's
# user:password (masked below) or a known secret.
_SCHEME_CREDENTIAL = re.compile(r"(?i)\b(bearer)(\s+)[A-Za-z0-9._~+/=-]{8,}")
# The password of user:password@ only: a bare user name (postgres://postgres@host) is how
# the URL is told apart from another, and errors that compare two URLs must show it.
_URL_CREDENTIALS = re.compile(r"(?<=://)([^/@:\s\"']*):[^/@\s\"']+@")
_PAIR = re.compile(r"(?i)\b(api[_-]?key|x-api-key|authorization|password|passwd|secret|access[_-]?token)"
                   r"(\"?'?\s*[:=]\s*\"?'?)([^\s\"',;&}]+)")

_known: set[str] = set()
_lock = threading.Lock()


def remember(value: str | None) -> None:
    """Mask `value` wherever it appears from now on (an API key read from anywhere)."""
    if value and len(value) >= MIN_LENGTH:
        with _lock:
            _known.add(value)


def _secrets() -> list[str]:
    from_env = {v for k, v in os.environ.items() if len(v) >= MIN_LENGTH and _SECRET_ENV.search(k)}
    with _lock:
        found = _known | from_env
    return sorted(found, key=len, reverse=True)  # a key inside a longer one goes with it


def _forms(value: str) -> set[str]:
    """The value as it reads in a message: as is, URL-quoted, JSON-escaped."""
    return {value, urllib.parse.quote(value, safe=""), json.dumps(value)[1:-1]}


def mask(text: str) -> str:
    """`text` with every secret it holds replaced by `***`."""
    if not text:
        return text
    for secret in _secrets():
        for form in _forms(secret):
            if form in text:
                text = text.replace(form, MASK)
    text = _SCHEME_CREDENTIAL.sub(rf"\1\2{MASK}", text)
    text = _URL_CREDENTIALS.sub(rf"\1:{MASK}@", text)
    return _PAIR.sub(rf"\1\2{MASK}", text)


def masked_value(value: Any) -> Any:
    """A copy of a JSON-like value with every string in it masked."""
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, dict):
        return {k: masked_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(masked_value(v) for v in value)
    return value


def masked_error(exc: BaseException) -> BaseException:
    """`exc` with its message masked and its chain cut: the HTTP client's exception under it
    holds the endpoint's answer and the request's headers, key included."""
    exc.args = tuple(mask(a) if isinstance(a, str) else a for a in exc.args)
    exc.__cause__ = None
    exc.__context__ = None
    exc.__suppress_context__ = True
    return exc


def mask_log_records() -> None:
    """Mask every log record as it is made, whichever library logs it (Prefect logs a
    failed task's exception, message and traceback)."""
    make = logging.getLogRecordFactory()
    if getattr(make, "masks_secrets", False):
        return

    def masked_record(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        try:
            record.msg, record.args = mask(record.getMessage()), None
            if record.exc_info and not record.exc_text:
                record.exc_text = mask(logging.Formatter().formatException(record.exc_info))
        except Exception:  # noqa: BLE001, S110 - a record that cannot be formatted is left to its handler
            pass
        return record

    masked_record.masks_secrets = True  # type: ignore[attr-defined]
    logging.setLogRecordFactory(masked_record)


# RE2 (Arrow's regex engine) has no look-behind: the same patterns, to find rows to mask.
_FIND = (r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{8}", r"://[^/@\s\"']+@",
         r"(?i)\b(api[_-]?key|x-api-key|authorization|password|passwd|secret|access[_-]?token)\"?'?\s*[:=]")


def masked_table(table: Any, *, patterns: bool) -> Any:
    """An Arrow table with every secret in its string columns (lists of strings too) masked.
    `patterns`: also the credential patterns, for tables of relayed errors; any table gets the
    known secrets' values masked. Rows are rebuilt only where something is found."""
    import pyarrow as pa
    import pyarrow.compute as pc

    literals = [form for secret in _secrets() for form in _forms(secret)]
    for i, field in enumerate(table.schema):
        column = table.column(i)
        flat = column
        while pa.types.is_list(flat.type) or pa.types.is_large_list(flat.type):
            flat = pc.list_flatten(flat)
        if not (pa.types.is_string(flat.type) or pa.types.is_large_string(flat.type)) or len(flat) == 0:
            continue
        hits = [pc.any(pc.match_substring(flat, form)).as_py() for form in literals]
        if patterns:
            hits += [pc.any(pc.match_substring_regex(flat, find)).as_py() for find in _FIND]
        if any(hits):
            values = masked_value(column.to_pylist())
            table = table.set_column(i, field, pa.array(values, type=field.type))
    return table
