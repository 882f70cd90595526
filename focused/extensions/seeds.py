"""SeedFeeder: seeds pushed into a running crawl through a Redis list, as scrapy-redis reads
its ``redis_key``.

``focused seed NAME URL...`` (or ``redis-cli rpush "focused:{NAME}:start_urls" URL``) appends to
the list ``focused:{NAME}:start_urls``. Every FOCUSED_SEEDS_CHECK_S seconds, and once more before
the crawl would close for lack of URLs, one process moves up to ``BATCH`` of them into the
frontier, where they are deduplicated, ordered and fetched politely like any link (score 1,
depth 0). Pushed URLs that are not http(s) are dropped, counted and logged.

Nothing is lost if a process dies while moving them: it reads the head of the list, pushes it
into the frontier and only then trims it, under a lock that expires; a crash before the trim
leaves the URLs for the next process, whose push finds them already seen.
Stats: ``focused/seeds/read``, ``focused/seeds/new``, ``focused/seeds/invalid``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import DontCloseSpider, NotConfigured
from twisted.internet import task

from focused.errors import FocusedError
from focused.schedulers.frontier import Link
from focused.schedulers.scheduler import frontier_for
from focused.store import keys
from focused.topic.files import is_seed_url

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.schedulers.base import Frontier

logger = logging.getLogger(__name__)
BATCH = 1000
LOCK_S = 30.0


class SeedFeeder:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.interval = interval
        self.task: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeedFeeder:
        interval = crawler.settings.getfloat("FOCUSED_SEEDS_CHECK_S")
        if interval <= 0:
            raise NotConfigured
        feeder = cls(crawler, interval)
        crawler.signals.connect(feeder.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(feeder.spider_idle, signal=signals.spider_idle)
        crawler.signals.connect(feeder.spider_closed, signal=signals.spider_closed)
        return feeder

    def spider_opened(self) -> None:
        self.frontier: Frontier = frontier_for(self.crawler)
        self.store = self.frontier.store
        self.key = self.store.key(keys.START_URLS)
        self.task = task.LoopingCall(self.move)
        self.task.start(self.interval, now=True)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def spider_idle(self) -> None:
        """The frontier ran dry: seeds pushed meanwhile keep the crawl going."""
        if self.move():
            raise DontCloseSpider

    def move(self) -> int:
        """Move pushed seeds into the frontier; returns how many were new to the crawl."""
        store, client = self.store, self.store.client
        try:
            if not store.retrying(lambda: client.llen(self.key)):
                return 0
            with store.held_lock(keys.START_URLS_LOCK, LOCK_S) as held:
                if not held:
                    return 0  # another process is moving them
                urls = store.retrying(lambda: client.lrange(self.key, 0, BATCH - 1))
                good = [url.strip() for url in urls if is_seed_url(url.strip())]
                new = self.frontier.push_many([Link(url, 1.0, 0) for url in good])
                store.retrying(lambda: client.ltrim(self.key, len(urls), -1))
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return 0
        self.stats.inc_value("focused/seeds/read", len(urls))
        self.stats.inc_value("focused/seeds/new", new)
        if len(good) < len(urls):
            self.stats.inc_value("focused/seeds/invalid", len(urls) - len(good))
            logger.warning(
                "Dropped %(n)d pushed seeds that are not http(s) URLs",
                {"n": len(urls) - len(good)},
            )
        logger.info(
            "Moved %(read)d pushed seeds into the frontier, %(new)d new to the crawl",
            {"read": len(urls), "new": new},
        )
        return new
