"""RedisStatsCollector: Scrapy's stats of every process of a crawl, added up in Redis.

A ``STATS_CLASS`` (the add-on sets it) that keeps Scrapy's in-memory stats, so each process
still dumps its own at the end, and also records what changed: counter increments, set
values, maxima and minima. Every FOCUSED_STATS_FLUSH_S seconds (0: never on a timer) and
when the spider closes it writes them to the crawl's ``scrapy`` hash in one atomic script
call: counters are summed across processes, set values are the last writer's, maxima and
minima stay the largest and smallest any process saw. ``focused status``, the dashboard and
the exporter read that hash.

scrapy-redis's ``RedisStatsCollector`` makes a round trip (or three: HEXISTS, HSET, HINCRBY,
racing other processes) per ``inc_value``; this one makes one every few seconds. Times
(``start_time``, ``finish_time``) are stored as unix timestamps. If Redis is lost, the
crawl's store reports it and stops the crawl; what was not written is kept for the next flush.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from scrapy.statscollectors import MemoryStatsCollector
from twisted.internet import task

from focused.errors import FocusedError
from focused.store.crawler import store_for
from focused.store.scrapystats import CrawlScrapyStats

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


def _redis_value(value: Any) -> str | int | float:
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, bool):
        return int(value)
    return value if isinstance(value, int | float | str) else str(value)


class RedisStatsCollector(MemoryStatsCollector):
    """Scrapy's memory stats, flushed in batches to the crawl's ``scrapy`` hash (module doc).

    Built by Scrapy as ``STATS_CLASS(crawler)``; it reaches Redis through the crawl's store
    (:func:`~focused.store.crawler.store_for`) once the spider opens.
    """

    def __init__(self, crawler: Crawler):
        super().__init__(crawler)
        self.interval = crawler.settings.getfloat("FOCUSED_STATS_FLUSH_S")
        self.sets: dict[str, Any] = {}
        self.incs: dict[str, float] = {}
        self.maxes: dict[str, Any] = {}
        self.mins: dict[str, Any] = {}
        self.shared: CrawlScrapyStats | None = None
        self.task: task.LoopingCall | None = None

    def set_value(self, key: str, value: Any, spider: Any = None) -> None:
        super().set_value(key, value)
        self.sets[key] = value
        self.incs.pop(key, None)

    def set_stats(self, stats: dict[str, Any], spider: Any = None) -> None:
        super().set_stats(stats)
        self.sets.update(stats)

    def inc_value(self, key: str, count: int = 1, start: int = 0, spider: Any = None) -> None:
        delta = count if key in self._stats else start + count
        super().inc_value(key, count, start)
        self.incs[key] = self.incs.get(key, 0) + delta

    def max_value(self, key: str, value: Any, spider: Any = None) -> None:
        super().max_value(key, value)
        self.maxes[key] = max(self.maxes.get(key, value), value)

    def min_value(self, key: str, value: Any, spider: Any = None) -> None:
        super().min_value(key, value)
        self.mins[key] = min(self.mins.get(key, value), value)

    def open_spider(self, spider: Any = None) -> None:
        super().open_spider()
        self.shared = CrawlScrapyStats(store_for(self._crawler))
        if self.interval > 0:
            self.task = task.LoopingCall(self.flush)
            self.task.start(self.interval, now=False)

    def close_spider(self, spider: Any = None, reason: str | None = None) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()
        self.flush()
        super().close_spider(reason=reason)

    def flush(self) -> None:
        """Write what changed since the last flush to Redis, in one script call."""
        if self.shared is None or not (self.sets or self.incs or self.maxes or self.mins):
            return
        kinds = (self.sets, self.incs, self.maxes, self.mins)
        try:
            self.shared.add(*({name: _redis_value(v) for name, v in c.items()} for c in kinds))
        except FocusedError:  # reported by the store, which stops the crawl; kept for later
            return
        for changes in kinds:
            changes.clear()
