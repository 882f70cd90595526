"""The registered domain of a host (its eTLD+1), the unit of the frontier's domain budgets.

``www.bbc.co.uk`` and ``news.bbc.co.uk`` are one site owner's, ``a.blogspot.com`` and
``b.blogspot.com`` two people's: the Public Suffix List says where a name stops being a
suffix anyone may register under. It comes from ``tldextract``'s bundled snapshot of the list,
private section included (blogspot.com, github.io), and is never fetched: a crawl reaches no
address for it. A name whose last labels are in no suffix of the list (``.test``, an
intranet's names) has its last two labels as its domain. An IP address has no owner's name, and
whoever holds one address of a network most often holds its neighbours: an IPv4 address's
domain is its /24 (``198.51.100.0/24``), an IPv6 address's its /64 (``2001:db8:1:2::/64``, the
block one site or customer is given), so that a link farm on IP-literal hosts is one domain to
the budgets.

``private_suffixes`` adds suffixes under which unrelated sites sit, like the list's private
section: an intranet's ``sites.corp``, or the ``web.test`` of the project's synthetic webs.

:meth:`RegisteredDomains.platform` names the suffix of the list's private section a host sits
under (``netlify.app``, ``github.io``, ``pages.dev``): anyone may make names there for free,
so a link farm can make a registered domain per host, all on one platform, and the frontier
also counts a platform's hosts together. The ``private_suffixes`` given are the user's own
(an intranet, an offline web), not platforms.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from functools import lru_cache

import tldextract

CACHED = 65_536  # hosts whose domain a process remembers
# The network an IP address is counted in, as a registered domain, by IP version.
IP_DOMAIN_PREFIX = {4: 24, 6: 64}


class RegisteredDomains:
    """Host or origin (``http://host:port``) -> its registered domain, cached per process."""

    def __init__(self, private_suffixes: Iterable[str] = ()):
        self._extract = tldextract.TLDExtract(
            suffix_list_urls=(),
            cache_dir=None,
            include_psl_private_domains=True,
            extra_suffixes=tuple(s.strip(".").lower() for s in private_suffixes if s.strip(".")),
        )
        self.of = lru_cache(maxsize=CACHED)(self._domain)
        self.platform = lru_cache(maxsize=CACHED)(self._platform)

    def __call__(self, host: str) -> str:
        return self.of(host)

    def _platform(self, host: str) -> str | None:
        """The suffix of the list's private section ``host`` is a site under, or None."""
        parts = self._extract(host)
        return parts.suffix if parts.is_private and parts.domain else None

    def _domain(self, host: str) -> str:
        parts = self._extract(host)
        address = parts.ipv4 or parts.ipv6
        if address:
            ip = ipaddress.ip_address(address)
            if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
                ip = ip.ipv4_mapped
            return str(ipaddress.ip_network(f"{ip}/{IP_DOMAIN_PREFIX[ip.version]}", strict=False))
        if parts.suffix and parts.domain:
            return f"{parts.domain}.{parts.suffix}"
        labels = [label for label in (parts.subdomain, parts.domain, parts.suffix) if label]
        return ".".join(".".join(labels).split(".")[-2:])
