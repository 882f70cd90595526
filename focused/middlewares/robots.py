"""Scrapy's robots.txt middleware, with one warning line for a robots.txt it cannot fetch, and
robots.txt counted against its host's politeness delay.

On the open web many hosts' robots.txt fail: the name no longer resolves, the server refuses
or times out. Scrapy then allows the whole host (as we do) but logs each failure as an error
with a full traceback. Here it is one warning that names the URL and the reason
(:func:`focused.failures.failure_reason`, the names of bad pages).

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

from scrapy.downloadermiddlewares import robotstxt
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Request
from scrapy.http.request import NO_CALLBACK
from scrapy.utils.asyncio import sleep
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.httpobj import urlparse_cached
from twisted.internet.defer import Deferred
from twisted.python.failure import Failure

from focused.errors import FocusedError
from focused.failures import failure_reason
from focused.schedulers.scheduler import frontier_for

if TYPE_CHECKING:
    from scrapy.robotstxt import RobotParser

logger = logging.getLogger(__name__)


class RobotsTxtMiddleware(robotstxt.RobotsTxtMiddleware):
    """Scrapy's, but a robots.txt that cannot be downloaded is one warning, not a traceback.

    Registered by the add-on in place of Scrapy's, at its priority (100). As in Scrapy, one
    robots.txt is fetched per host, shared by that host's requests, and a failed one allows
    every URL of the host and is counted under ``robotstxt/exception_count/<type>``.
    """

    async def robot_parser(self, request: Request) -> RobotParser | None:
        url = urlparse_cached(request)
        netloc = url.netloc
        if netloc not in self._parsers:
            self._parsers[netloc] = Deferred()
            robots = Request(
                f"{url.scheme}://{netloc}/robots.txt",
                priority=self.DOWNLOAD_PRIORITY,
                meta={"dont_obey_robotstxt": True},
                callback=NO_CALLBACK,
            )
            try:
                response = await self.crawler.engine.download_async(robots)
                await self._parse_robots(response, netloc, request)
            except Exception as exc:
                if not isinstance(exc, IgnoreRequest):
                    self._log_failure(robots, exc)
                self._robots_error(exc, netloc)
            self._stats.inc_value("robotstxt/request_count")
            await self._wait_out_delay(robots)
        parser = self._parsers[netloc]
        if isinstance(parser, Deferred):
            return await maybe_deferred_to_future(parser)
        return parser

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
