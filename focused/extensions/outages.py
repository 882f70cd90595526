"""RedisOutages: the Redis outages a crawl process sees, in its stats.

Every Redis client of the project retries through :class:`focused.store.connection.OutageRetry`,
which reports each attempt to the process's :data:`focused.store.connection.OUTAGES`; this extension
listens to it for the crawl. Stats: ``focused/redis/outages`` (outages begun) and
``focused/redis/outage_s`` (their seconds, added as each ends; at the close, the seconds of one
still going on, as when the crawl stops for it with reason ``focused_redis_lost``). Short
outages that redis-py's own retries ride out are counted too; the log has a WARNING when one
starts and an INFO with its length when it ends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scrapy import signals

from focused.store.connection import OUTAGES, Outages

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector


class RedisOutages:
    """Counts :data:`~focused.store.connection.OUTAGES`'s outages in the crawler's stats while its
    spider is open."""

    def __init__(self, stats: StatsCollector, outages: Outages = OUTAGES):
        self.stats = stats
        self.outages = outages

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisOutages:
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        return extension

    def spider_opened(self) -> None:
        self.outages.listeners.append(self)

    def spider_closed(self) -> None:
        self.outages.listeners.remove(self)
        ongoing = self.outages.ongoing()
        if ongoing is not None:
            self.stats.inc_value("focused/redis/outage_s", round(ongoing, 3))

    def outage_started(self) -> None:
        self.stats.inc_value("focused/redis/outages")

    def outage_ended(self, seconds: float) -> None:
        self.stats.inc_value("focused/redis/outage_s", round(seconds, 3))
