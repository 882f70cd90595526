"""The crawl's store and frontier for a Scrapy crawler: built once per crawler, from its
settings, and shared by its components (the scheduler, the pipelines, the extensions and the
middlewares), so that they share one connection pool, one retry policy and one report of a lost
Redis, which stops the crawl."""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

from scrapy.utils.defer import deferred_from_coro

from focused.errors import REDIS_LOST, REDIS_REFUSED, REDIS_VANISHED, CrawlVanished, FocusedError
from focused.store.client import from_settings
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Budgets
from focused.store.frontier.queue import RedisFrontier
from focused.store.keys import NAME_RE
from focused.store.outages import OUTAGES
from focused.store.retries import RedisRefused

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.links.urls import BadURL

logger = logging.getLogger(__name__)

_stores: weakref.WeakKeyDictionary[Any, CrawlStore] = weakref.WeakKeyDictionary()
_frontiers: weakref.WeakKeyDictionary[Any, RedisFrontier] = weakref.WeakKeyDictionary()


def crawl_name(crawler: Crawler) -> str:
    """The crawl's Redis key prefix name: FOCUSED_CRAWL, else the topic's name."""
    name = crawler.settings.get("FOCUSED_CRAWL")
    if name:
        if not NAME_RE.match(name):
            raise FocusedError(
                f"FOCUSED_CRAWL: expected a crawl name of letters, digits, '_.-', got {name!r}"
            )
        return name
    topic = getattr(crawler.spider, "topic", None)
    if topic is None:
        raise ValueError("FOCUSED_CRAWL is empty and the spider has no topic to name the crawl")
    return topic.name


def store_for(crawler: Crawler) -> CrawlStore:
    """The crawl's Redis as the crawler's components share it (made on first use): its
    retries count in ``focused/redis/retries``, and a Redis that stays lost, keeps refusing
    writes or has lost the crawl's state stops the crawl (finish reason and stat below)."""
    if crawler not in _stores:
        stats = crawler.stats

        def on_retry(attempt: int, error: Exception) -> None:
            stats.inc_value("focused/redis/retries")
            if isinstance(error, RedisRefused):  # it says what it is
                logger.warning("%(error)s; retry %(attempt)d", {"error": error, "attempt": attempt})
                return
            logger.warning(
                "Redis connection lost (%(error)s); retry %(attempt)d",
                {"error": error, "attempt": attempt},
            )

        def on_lost(error: FocusedError) -> None:
            refused = isinstance(error, RedisRefused)
            then = ", then resume the crawl; stopping it" if refused else "; stopping the crawl"
            logger.error("%(error)s%(then)s", {"error": error, "then": then})
            vanished = isinstance(error, CrawlVanished)
            reason = REDIS_REFUSED if refused else REDIS_VANISHED if vanished else REDIS_LOST
            stats.set_value(
                "focused/redis/refused"
                if refused
                else "focused/redis/vanished"
                if vanished
                else "focused/redis/lost",
                1,
            )
            OUTAGES.stopping = True  # the close does not wait for a Redis that is gone
            deferred_from_coro(crawler.engine.close_spider_async(reason=reason))

        _stores[crawler] = CrawlStore(
            from_settings(crawler.settings),
            crawl_name(crawler),
            retries=crawler.settings.getint("FOCUSED_REDIS_RETRIES"),
            create=True,
            on_retry=on_retry,
            on_lost=on_lost,
        )
    return _stores[crawler]


def frontier_for(crawler: Crawler) -> RedisFrontier:
    """The one frontier object of a crawler, over its store, shared by the scheduler, the
    pipelines, the extensions and the middlewares; URLs it refuses count in
    ``focused/links/bad/<reason>``."""
    if crawler not in _frontiers:
        s = crawler.settings

        def on_rejected(error: BadURL) -> None:
            crawler.stats.inc_value(f"focused/links/bad/{error.reason}")

        _frontiers[crawler] = RedisFrontier(
            store_for(crawler),
            host_delay=s.getfloat("FOCUSED_HOST_DELAY"),
            host_concurrency=s.getint("FOCUSED_HOST_CONCURRENCY"),
            dead_prior=s.getfloat("FOCUSED_DEAD_HOST_PRIOR"),
            dead_hold=s.getfloat("FOCUSED_DEAD_HOST_HOLD"),
            dead_after=s.getint("FOCUSED_DEAD_HOST_AFTER"),
            lease_s=s.getfloat("FOCUSED_LEASE_S"),
            max_tries=s.getint("FOCUSED_MAX_TRIES"),
            seen_buckets=s.getint("FOCUSED_SEEN_BUCKETS"),
            seen_cache=s.getint("FOCUSED_SEEN_CACHE"),
            graph=s.getbool("FOCUSED_CRAWL_GRAPH"),
            revisits=s.getfloat("FOCUSED_REVISIT_SHARE") > 0
            and s.get("FOCUSED_REVISIT_ORDER") == "relevance",
            max_url_length=s.getint("URLLENGTH_LIMIT"),
            budgets=Budgets(
                host_pages=s.getint("FOCUSED_HOST_MAX_PAGES"),
                host_share=s.getfloat("FOCUSED_HOST_MAX_SHARE"),
                domain_pages=s.getint("FOCUSED_DOMAIN_MAX_PAGES"),
                domain_share=s.getfloat("FOCUSED_DOMAIN_MAX_SHARE"),
                domain_hosts=s.getint("FOCUSED_DOMAIN_MAX_HOSTS"),
                host_queued=s.getint("FOCUSED_HOST_MAX_QUEUED"),
                suffix_hosts=s.getint("FOCUSED_SUFFIX_MAX_HOSTS"),
                farm_hosts=s.getint("FOCUSED_FARM_MAX_HOSTS"),
                private_suffixes=tuple(s.getlist("FOCUSED_PRIVATE_SUFFIXES")),
            ),
            on_rejected=on_rejected,
            epoch=True,
        )
    return _frontiers[crawler]
