"""MemoryGiveBack: after a big page, the process gives the memory it took back to the system.

Reading a page of megabytes (a hundred thousand links, say) builds trees and lists of hundreds
of MB. Python frees them once the page is done, but glibc's allocator keeps the freed pages in
its heaps, so a process would stay as big as the biggest page it ever read. A second after the
item of a page of at least BIG_PAGE_BYTES has left the pipelines (its response and links gone
by then), the extension collects garbage and has glibc return its free pages (``malloc_trim``).
Counted in ``focused/memory/given_back``. Not enabled where the C library has no ``malloc_trim``.
"""

from __future__ import annotations

import ctypes
import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from scrapy.utils.asyncio import call_later

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response
    from scrapy.statscollectors import StatsCollector
    from scrapy.utils.asyncio import CallLaterResult

BIG_PAGE_BYTES = 1 << 20
DELAY_S = 1.0


def malloc_trim() -> Callable[[], Any] | None:
    """glibc's ``malloc_trim(0)``, or None for a C library without it."""
    trim = getattr(ctypes.CDLL(None), "malloc_trim", None)
    return None if trim is None else lambda: trim(0)


class MemoryGiveBack:
    """Gives memory back after a big page (module doc)."""

    def __init__(self, stats: StatsCollector, trim: Callable[[], Any]):
        self.stats = stats
        self.trim = trim
        self.pending: CallLaterResult | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> MemoryGiveBack:
        trim = malloc_trim()
        if trim is None:
            raise NotConfigured
        extension = cls(crawler.stats, trim)
        for signal in (signals.item_scraped, signals.item_dropped, signals.item_error):
            crawler.signals.connect(extension.item_done, signal=signal)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def item_done(self, response: Response | None = None) -> None:
        body = getattr(response, "body", b"")
        if len(body) >= BIG_PAGE_BYTES and self.pending is None:
            self.pending = call_later(DELAY_S, self.give_back)

    def give_back(self) -> None:
        self.pending = None
        gc.collect()
        self.trim()
        self.stats.inc_value("focused/memory/given_back")

    def spider_closed(self) -> None:
        if self.pending is not None:
            self.pending.cancel()
