"""URL hygiene: which URLs may be crawled, the one spelling each is fetched and stored in, and
the host it is polite to.

Links come from pages anyone writes. Only what :func:`clean_url` returns reaches the frontier,
so no URL can break a Redis record (no whitespace in a host, a valid port, a bounded length)
and one server has one host key whatever the spelling: ``HTTP://User@WWW.Example.COM.:80/``
and ``http://www.example.com/`` are one URL on one host. IPv4 hosts are parsed the way
browsers parse them (the WHATWG URL standard), so ``127.1``, ``0x7f.0.0.1`` and
``2130706433`` are all ``127.0.0.1``: the address rule of :mod:`focused.middlewares.addresses`
sees what will be connected to.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

DEFAULT_PORTS = {"http": 80, "https": 443}
SCHEMES = frozenset(DEFAULT_PORTS)
HOST_NAME = re.compile(r"(?=.{1,253}$)[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*")
NUMBER_LABEL = re.compile(r"[0-9]+|0[xX][0-9a-fA-F]*")
# A URL already in its clean form (most links, and every URL the frontier hands back): a
# lower-case name (its last label, group 1, not a number), no port, and only characters
# w3lib's escaping leaves as they are. It skips the parse.
_NAME = r"https?://(?=.{1,253}/)(?:[a-z0-9_-]{1,63}\.)*([a-z0-9_-]{1,63})"
CLEAN = re.compile(_NAME + r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/%?]*")

# A clean URL that w3lib's canonicalize_url (sorted query, re-escaped path, ``;`` parameters
# and dot segments resolved) leaves as it is: no query, escape, parameter or dot segment.
CANONICAL = re.compile(_NAME + r"(?:/(?!\.)[A-Za-z0-9\-._~!$&'()*+,=:@]*)+")

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class BadURL(ValueError):
    """A URL that is not crawled; ``reason`` is a short name for stats."""

    def __init__(self, reason: str, url: str):
        super().__init__(f"{reason}: {url[:200]}")
        self.reason = reason


def _ipv4_number(label: str) -> int:
    """A label of an IPv4 host in the WHATWG parser: decimal, 0x hex or 0-prefixed octal."""
    if label[:2] in ("0x", "0X"):
        return int(label[2:] or "0", 16)
    if len(label) > 1 and label.startswith("0"):
        return int(label, 8)
    return int(label)


def ip_of(host: str) -> Address | None:
    """The address a host spells (any IPv4 spelling, or an IPv6 literal); None for a name.

    Raises ValueError for a host that looks like an IPv4 address but is not one (``1.2.3.999``,
    ``09.1``): browsers refuse those too.
    """
    host = host.strip("[]").rstrip(".")
    if ":" in host:
        return ipaddress.IPv6Address(host)
    labels = host.split(".")
    if not NUMBER_LABEL.fullmatch(labels[-1]):
        return None
    if len(labels) > 4 or not all(NUMBER_LABEL.fullmatch(label) for label in labels):
        raise ValueError(f"not an IPv4 address: {host}")
    numbers = [_ipv4_number(label) for label in labels]
    if any(n > 255 for n in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        raise ValueError(f"not an IPv4 address: {host}")
    value = numbers[-1]
    for i, n in enumerate(numbers[:-1]):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _unparsable(exc: ValueError | UnicodeError, url: str) -> BadURL:
    """The BadURL of a URL that urllib or w3lib refuse outright (a bad IPv6 host or port)."""
    return BadURL("port" if "port" in str(exc).lower() else "syntax", url)


def clean_url(url: str, max_length: int = 2083, *, base: str = "", encoding: str = "utf-8") -> str:
    """The URL as it is fetched and stored, or BadURL (``reason``: syntax, scheme, host, port,
    too_long).

    http and https only; the host lower-cased, IDNA-encoded, without userinfo or a trailing
    dot, an IPv4 address as a dotted quad and an IPv6 one compressed in brackets; no default
    port; path and query percent-escaped as Scrapy escapes request URLs (w3lib), the query in
    ``encoding`` (a page's, as browsers do); no fragment. A relative ``url`` is resolved
    against ``base``. ``max_length`` 0 means no limit (Scrapy's ``URLLENGTH_LIMIT``).
    """
    if base:
        try:
            url = urljoin(base, url.strip())
        except ValueError as exc:
            raise _unparsable(exc, url) from exc
    fast = CLEAN.fullmatch(url)
    if fast and not NUMBER_LABEL.fullmatch(fast[1]):
        if max_length and len(url) > max_length:
            raise BadURL("too_long", url)
        return url
    if max_length and len(url) > 4 * max_length:  # escaping only grows a URL: do no work
        raise BadURL("too_long", url)
    try:
        parts = urlsplit(safe_url_string(url.strip(), encoding))
        port = parts.port
    except (ValueError, UnicodeError) as exc:
        raise _unparsable(exc, url) from exc
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise BadURL("scheme", url)
    host = (parts.hostname or "").rstrip(".")
    try:
        address = ip_of(host) if host else None
    except ValueError as exc:
        raise BadURL("host", url) from exc
    if address is not None:
        host = str(address) if address.version == 4 else f"[{address.compressed}]"
    elif not HOST_NAME.fullmatch(host):
        raise BadURL("host", url)
    if port == 0:
        raise BadURL("port", url)
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    cleaned = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    if max_length and len(cleaned) > max_length:
        raise BadURL("too_long", url)
    return cleaned


def origin(url: str) -> str:
    """``scheme://host[:port]`` of a clean URL: the host the frontier is polite to."""
    start = url.find("://") + 3
    end = url.find("/", start)
    return url if end < 0 else url[:end]
