"""The browser's own requests go where a plain fetch may go, and no further.

A rendered page's scripts, frames, images and beacons make the browser fetch URLs of the page's
choosing; a page on a public host could point them at ``http://127.0.0.1:6379/``, a cloud's
metadata service or a printer on the LAN (:mod:`focused.middlewares.addresses`). Each request
of the browser is asked :class:`SubRequestGuard` first (scrapy-playwright's abort predicate),
which aborts:

- a request for another scheme than http or https (counted in
  ``focused/render/subrequests/refused``);
- a request whose host spells a refused address, or is ``localhost``, or (without a proxy in
  the environment, which resolves names itself) whose name the crawl's DNS resolver refuses, by
  the same check as a plain fetch's, with the same allowed networks (also counted as refused);
- images, fonts and media, which add nothing to a page's text or links and most of its bytes
  (counted in ``focused/render/subrequests/blocked``).

The browser follows redirects without asking its route handlers again;
:mod:`focused.render.redirects` takes them hop by hop so that each hop is asked here too.
A WebSocket is asked the same (:meth:`SubRequestGuard.websocket`, its ``ws``/``wss`` read as
``http``/``https``). Under the routes, :func:`resolver_rules` makes Chromium's own network stack
refuse to connect to ``localhost`` and the non-public IP literals the crawl refuses, whatever
asks it: a preconnect, a worker's WebSocket, anything no route sees.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError

from focused.errors import exit_on_user_error
from focused.middlewares.addresses import (
    ALLOW_HINT,
    LOCALHOST,
    AddressResolver,
    ForbiddenLookup,
    allowed_networks,
    host_refusal,
    proxy_hosts,
)

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from playwright.async_api import Request as BrowserRequest
    from playwright.async_api import WebSocketRoute
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.middlewares.addresses import Network

logger = logging.getLogger(__name__)

SCHEMES = frozenset({"http", "https"})
BLOCKED_TYPES = frozenset({"image", "media", "font"})
REFUSED = "focused/render/subrequests/refused"
BLOCKED = "focused/render/subrequests/blocked"
WEBSOCKET_SCHEMES = {"ws": "http", "wss": "https"}
# The IPv4 networks that are not public (Python's ``is_global`` false, IANA's special-purpose
# registry), as Chromium's host resolver is told to refuse them.
NOT_PUBLIC_V4 = tuple(
    ipaddress.IPv4Network(network)
    for network in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.168.0.0/16",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/3",
    )
)
# The same of IPv6 literals, as Chromium writes them (no brackets, zeros compressed): loopback,
# unspecified, unique local (fc00::/7), link-local (fe80::/10), IPv4-mapped and NAT64. Each has
# a colon, which no DNS name has.
NOT_PUBLIC_V6 = (
    "::1", "::", "fc*:*", "fd*:*", "fe8*:*", "fe9*:*", "fea*:*", "feb*:*", "::ffff:*",
    "64:ff9b::*",
)  # fmt: skip


class SubRequestGuard:
    """scrapy-playwright's ``abort_request`` predicate: True aborts the browser's request."""

    def __init__(
        self, stats: StatsCollector, allowed: Sequence[Network] = (), resolve: bool = True
    ):
        self.stats = stats
        self.allowed = list(allowed)
        self.resolve = resolve  # False behind a proxy: the proxy resolves the names
        self.logged = False

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> SubRequestGuard:
        return cls(crawler.stats, allowed_networks(crawler), resolve=not proxy_hosts())

    async def __call__(self, request: BrowserRequest) -> bool:
        if request.resource_type in BLOCKED_TYPES:
            self.stats.inc_value(BLOCKED)
            return True
        return await self.refuses(request.url)

    async def websocket(self, route: WebSocketRoute) -> None:
        """Playwright's WebSocket route: a socket the guard refuses is closed unopened, any
        other is connected to its server."""
        scheme, _, rest = route.url.partition(":")
        if await self.refuses(f"{WEBSOCKET_SCHEMES.get(scheme, scheme)}:{rest}"):
            await route.close(code=1008, reason="refused")
        else:
            route.connect_to_server()

    async def refuses(self, url: str) -> bool:
        """Whether the browser may not fetch ``url`` (counted and logged when so)."""
        reason = await self.refusal(url)
        if reason is None:
            return False
        self.stats.inc_value(REFUSED)
        if not self.logged:
            self.logged = True
            logger.warning(
                "Refused the browser's request for %(url)s: %(reason)s (allow its network with "
                "%(hint)s); further refusals are counted in %(stat)s and logged at DEBUG",
                {"url": url, "reason": reason, "hint": ALLOW_HINT, "stat": REFUSED},
            )
        else:
            logger.debug(
                "Refused the browser's request for %(url)s: %(reason)s",
                {"url": url, "reason": reason},
            )
        return True

    async def refusal(self, url: str) -> str | None:
        """Why the browser may not fetch ``url``, or None when it may."""
        parts = urlsplit(url)
        if parts.scheme not in SCHEMES:
            return f"{parts.scheme}: is not http or https"
        host = parts.hostname or ""
        reason = host_refusal(host, self.allowed)
        if reason is not None or not self.resolve:
            return reason
        from twisted.internet import reactor

        resolver = getattr(reactor, "resolver", None)
        if not isinstance(resolver, AddressResolver):
            return None
        try:
            await maybe_deferred_to_future(resolver.getHostByName(host))
        except ForbiddenLookup as refused:
            return str(refused)
        except DNSLookupError:  # a name that does not resolve: the browser fails on its own
            return None
        return None


def ipv4_patterns(network: ipaddress.IPv4Network) -> list[str]:
    """Chromium host patterns (``*`` for any octet) that match the addresses of ``network``."""
    octets = network.network_address.packed
    whole, part = divmod(network.prefixlen, 8)
    fixed = [str(octet) for octet in octets[:whole]]
    if not part:
        return [".".join(fixed + ["*"] * (4 - whole))]
    first = octets[whole]
    return [
        ".".join([*fixed, str(value), *["*"] * (3 - whole)])
        for value in range(first, first + 2 ** (8 - part))
    ]


def resolver_rules(allowed: Sequence[Network], passed: Iterable[str]) -> str:
    """Chromium's ``--host-resolver-rules``: the non-public IP literals and ``localhost`` fail as
    names that do not exist, but for those in the ``allowed`` networks and the hosts ``passed``
    (a proxy's).

    Chromium maps a host by these patterns before it connects, for every request, preconnect
    and socket of the browser, so what no route sees is refused too. A DNS name is not
    matched (its address is the guard's to check); a name of four labels whose first is such
    a number (``10.a.b.c``) would be refused with the literals. The IPv6 literals are left to
    the guard alone when an IPv6 network is allowed."""
    excluded = [
        pattern
        for network in allowed
        if isinstance(network, ipaddress.IPv4Network)
        for pattern in ipv4_patterns(network)
    ]
    refused = [p for network in NOT_PUBLIC_V4 for p in ipv4_patterns(network)]
    if not any(LOCALHOST in network for network in allowed):
        refused += ["localhost", "*.localhost"]
    if not any(isinstance(network, ipaddress.IPv6Network) for network in allowed):
        refused += list(NOT_PUBLIC_V6)
    rules = [f"EXCLUDE {host}" for host in (*passed, *excluded)]
    return ", ".join(rules + [f"MAP {pattern} ~NOTFOUND" for pattern in refused])
