"""Which `Host` names the review app answers (memsynth/quality/review/serve.py checks them)."""

from __future__ import annotations

import ipaddress
import json
import os
import socket

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def allowed_hosts(address: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The Host names a browser may use for an app serving on `address`: the address itself;
    with a loopback address, the loopback names; with every address (0.0.0.0, ::), the
    loopback names and this machine's own names and addresses; and `extra` (a proxy's name)."""
    hosts = {address.strip("[]").lower(), *(h.lower() for h in extra)}
    wildcard = address in ("0.0.0.0", "::", "")
    try:
        loopback = ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        loopback = address == "localhost"
    if loopback or wildcard:
        hosts.update(LOOPBACK_NAMES)
    if wildcard:
        names = {socket.gethostname(), socket.getfqdn()}
        hosts.update(n.lower() for n in names if n)
        for name in names:
            try:
                hosts.update(info[4][0] for info in socket.getaddrinfo(name, None))
            except OSError:
                pass
    return sorted({_bracketed(h) for h in hosts if h and "*" not in h})


def _bracketed(host: str) -> str:
    """An IPv6 literal as a Host header carries it: [::1]."""
    try:
        return f"[{host}]" if ipaddress.ip_address(host).version == 6 else host
    except ValueError:
        return host


HOSTS = "MEMSYNTH_REVIEW_HOSTS"  # the environment variable the CLI hands the allowed names in (JSON)


def configured_hosts() -> list[str]:
    """The names `memsynth review` allowed; loopback alone when it said nothing."""
    try:
        given = json.loads(os.environ.get(HOSTS) or "null")
    except ValueError:
        given = None
    return [h for h in given if isinstance(h, str)] if isinstance(given, list) and given else [_bracketed(h) for h in LOOPBACK_NAMES]
