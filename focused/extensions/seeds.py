"""SeedFeeder: seeds pushed into a running crawl through a Redis list, as scrapy-redis reads
its ``redis_key``.

``focused seed NAME URL...`` (or ``redis-cli rpush "focused:{NAME}:start_urls" URL``) appends to
the list ``focused:{NAME}:start_urls``. Every FOCUSED_SEEDS_CHECK_S seconds, and once more before
the crawl would close for lack of URLs, one process moves up to ``BATCH`` of them into the
frontier, where they are deduplicated, ordered and fetched politely like any link (score 1,
depth 0). Pushed URLs that are not http(s) are dropped, counted and logged.

Nothing is lost if a process dies while moving them: it reads the head of the list, pushes it
into the frontier and only then trims it, under a lock that expires; a crash before the trim
leaves the URLs for the next process, whose push finds them already seen. The trim is refused
to a process whose lock ran out before it (paused past its lease while another process moved
the same seeds): it would trim seeds pushed since, never moved.
Stats: ``focused/seeds/read``, ``focused/seeds/new``, ``focused/seeds/invalid``.

SeedCheck ends a crawl that could fetch no page at all (every seed failed or was bad, in this
run or an earlier one) with the finish reason ``focused_no_seed`` (exit code 5) and one line,
rather than as "finished". SeedRelevance warns once, at the start, when no seed looks relevant.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import CloseSpider, DontCloseSpider, NotConfigured
from twisted.internet import task

from focused.errors import NO_SEED, FocusedError
from focused.store.crawler import frontier_for
from focused.store.frontier.base import Link
from focused.store.lock import LEASE_S, LockLost
from focused.store.seeds import PushedSeeds
from focused.topic.files import is_seed_url
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.base import Frontier

logger = logging.getLogger(__name__)
BATCH = 1000
# Seed pages SeedRelevance judges (at most): seeds come in among the first pages, not first.
SEEDS_JUDGED = 5


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
        self.seeds = PushedSeeds(self.frontier.store)
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
        seeds = self.seeds

        def push(urls: list[str]) -> tuple[int, int]:
            good = [url.strip() for url in urls if is_seed_url(url.strip())]
            return len(good), self.frontier.push_many([Link(url, 1.0, 0) for url in good])

        try:
            if not seeds.waiting():
                return 0
            moved = seeds.move(BATCH, LEASE_S, push)
        except LockLost as exc:  # paused past its lease: another process moved them
            logger.warning("Pushed seeds left to the next move: %(error)s", {"error": exc})
            return 0
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return 0
        if moved is None:
            return 0  # another process is moving them
        read, (good, new) = len(moved.urls), moved.pushed
        self.stats.inc_value("focused/seeds/read", read)
        self.stats.inc_value("focused/seeds/new", new)
        if good < read:
            self.stats.inc_value("focused/seeds/invalid", read - good)
            logger.warning(
                "Dropped %(n)d pushed seeds that are not http(s) URLs", {"n": read - good}
            )
        logger.info(
            "Moved %(read)d pushed seeds into the frontier, %(new)d new to the crawl",
            {"read": read, "new": new},
        )
        return new


class SeedCheck:
    """Ends a crawl with nothing fetchable as ``focused_no_seed``, saying why in one line.

    When the crawl would close (the spider is idle) with nothing queued or in flight and not
    one page of it, in any run, fetched with a usable answer, its seeds could not be fetched: a
    crawl of no page is not "finished". Its seeds are now seen, so a run after a fix would end
    at once: the line says how to try them again or add others.
    """

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeedCheck:
        check = cls(crawler)
        crawler.signals.connect(check.spider_idle, signal=signals.spider_idle)
        return check

    def spider_idle(self) -> None:
        frontier = frontier_for(self.crawler)
        try:
            counts = frontier.counts()
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return
        # Fetched are pages, bad pages and redirects: a redirect is no page of its own.
        pages = counts.get("fetched", 0) - counts.get("bad", 0) - counts.get("redirect", 0)
        if pages > 0 or counts.get("queued", 0) or counts["in_flight"]:
            return
        crawl = frontier.store.crawl
        prefix = "focused/bad_page/"
        reasons = {
            key.removeprefix(prefix): n
            for key, n in self.crawler.stats.get_stats().items()
            if key.startswith(prefix)
        }
        if reasons:
            why = ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items()))
        else:
            why = "an earlier run of this crawl tried them" if counts.get("seen") else "none given"
        logger.error(
            "no seed could be fetched: %(why)s; `focused reset %(crawl)s` tries them again"
            " (after a fix), `focused seed %(crawl)s URL` adds others",
            {"why": why, "crawl": crawl},
        )
        raise CloseSpider(NO_SEED)


class SeedRelevance:
    """Warns once, at the start, when no seed looks relevant: a topic whose words match none of
    its seeds (keywords in French on an English web: every seed's R near 0) otherwise crawls
    on without a word, finding nothing.

    The seeds are judged once this process has had an item for SEEDS_JUDGED pages of depth 0
    (a page fetched, bad or failed; or for each of the topic's seeds, if fewer), or, in a crawl
    of several processes that share them, once it has classified FOCUSED_ALARM_MIN_PAGES pages,
    when the harvest's alarms start. A relevant seed ends the watch; seeds that were all bad
    are SeedCheck's; a resumed crawl fetches no seed again, so it says nothing.
    """

    def __init__(self, crawler: Crawler, min_pages: int):
        self.crawler = crawler
        self.min_pages = min_pages
        self.seeds = 0  # items of depth 0
        self.judged: list[float] = []  # their R, for those classified
        self.pages = 0  # pages classified
        self.done = False

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> SeedRelevance:
        check = cls(crawler, crawler.settings.getint("FOCUSED_ALARM_MIN_PAGES"))
        crawler.signals.connect(check.item_scraped, signal=signals.item_scraped)
        return check

    def item_scraped(self, item: Page) -> None:
        if self.done or item.revisit:
            return
        relevance = item.relevance
        self.pages += relevance is not None
        if item.depth == 0:
            if item.relevant:
                self.done = True
                return
            self.seeds += 1
            if relevance is not None:
                self.judged.append(float(relevance))
        plan = crawl_plan(self.crawler)
        if self.seeds < min(SEEDS_JUDGED, len(plan.topic.seeds)) and self.pages < self.min_pages:
            return
        self.done = True
        if self.judged:
            logger.warning(
                "No seed looks relevant: the best of the first %(n)d seed pages has R"
                " %(best).4f, under the threshold %(threshold)g; do the topic's words match"
                " these pages (their language)?",
                {"n": len(self.judged), "best": max(self.judged), "threshold": plan.threshold},
            )
