"""Scrapy's robots.txt middleware, with one warning line for a robots.txt it cannot fetch, and
robots.txt counted against its host's politeness delay.

On the open web many hosts' robots.txt fail: the name no longer resolves, the server refuses
or times out. Scrapy then allows the whole host (as we do) but logs each failure as an error
with a full traceback. Here it is one warning that names the URL and the reason
(:func:`focused.middlewares.failures.failure_reason`, the names of bad pages).

robots.txt is fetched once per host for the crawl, not once per process: each one fetched is
kept in the crawl's Redis (``robots:<origin>``, its first ROBOTS_MAX_BYTES, or the "allow all"
of one that could not be fetched) for ROBOTS_KEEP_S, and every process reads it there before
fetching it (``focused/robotstxt/shared``). Past ROBOTS_MAX_BYTES a robots.txt is cut, as
Google cuts it past 500 KiB, in the process that fetched it too, so that all read one policy.

robots.txt is fetched outside the frontier, right before the first page of its host, which
then came 2-45 ms after it. It is a fetch from the host like any other: the page that asked
for it waits FOCUSED_HOST_DELAY after it, and so does every process (the frontier's
``back_off``) when a host may have more than one fetch at a time; with one
(FOCUSED_HOST_CONCURRENCY = 1, the default) that page's lease already keeps the others away.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.downloadermiddlewares import robotstxt
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import sleep
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from scrapy.utils.misc import build_from_crawler
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from focused.errors import FocusedError
from focused.middlewares.failures import failure_reason
from focused.store.crawler import frontier_for, store_for
from focused.store.robots import KeptRobots

if TYPE_CHECKING:
    from scrapy.http import Response
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)

ROBOTS_MAX_BYTES = 512 * 1024
ROBOTS_KEEP_S = 24 * 3600
FETCHED, FAILED = b"1", b"0"  # the head of a kept robots.txt: its body follows, or nothing


class RobotsTxtMiddleware(robotstxt.RobotsTxtMiddleware):
    """Scrapy's, but a robots.txt that cannot be downloaded is one warning, not a traceback.

    Registered by the add-on in place of Scrapy's, at its priority (100). One robots.txt is
    fetched per host for the crawl (module doc), shared by that host's requests in every
    process, and a failed one allows every URL of the host and is counted under
    ``robotstxt/exception_count/<type>``.
    """

    async def robot_parser(self, request: Request) -> RobotParser | None:
        url = urlparse_cached(request)
        netloc = url.netloc
        if netloc not in self._parsers:
            self._parsers[netloc] = Deferred()
            origin = f"{url.scheme}://{netloc}"
            kept = self._kept(origin)
            if kept is not None:
                self._stats.inc_value("focused/robotstxt/shared")
                await self._use_kept(kept, netloc, request)
            else:
                await self._fetch(origin, netloc, request)
        parser = self._parsers[netloc]
        if isinstance(parser, Deferred):
            return await maybe_deferred_to_future(parser)
        return parser

    async def _fetch(self, origin: str, netloc: str, request: Request) -> None:
        """Fetch a host's robots.txt, parse it and keep it for the crawl's other processes."""
        robots = Request(
            f"{origin}/robots.txt",
            priority=self.DOWNLOAD_PRIORITY,
            meta={"dont_obey_robotstxt": True},
            callback=NO_CALLBACK,
        )
        try:
            response: Response = await self.crawler.engine.download_async(robots)
            if len(response.body) > ROBOTS_MAX_BYTES:
                response = response.replace(body=response.body[:ROBOTS_MAX_BYTES])
            await self._parse_robots(response, netloc, request)
            self._keep(origin, FETCHED + response.body)
        except Exception as exc:
            if not isinstance(exc, IgnoreRequest):
                self._log_failure(robots, exc)
            self._robots_error(exc, netloc)
            self._keep(origin, FAILED)
        self._stats.inc_value("robotstxt/request_count")
        await self._wait_out_delay(robots)

    def _kept(self, origin: str) -> bytes | None:
        """The robots.txt another process kept for this crawl, if any (a lost Redis: none; the
        frontier reports it)."""
        with contextlib.suppress(FocusedError):
            return KeptRobots(store_for(self.crawler)).get(origin)
        return None

    def _keep(self, origin: str, kept: bytes) -> None:
        with contextlib.suppress(FocusedError):
            KeptRobots(store_for(self.crawler)).keep(origin, kept, ROBOTS_KEEP_S)

    async def _use_kept(self, kept: bytes, netloc: str, request: Request) -> None:
        """Parse a robots.txt kept in Redis as Scrapy parses a fetched one (no fetch, no wait)."""
        deferred = self._parsers[netloc]
        assert isinstance(deferred, Deferred)
        parser = None
        if kept.startswith(FETCHED):
            parser = build_from_crawler(self._parserimpl, self.crawler, kept[len(FETCHED) :])
            await self.crawler.signals.send_catch_log_async(
                signal=signals.robots_parsed, robotparser=parser, request=request
            )
        self._parsers[netloc] = parser
        deferred.callback(parser)

    async def _wait_out_delay(self, robots: Request) -> None:
        delay = self.crawler.settings.getfloat("FOCUSED_HOST_DELAY")
        if delay <= 0:
            return
        if self.crawler.settings.getint("FOCUSED_HOST_CONCURRENCY") > 1:
            with contextlib.suppress(FocusedError):  # a lost Redis is reported by the frontier
                frontier_for(self.crawler).back_off(robots.url, delay)
        await sleep(delay)

    def _log_failure(self, robots: Request, exc: Exception) -> None:
        logger.warning(
            "Could not fetch %(url)s (%(reason)s: %(error)s): its host is crawled as if it "
            "allowed everything",
            {"url": robots.url, "reason": failure_reason(Failure(exc)), "error": exc},
        )
