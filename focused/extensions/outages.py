"""RedisOutages: the Redis outages a crawl process sees, in its stats.

Every Redis client of the project retries through :class:`focused.store.outages.OutageRetry`,
which reports each attempt to the process's :data:`focused.store.outages.OUTAGES`; this extension
listens to it for the crawl. Stats: ``focused/redis/outages`` (outages begun) and
``focused/redis/outage_s`` (their seconds, added as each ends; at the close, the seconds of one
still going on, as when the crawl stops for it with reason ``focused_redis_lost``). Short
outages that redis-py's own retries ride out are counted too; the log has a WARNING when one
starts and an INFO with its length when it ends.

It also makes Ctrl-C (SIGINT) and SIGTERM work during an outage. Scrapy's handlers of these
signals only ask the reactor to stop the crawl, and the reactor waits on the Redis call being
retried; once the crawl runs, this extension's handlers come first, set
:attr:`~focused.store.outages.Outages.stopping` (the retries end at their next failed
attempt, within seconds) and hand the signal on to Scrapy's.
"""

from __future__ import annotations

import functools
import signal
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.utils.asyncio import call_later

from focused.store.outages import OUTAGES, Outages

if TYPE_CHECKING:
    from collections.abc import Callable

    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class RedisOutages:
    """Counts :data:`~focused.store.outages.OUTAGES`'s outages in the crawler's stats while its
    spider is open."""

    def __init__(self, stats: StatsCollector, outages: Outages = OUTAGES):
        self.stats = stats
        self.outages = outages

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> RedisOutages:
        extension = cls(crawler.stats)
        crawler.signals.connect(extension.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(extension.spider_closed, signal=signals.spider_closed)
        crawler.signals.connect(extension.engine_started, signal=signals.engine_started)
        return extension

    def engine_started(self) -> None:
        """Put :meth:`hear_signals` after Scrapy's own handlers, which it installs once the
        reactor has started (the engine may start before)."""
        call_later(0, self.hear_signals)

    def hear_signals(self) -> None:
        """Make each stop signal set ``stopping`` first, then reach its handler (Scrapy's)."""
        for number in STOP_SIGNALS:
            handler = signal.getsignal(number)
            if callable(handler):
                signal.signal(number, functools.partial(self.stop_signal, handler))

    def stop_signal(self, handler: Callable[[int, Any], Any], number: int, frame: Any) -> None:
        self.outages.stopping = True
        handler(number, frame)

    def spider_opened(self) -> None:
        self.outages.listeners.append(self)

    def spider_closed(self) -> None:
        self.outages.listeners.remove(self)
        ongoing = self.outages.ongoing()
        if ongoing is not None:
            # Scrapy's stats add up floats too (its inc_value is typed for ints)
            self.stats.inc_value("focused/redis/outage_s", round(ongoing, 3))  # type: ignore[arg-type]

    def outage_started(self) -> None:
        self.stats.inc_value("focused/redis/outages")

    def outage_ended(self, seconds: float) -> None:
        # Scrapy's stats add up floats too (its inc_value is typed for ints)
        self.stats.inc_value("focused/redis/outage_s", round(seconds, 3))  # type: ignore[arg-type]
