"""Retry-After: a server that answers 429 or 503 with ``Retry-After`` is left alone that long
by every process of the crawl, not only by the request Scrapy retries.

The wait is held in the frontier (``back_off``: the host's next allowed time in Redis), so it
also holds after a restart; Scrapy's RetryMiddleware then puts the URL back one try later, and
it waits behind the host's new time like every other URL of that host. A wait longer than
FOCUSED_RETRY_AFTER_MAX seconds is cut to it: a server cannot park a host for good.
"""

from __future__ import annotations

import email.utils
import logging
import time
from typing import TYPE_CHECKING

from focused.errors import FocusedError
from focused.store.crawler import frontier_for

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)
STATUSES = frozenset((429, 503))


def retry_after_s(value: bytes | None, now: float) -> float | None:
    """Seconds a Retry-After value asks for (delta-seconds or an HTTP date); None if unreadable."""
    if not value:
        return None
    text = value.decode("latin-1").strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now) if when.tzinfo else None


class RetryAfterMiddleware:
    """Downloader middleware: a 429/503 with Retry-After backs its host off in the frontier."""

    def __init__(self, crawler: Crawler, cap_s: float):
        self.crawler = crawler
        self.cap_s = cap_s

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RetryAfterMiddleware:
        return cls(crawler, crawler.settings.getfloat("FOCUSED_RETRY_AFTER_MAX"))

    def process_response(self, request: Request, response: Response) -> Response:
        if response.status not in STATUSES:
            return response
        asked = retry_after_s(response.headers.get("Retry-After"), time.time())
        if asked is None:
            return response
        wait = min(asked, self.cap_s)
        stats = self.crawler.stats
        stats.inc_value("focused/retry_after/count")
        stats.max_value("focused/retry_after/max_s", round(wait, 3))
        try:
            frontier_for(self.crawler).back_off(request.url, wait)
        except FocusedError:  # a lost Redis is reported by the frontier, which stops the crawl
            return response
        logger.info(
            "%(host)s answered %(status)d with Retry-After %(asked).0f s: left alone for "
            "%(wait).0f s",
            {"host": response.url, "status": response.status, "asked": asked, "wait": wait},
        )
        return response
