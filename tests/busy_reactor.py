"""A Scrapy extension for tests that keeps a crawl's reactor busy, as a page too slow to read
would: at its BUSY_REACTOR_AT-th response (3) it holds the reactor BUSY_REACTOR_S seconds, once,
and logs it. Crawl processes find it with the repository on their PYTHONPATH."""

from __future__ import annotations

import logging
import time

from scrapy import signals
from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class BusyReactor:
    def __init__(self, seconds: float, at: int):
        self.seconds, self.at, self.responses = seconds, at, 0

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> BusyReactor:
        s = crawler.settings
        busy = cls(s.getfloat("BUSY_REACTOR_S"), s.getint("BUSY_REACTOR_AT", 3))
        crawler.signals.connect(busy.response_received, signal=signals.response_received)
        return busy

    def response_received(self) -> None:
        self.responses += 1
        if self.responses == self.at:
            logger.info("Holding the reactor for %.1f s", self.seconds)
            time.sleep(self.seconds)
            logger.info("Reactor released")
