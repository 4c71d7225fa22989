"""Reading what a user, or a stranger, hands memsynth (configs, seed files, release files):
nesting bounded, YAML aliases bounded or refused, errors that say where, and text made safe
to print on a terminal."""

from __future__ import annotations

import json
import re
from typing import Any

import yaml

from memsynth.core.errors import ConfigError

# Deeper than any config, seed file or answer memsynth reads (those nest 6 or 7 levels), and
# far below what Python's recursion (parsers, pydantic, json.dumps) can take.
MAX_DEPTH = 64
# Values a YAML document may expand to through its aliases: a config is a few hundred; a
# "billion laughs" document stops here instead of exhausting memory downstream.
MAX_NODES = 100_000


def loads_json(data: str | bytes, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """JSON text as Python values; ConfigError '<where>: …' on anything else, or on nesting
    deeper than `max_depth` (never a RecursionError)."""
    try:
        value = json.loads(data)
    except RecursionError:
        raise ConfigError(f"{where}: nested more than {max_depth} levels deep") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{where}: not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{where}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
    check_shape(value, where, max_depth)
    return value


def check_shape(value: Any, where: str, max_depth: int = MAX_DEPTH, max_nodes: int | None = None) -> None:
    """Refuse a value nested more than `max_depth` levels (or, given `max_nodes`, holding more
    values than that, aliases counted each time they are used), walked without recursion."""
    stack = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if max_nodes is not None and seen > max_nodes:
            raise ConfigError(f"{where}: more than {max_nodes:,} values (YAML aliases expanding?)")
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > max_depth:
            raise ConfigError(f"{where}: nested more than {max_depth} levels deep")
        stack.extend((child, depth + 1) for child in children)


class _Refused(yaml.MarkedYAMLError):
    """Valid YAML that memsynth does not take (an alias, too deep, a date that cannot be)."""


class _Loader(yaml.SafeLoader):
    """SafeLoader that counts nesting while it composes (its composer recurses per level),
    may refuse aliases, and says where a date that cannot be is."""

    max_depth = MAX_DEPTH
    aliases = True
    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if not self.aliases and self.check_event(yaml.AliasEvent):
            raise _Refused(None, None, "YAML aliases (*name) are not accepted here",
                                              self.peek_event().start_mark)
        self._depth += 1
        try:
            if self._depth > self.max_depth:
                raise _Refused(None, None, f"nested more than {self.max_depth} levels deep",
                                                  self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_yaml_timestamp(self, node: Any) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except (ValueError, OverflowError) as exc:
            raise _Refused(None, None, f"{node.value!r} is not a date ({exc})",
                                                    node.start_mark) from None


_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_yaml_timestamp)


def loads_yaml(text: str, where: str, *, aliases: bool = True, max_depth: int = MAX_DEPTH,
               first_line: int = 1) -> Any:
    """One YAML document; ConfigError '<where>:<line>:<column>: …' on a syntax error, a date
    that does not exist, nesting deeper than `max_depth`, an alias where `aliases` is false,
    or aliases expanding past MAX_NODES values. `first_line`: the text's line in its file."""
    loader = None
    try:
        loader = _Loader(text)  # reads the stream's first characters: may refuse one already
        loader.aliases, loader.max_depth = aliases, max_depth
        value = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        what = exc.problem if isinstance(exc, _Refused) else f"not valid YAML: {exc.problem or exc.context}"
        at = f":{mark.line + first_line}:{mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{where}{at}: {what}") from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow
        before = text[:exc.position]
        at = f":{before.count(chr(10)) + first_line}:{len(before) - before.rfind(chr(10))}"
        raise ConfigError(f"{where}{at}: character U+{exc.character:04X} is not allowed in YAML") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{where}: not valid YAML ({str(exc).splitlines()[0]})") from None
    finally:
        if loader is not None:
            loader.dispose()
    check_shape(value, where, max_depth, MAX_NODES)
    return value


# What a terminal acts on instead of showing: C0/C1 controls (newline, ESC, CSI, OSC's BEL),
# DEL, line and paragraph separators, bidirectional overrides (they reorder what follows),
# and lone surrogates (a file name's undecodable bytes, which no UTF-8 stream can carry).
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(text: object) -> str:
    """`text` as one line that only shows: every character a terminal would act on escaped."""
    return _UNSAFE.sub(lambda m: _NAMED.get(m[0]) or (f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100
                                                      else f"\\u{ord(m[0]):04x}"), str(text))
