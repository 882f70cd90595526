"""Slow hosts: a server that answers, then sends its body a byte a second, must not hold the
crawl's download slots.

Scrapy's ``DOWNLOAD_TIMEOUT`` ends such a download only after its whole time (30 s), and its
RetryMiddleware tries it twice more: 40 such hosts held 16 slots for 3 x 30 s each and let a
crawl fetch 100 of 600 good pages in 150 s. A rate floor alone is not enough: 40 hosts sending
1,100 bytes a second, just above it, starved a crawl the same way. Three answers, each a
``FOCUSED_*`` setting; each check runs as bytes arrive, and a server that sends nothing at all
is ended by ``DOWNLOAD_TIMEOUT``:

- **A minimum transfer rate.** A body that has come in slower than ``FOCUSED_MIN_DOWNLOAD_RATE``
  bytes a second on average, once ``FOCUSED_MIN_RATE_AFTER_S`` seconds have passed since its
  headers, is stopped (:class:`TooSlow`, a bad page ``too_slow``; not retried): it holds a slot
  for those seconds, not for the timeout. So is a body that, at the rate it has come in so far,
  cannot have all the bytes its Content-Length declares before ``DOWNLOAD_TIMEOUT``: it would
  time out, on every try.
- **A cap on the slots slow downloads hold.** A download still coming in
  ``FOCUSED_SLOW_DOWNLOAD_S`` seconds after its headers is slow, whatever its rate; slow
  downloads may hold at most ``FOCUSED_SLOW_HOST_SLOTS`` of ``CONCURRENT_REQUESTS`` together
  (a share), and one that turns slow past that is stopped (:class:`SlowSlotsTaken`) and tried
  again later, as after a timeout: the other slots stay with the hosts that answer in time,
  and a page that was only slow is not lost. A floor on the rate could not do it: 40 hosts
  that the floor let through held every slot for a page's first seconds, all the more as
  their links read as relevant and were fetched first.
- **A host backed off.** After a timeout or a download stopped as too slow, the host is left
  alone ``FOCUSED_SLOW_HOST_BACKOFF_S`` seconds by every process of the crawl, as after a
  ``Retry-After`` (the frontier's ``back_off``): its other URLs and the retry wait, and the
  slots go to other hosts meanwhile.
"""

from __future__ import annotations

import logging
import math
import time
from typing import TYPE_CHECKING, Any
from weakref import WeakKeyDictionary, WeakSet

from scrapy import signals
from scrapy.exceptions import NotConfigured

from focused.errors import FocusedError
from focused.middlewares.failures import TIMEOUTS, SlowSlotsTaken, TooSlow
from focused.store.crawler import frontier_for

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
STOPPED = "focused/slow/stopped"
CAPPED = "focused/slow/capped"  # of the stopped: slow while slow downloads held their share
BACKED_OFF = "focused/slow/backed_off"


class SlowDownloadMiddleware:
    """Downloader middleware: stops too slow bodies, and backs off the host of a timeout or a
    too slow body in the frontier (see the module docstring)."""

    def __init__(
        self,
        crawler: Crawler,
        min_rate: float,
        min_rate_after_s: float,
        backoff_s: float,
        slow_slots: int = 0,
        slow_after_s: float = 0.0,
    ):
        if min_rate <= 0 and backoff_s <= 0 and slow_slots <= 0:
            raise NotConfigured(
                "FOCUSED_MIN_DOWNLOAD_RATE, FOCUSED_SLOW_HOST_BACKOFF_S and"
                " FOCUSED_SLOW_HOST_SLOTS are 0"
            )
        self.crawler = crawler
        self.min_rate = min_rate
        self.min_rate_after_s = min_rate_after_s
        self.backoff_s = backoff_s
        self.slow_slots = slow_slots  # 0: no cap
        self.slow_after_s = slow_after_s
        self.timeout = crawler.settings.getfloat("DOWNLOAD_TIMEOUT")
        # Request -> [monotonic time its headers came, body bytes received since, bytes its
        # Content-Length declares (-1: none)].
        self.bodies: WeakKeyDictionary[Request, list[float]] = WeakKeyDictionary()
        self.slow: WeakSet[Request] = WeakSet()  # the slow downloads in flight
        self.logged = False
        if min_rate > 0 or slow_slots > 0:
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
            math.ceil(s.getfloat("FOCUSED_SLOW_HOST_SLOTS") * s.getint("CONCURRENT_REQUESTS")),
            s.getfloat("FOCUSED_SLOW_DOWNLOAD_S"),
        )

    def headers_received(self, request: Request, body_length: object = None, **_: Any) -> None:
        # Twisted's UNKNOWN_LENGTH, not a number, for a body of no Content-Length.
        declared = float(body_length) if isinstance(body_length, int) else -1.0
        self.bodies[request] = [time.monotonic(), 0.0, declared]

    def bytes_received(self, data: bytes, request: Request, **_: Any) -> None:
        body = self.bodies.get(request)
        if body is None:  # a handler that sends no headers_received: never stopped
            return
        body[1] += len(data)
        elapsed = time.monotonic() - body[0]
        stop = self._too_slow(request, body, elapsed)
        if stop is None:
            return
        why, exception = stop
        del self.bodies[request]
        self.crawler.stats.inc_value(STOPPED)
        if not self.logged:
            self.logged = True
            logger.info(
                "Stopped %(request)s: %(bytes).0f bytes in %(s).1f s, %(why)s; further stops"
                " are counted in %(stat)s",
                {"request": request, "bytes": body[1], "s": elapsed, "why": why, "stat": STOPPED},
            )
        raise exception

    def _too_slow(
        self, request: Request, body: list[float], elapsed: float
    ) -> tuple[str, TooSlow] | None:
        """Why a body ``elapsed`` seconds after its headers is stopped and what stops it, or
        None. One that turns slow (FOCUSED_SLOW_DOWNLOAD_S) and is let go on is in
        :attr:`slow` from then on."""
        received, declared = body[1], body[2]
        if self.min_rate > 0 and elapsed >= self.min_rate_after_s:
            if received < self.min_rate * elapsed:
                return f"under FOCUSED_MIN_DOWNLOAD_RATE ({self.min_rate:.0f} bytes/s)", TooSlow()
            timeout = float(request.meta.get("download_timeout", self.timeout))
            if declared > received * timeout / elapsed:
                why = f"too slow to have its {declared:.0f} bytes within DOWNLOAD_TIMEOUT"
                return why, TooSlow()
        if self.slow_slots <= 0 or elapsed < self.slow_after_s or request in self.slow:
            return None
        if len(self.slow) >= self.slow_slots:
            self.crawler.stats.inc_value(CAPPED)
            why = f"slow while {self.slow_slots} slow downloads held FOCUSED_SLOW_HOST_SLOTS"
            return why, SlowSlotsTaken()
        self.slow.add(request)
        return None

    def process_exception(self, request: Request, exception: Exception) -> None:
        self.bodies.pop(request, None)
        self.slow.discard(request)
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
        self.slow.discard(request)
        return response
