"""Only public addresses are fetched: a page cannot make the crawler attack its own network.

A page on a public host can link or redirect to ``http://127.0.0.1:6379/`` (a local Redis),
``http://169.254.169.254/`` (a cloud's metadata service) or a printer on the LAN; a crawler that
follows fetches them on the page author's behalf (server-side request forgery). Loopback,
private, link-local, multicast, reserved, unspecified and other non-public addresses, IPv4 and
IPv6 (an IPv4-mapped, 6to4 or NAT64 IPv6 address by the IPv4 address it carries), are refused
twice:

- :class:`AddressMiddleware`, a downloader middleware placed before robots.txt is asked,
  refuses a request whose host *spells* such an address in any notation (``127.1``,
  ``0x7f.0.0.1``, ``2130706433``, ``[::ffff:127.0.0.1]``, see :func:`focused.links.urls.ip_of`) or
  is ``localhost`` or ``*.localhost``, with :class:`focused.middlewares.failures.ForbiddenAddress`.
  It
  applies to every request, proxied or not, redirects and robots.txt included.
- :class:`AddressResolver`, the DNS resolver the add-on installs (``TWISTED_DNS_RESOLVER``),
  fails the lookup of a name whose address is refused, as if the name did not exist. Every
  direct connection of Scrapy's HTTP handler looks its host up there, so the check is on the
  address actually connected to, after DNS; the middleware then names such a failure.

Networks in ``FOCUSED_ALLOWED_NETWORKS`` and in the topic file's ``allowed_networks`` are
allowed. The proxies of the environment (``http_proxy``, ``https_proxy``) are the operator's:
the resolver lets their hosts through. Through a proxy the proxy resolves the target's name, so
only the middleware's check applies to it.
"""

from __future__ import annotations

import ipaddress
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING
from urllib.parse import urlsplit
from urllib.request import getproxies

from scrapy.exceptions import CannotResolveHostError
from scrapy.resolver import CachingThreadedResolver
from scrapy.utils.datatypes import LocalCache
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.url import add_http_if_no_scheme
from twisted.internet.error import DNSLookupError

from focused.errors import FocusedError, exit_on_user_error
from focused.links.urls import ip_of
from focused.middlewares.failures import ForbiddenAddress

if TYPE_CHECKING:
    from collections.abc import Sequence

    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector
    from twisted.internet.base import ReactorBase
    from twisted.internet.defer import Deferred

logger = logging.getLogger(__name__)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
LOCALHOST = ipaddress.IPv4Address("127.0.0.1")
# Checked in this order, so an address gets its most telling name.
KINDS = ("unspecified", "loopback", "link_local", "multicast", "reserved", "private", "site_local")
STAT = "focused/addresses/refused"
ALLOW_HINT = "FOCUSED_ALLOWED_NETWORKS or the topic's allowed_networks"


class ForbiddenLookup(DNSLookupError):
    """A DNS name whose address is not public, failed like a name that does not exist."""


def parse_networks(values: Iterable[object], where: str) -> list[Network]:
    """CIDR networks (``10.0.0.0/8``; an address alone is a network of one), or one
    FocusedError naming ``where`` and the bad value."""
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(str(value).strip(), strict=False))
        except ValueError:
            raise FocusedError(f"{where}: {value!r} is not a network such as 10.0.0.0/8") from None
    return networks


def refusal(address: Address, allowed: Iterable[Network] = ()) -> str | None:
    """Why ``address`` may not be fetched ("loopback", "private", ...), or None when it is a
    public address or in one of the ``allowed`` networks."""
    allowed = list(allowed)
    if any(address in network for network in allowed):
        return None
    if isinstance(address, ipaddress.IPv6Address):
        carried = address.ipv4_mapped or address.sixtofour
        if carried is None and address in NAT64:
            carried = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if carried is not None:  # connecting to it reaches (or is routed to) that IPv4 host
            return refusal(carried, allowed)
    for kind in KINDS:
        if getattr(address, f"is_{kind}", False):
            return kind.replace("_", "-")
    return None if address.is_global else "non-public"


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def host_refusal(host: str, allowed: Iterable[Network] = ()) -> str | None:
    """Why a URL's host may not be fetched, as "127.0.0.1 is a loopback address", when it
    spells a refused address or is ``localhost``; None otherwise (a DNS name is the
    resolver's to check)."""
    host = host.lower().rstrip(".")
    if host == "localhost" or host.endswith(".localhost"):  # RFC 6761: always the loopback
        address: Address | None = LOCALHOST
    else:
        try:
            address = ip_of(host)
        except ValueError:  # looks numeric but is no address (1.2.3.999): left to DNS too
            return None
    if address is None:
        return None
    kind = refusal(address, allowed)
    return None if kind is None else f"{address} is {_a(kind)} address"


def proxy_hosts() -> frozenset[str]:
    """Host names of the environment's HTTP(S) proxies (as HttpProxyMiddleware reads them):
    the operator chose them, so the resolver lets them through."""
    hosts = (
        urlsplit(add_http_if_no_scheme(url)).hostname
        for scheme, url in getproxies().items()
        if scheme in ("http", "https")
    )
    return frozenset(host for host in hosts if host)


