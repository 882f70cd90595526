"""Slow hosts: a server that answers, then sends its body a byte a second, must not hold the
crawl's download slots.

Scrapy's ``DOWNLOAD_TIMEOUT`` ends such a download only after its whole time (30 s), and its
RetryMiddleware tries it twice more: 40 such hosts held 16 slots for 3 x 30 s each and let a
crawl fetch 100 of 600 good pages in 150 s. Two answers, each a ``FOCUSED_*`` setting:

- **A minimum transfer rate.** A body that has come in slower than ``FOCUSED_MIN_DOWNLOAD_RATE``
  bytes a second on average, once ``FOCUSED_MIN_RATE_AFTER_S`` seconds have passed since its
  headers, is stopped (:class:`TooSlow`, a bad page ``too_slow``; not retried): it holds a slot
  for those seconds, not for the timeout. The check runs as bytes arrive; a server that sends
  nothing at all is ended by ``DOWNLOAD_TIMEOUT``.
- **A host backed off.** After a timeout or a download stopped as too slow, the host is left
  alone ``FOCUSED_SLOW_HOST_BACKOFF_S`` seconds by every process of the crawl, as after a
  ``Retry-After`` (the frontier's ``back_off``): its other URLs and the retry wait, and the
  slots go to other hosts meanwhile.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary

from scrapy import signals
from scrapy.exceptions import NotConfigured

from focused.errors import FocusedError
from focused.middlewares.failures import TIMEOUTS, TooSlow
from focused.store.crawler import frontier_for

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
STOPPED = "focused/slow/stopped"
BACKED_OFF = "focused/slow/backed_off"


class SlowDownloadMiddleware:
    """Downloader middleware: stops too slow bodies, and backs off the host of a timeout or a
    too slow body in the frontier (see the module docstring)."""

    def __init__(
        self, crawler: Crawler, min_rate: float, min_rate_after_s: float, backoff_s: float
    ):
        if min_rate <= 0 and backoff_s <= 0:
            raise NotConfigured("FOCUSED_MIN_DOWNLOAD_RATE and FOCUSED_SLOW_HOST_BACKOFF_S are 0")
        self.crawler = crawler
        self.min_rate = min_rate
        self.min_rate_after_s = min_rate_after_s
        self.backoff_s = backoff_s
        # Request -> [monotonic time its headers came, body bytes received since].
        self.bodies: WeakKeyDictionary[Request, list[float]] = WeakKeyDictionary()
        self.logged = False
        if min_rate > 0:
            crawler.signals.connect(self.headers_received, signals.headers_received)
            crawler.signals.connect(self.bytes_received, signals.bytes_received)

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SlowDownloadMiddleware:
        s = crawler.settings
        return cls(
            crawler,
            s.getfloat("FOCUSED_MIN_DOWNLOAD_RATE"),
            s.getfloat("FOCUSED_MIN_RATE_AFTER_S"),
            s.getfloat("FOCUSED_SLOW_HOST_BACKOFF_S"),
        )

    def headers_received(self, request: Request, **_: Any) -> None:
        self.bodies[request] = [time.monotonic(), 0.0]

    def bytes_received(self, data: bytes, request: Request, **_: Any) -> None:
        body = self.bodies.get(request)
        if body is None:  # a handler that sends no headers_received: never stopped
            return
        body[1] += len(data)
        elapsed = time.monotonic() - body[0]
        if elapsed >= self.min_rate_after_s and body[1] < self.min_rate * elapsed:
            del self.bodies[request]
            self.crawler.stats.inc_value(STOPPED)
            if not self.logged:
                self.logged = True
                logger.info(
                    "Stopped %(request)s: %(bytes).0f bytes in %(s).1f s, under "
                    "FOCUSED_MIN_DOWNLOAD_RATE (%(rate).0f bytes/s); further stops are counted "
                    "in %(stat)s",
                    {
                        "request": request,
                        "bytes": body[1],
                        "s": elapsed,
                        "rate": self.min_rate,
                        "stat": STOPPED,
                    },
                )
            raise TooSlow

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.bodies.pop(request, None)
        if self.backoff_s <= 0 or not isinstance(exception, (TooSlow, *TIMEOUTS)):
            return
        self.crawler.stats.inc_value(BACKED_OFF)
        try:
            frontier_for(self.crawler).back_off(request.url, self.backoff_s)
        except FocusedError:  # a lost Redis is reported by the frontier, which stops the crawl
            return
        logger.debug(
            "%(request)s was too slow (%(error)s): its host left alone for %(s).0f s",
            {"request": request, "error": type(exception).__name__, "s": self.backoff_s},
        )

    def process_response(self, request: Request, response: Any) -> Any:
        self.bodies.pop(request, None)
        return response
