"""The Host names the dashboard, the exporter and the labelling page answer, against DNS
rebinding.

A web page the user opens can point a name of its own at 127.0.0.1 (DNS rebinding) and then
read, as same-origin, whatever a server there answers: the dashboard's JSON of every crawl. Its
requests carry that name in their ``Host`` header, so the servers answer only the names they
were started for and refuse any other with 403 and one line: ``localhost`` (and names under
``.localhost``, which browsers keep on the machine), the address or name they listen on, the
machine's own names (its host name, fully qualified too) when they listen on every address
(``0.0.0.0``, ``::``), those added with ``--allow-host``, and any IP address (a page cannot
rebind an address it does not own). The port is not compared, nor case or a final dot; a
request without ``Host`` (HTTP/1.0, not a browser) is answered.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

EVERY_ADDRESS = ("0.0.0.0", "::", "")
REFUSED = (
    "403 Forbidden: this server answers only the Host names it was started for; "
    "add one with --allow-host NAME\n"
)


def host_name(header: str) -> str:
    """The name in a Host header: without its port or brackets, lower-case, no final dot."""
    name = header.strip()
    if name.startswith("["):  # [::1]:8090
        name = name[1 : name.find("]")] if "]" in name else name[1:]
    elif name.count(":") == 1:  # name:port (more colons: a bare IPv6 address)
        name = name.split(":")[0]
    return name.rstrip(".").lower()


def allowed_hosts(bind: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a server listening on ``bind`` answers, with ``extra`` (``--allow-host``)."""
    names = {"localhost", bind, *extra}
    if bind in EVERY_ADDRESS:
        names |= {socket.gethostname(), socket.getfqdn()}
    return frozenset(host_name(name) for name in names if name)


def is_allowed(header: str | None, allowed: frozenset[str]) -> bool:
    """Whether a request with this Host header is answered."""
    if not header:
        return True
    name = host_name(header)
    if name in allowed or name.endswith(".localhost"):
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