class AddressResolver(CachingThreadedResolver):
    """Scrapy's default resolver (cached, IPv4, ``DNS_TIMEOUT``) that fails the lookup of a
    name whose address is refused, with :class:`ForbiddenLookup`.

    Twisted's HTTP client looks up every host it connects to here, IP literals included, so
    what is refused here is never connected to. The lookup's error does not reach the
    request (Twisted reports "Couldn't find the hostname"), so refused names are remembered in
    ``refused`` (name: reason) for :class:`AddressMiddleware` to tell the two apart.
    """

    def __init__(
        self,
        reactor: ReactorBase,
        cache_size: int,
        timeout: float,
        allowed: Sequence[Network] = (),
        proxies: Iterable[str] = (),
    ):
        super().__init__(reactor, cache_size, timeout)
        self.allowed = list(allowed)
        self.proxies = frozenset(host.lower() for host in proxies)
        self.refused: LocalCache[str, str] = LocalCache(10_000)

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> AddressResolver:
        """``crawler`` is the crawler process (Scrapy builds resolvers before any crawler)."""
        s = crawler.settings
        cache_size = s.getint("DNSCACHE_SIZE") if s.getbool("DNSCACHE_ENABLED") else 0
        allowed = exit_on_user_error(parse_networks)(
            s.getlist("FOCUSED_ALLOWED_NETWORKS"), "setting FOCUSED_ALLOWED_NETWORKS"
        )
        return cls(reactor, cache_size, s.getfloat("DNS_TIMEOUT"), allowed, proxy_hosts())

    def allow(self, networks: Iterable[Network]) -> None:
        """Allow more networks (a topic's), for every lookup of this process from now on."""
        self.allowed += [network for network in networks if network not in self.allowed]

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        found = super().getHostByName(name, timeout)
        if name.lower() not in self.proxies:
            found.addCallback(self._check, name)
        return found

    def _check(self, address: str, name: str) -> str:
        key = name.lower().rstrip(".")
        kind = refusal(ipaddress.ip_address(address), self.allowed)
        if kind is None:
            self.refused.pop(key, None)
            return address
        reason = f"{name} resolves to {address}, {_a(kind)} address"
        self.refused[key] = reason
        raise ForbiddenLookup(reason)


def allowed_networks(crawler: Crawler) -> list[Network]:
    """The networks a crawl may fetch from although they are not public:
    FOCUSED_ALLOWED_NETWORKS and the topic's ``allowed_networks``."""
    allowed = parse_networks(
        crawler.settings.getlist("FOCUSED_ALLOWED_NETWORKS"), "setting FOCUSED_ALLOWED_NETWORKS"
    )
    topic = getattr(crawler.spider, "topic", None)
    if topic is not None:
        allowed += parse_networks(topic.allowed_networks, f"{topic.path}: allowed_networks")
    return allowed


class AddressMiddleware:
    """Refuses a request whose host spells a refused address (see the module docstring), or
    whose host name the resolver refused, and turns the lookup the resolver refused into the
    same :class:`ForbiddenAddress` (so a refused name is retried once at most, and quietly).

    Either way the request's errback sees ``ForbiddenAddress`` (the spider counts the page as
    bad, ``forbidden_address``) and ``focused/addresses/refused`` is counted. Place it before
    RobotsTxtMiddleware (100), so a refused host is not even asked for its robots.txt.
    """

    def __init__(self, stats: StatsCollector, allowed: Sequence[Network] = ()):
        self.stats = stats
        self.allowed = list(allowed)
        self.resolver: AddressResolver | None = None
        self.attached = False
        self.logged = False

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> AddressMiddleware:
        return cls(crawler.stats, allowed_networks(crawler))

    def _attach(self) -> None:
        """Give the process's resolver this crawl's networks. Done at the first request: the
        crawler process installs its resolver only when it starts, after building crawlers."""
        self.attached = True
        from twisted.internet import reactor

        resolver = getattr(reactor, "resolver", None)
        if isinstance(resolver, AddressResolver):
            resolver.allow(self.allowed)
            self.resolver = resolver
        else:
            logger.warning(
                "DNS names are not checked for non-public addresses: the DNS resolver is "
                "%(resolver)s, not focused's (TWISTED_DNS_RESOLVER = %(path)s.AddressResolver); "
                "only URLs that spell such an address are refused",
                {"resolver": type(resolver).__name__, "path": __name__},
            )

    def process_request(self, request: Request) -> None:
        if not self.attached:
            self._attach()
        host = urlparse_cached(request).hostname
        if host:
            reason = host_refusal(host, self.allowed) or self._looked_up(host)
            if reason is not None:
                self._refuse(request, reason)

    def process_exception(self, request: Request, exception: Exception) -> None:
        if isinstance(exception, CannotResolveHostError | DNSLookupError):
            reason = self._looked_up(urlparse_cached(request).hostname or "")
            if reason is not None:
                self._refuse(request, reason, exception)

    def _looked_up(self, host: str) -> str | None:
        """Why the resolver refused ``host``'s address, if it did. A retry of such a request
        is refused here at once: Scrapy's DNS cache would give the same address again."""
        return None if self.resolver is None else self.resolver.refused.get(host.rstrip("."))

    def _refuse(self, request: Request, reason: str, cause: Exception | None = None) -> None:
        self.stats.inc_value(STAT)
        if not self.logged:
            self.logged = True
            logger.warning(
                "Refused %(request)s: %(reason)s (allow its network with %(hint)s); further "
                "refusals are counted in %(stat)s and logged at DEBUG",
                {"request": request, "reason": reason, "hint": ALLOW_HINT, "stat": STAT},
            )
        else:
            logger.debug("Refused %(request)s: %(reason)s", {"request": request, "reason": reason})
        raise ForbiddenAddress(f"forbidden address: {reason}") from cause
