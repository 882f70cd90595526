"""HarvestMonitor: the harvest rate of seed 000 §4 in Scrapy's stats and log.

The harvest rate is the moving average of R over the last 100 and 1,000 classified pages
(``focused/harvest/100``, ``focused/harvest/1000``), next to the share of relevant pages
among them (``focused/harvest/relevant_100``, ``..._1000``). Every LOGSTATS_INTERVAL seconds
one log line gives pages, relevant pages, the harvest rates and the frontier's queue depth.
These are this process's figures; ``focused status`` shows the whole crawl's from Redis.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused.errors import FocusedError
from focused.schedulers.scheduler import frontier_for

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)
WINDOWS = (100, 1000)


class HarvestMonitor:
    def __init__(self, crawler: Crawler, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.interval = interval
        self.windows = {w: deque(maxlen=w) for w in WINDOWS}
        self.sums = {w: [0.0, 0] for w in WINDOWS}  # sum of R, relevant pages in the window
        self.task: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> HarvestMonitor:
        interval = crawler.settings.getfloat("LOGSTATS_INTERVAL")
        if not interval:
            raise NotConfigured
        monitor = cls(crawler, interval)
        crawler.signals.connect(monitor.item_scraped, signal=signals.item_scraped)
        crawler.signals.connect(monitor.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(monitor.spider_closed, signal=signals.spider_closed)
        return monitor

    def item_scraped(self, item: Any) -> None:
        if item.get("relevance") is None:
            return
        page = (float(item["relevance"]), int(bool(item["relevant"])))
        for window, last in self.windows.items():
            sums = self.sums[window]
            if len(last) == window:
                sums[0] -= last[0][0]
                sums[1] -= last[0][1]
            last.append(page)
            sums[0] += page[0]
            sums[1] += page[1]
            self.stats.set_value(f"focused/harvest/{window}", round(sums[0] / len(last), 4))
            self.stats.set_value(
                f"focused/harvest/relevant_{window}", round(sums[1] / len(last), 4)
            )

    def spider_opened(self) -> None:
        self.task = task.LoopingCall(self.log)
        self.task.start(self.interval, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.log()

    def log(self) -> None:
        try:
            counts = frontier_for(self.crawler).counts()
        except FocusedError:  # Redis is lost (reported by the frontier): no frontier figures
            counts = {"queued": -1, "in_flight": -1}
        logger.info(
            "Harvest: %(fetched)d pages, %(relevant)d relevant, harvest %(h100)s (last 100) "
            "%(h1000)s (last 1000); frontier %(queued)d queued, %(flight)d in flight",
            {
                "fetched": self.stats.get_value("focused/pages/fetched", 0),
                "relevant": self.stats.get_value("focused/pages/relevant", 0),
                "h100": self.stats.get_value("focused/harvest/100", "-"),
                "h1000": self.stats.get_value("focused/harvest/1000", "-"),
                "queued": counts.get("queued", 0),
                "flight": counts["in_flight"],
            },
        )
