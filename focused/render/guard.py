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
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError

from focused.errors import exit_on_user_error
from focused.middlewares.addresses import (
    ALLOW_HINT,
    AddressResolver,
    ForbiddenLookup,
    allowed_networks,
    host_refusal,
    proxy_hosts,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from playwright.async_api import Request as BrowserRequest
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.middlewares.addresses import Network

logger = logging.getLogger(__name__)

SCHEMES = frozenset({"http", "https"})
BLOCKED_TYPES = frozenset({"image", "media", "font"})
REFUSED = "focused/render/subrequests/refused"
BLOCKED = "focused/render/subrequests/blocked"


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
        reason = await self.refusal(request.url)
        if reason is None:
            return False
        self.stats.inc_value(REFUSED)
        if not self.logged:
            self.logged = True
            logger.warning(
                "Refused the browser's request for %(url)s: %(reason)s (allow its network with "
                "%(hint)s); further refusals are counted in %(stat)s and logged at DEBUG",
                {"url": request.url, "reason": reason, "hint": ALLOW_HINT, "stat": REFUSED},
            )
        else:
            logger.debug(
                "Refused the browser's request for %(url)s: %(reason)s",
                {"url": request.url, "reason": reason},
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
