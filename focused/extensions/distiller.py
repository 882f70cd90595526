"""Distiller: the distiller (:mod:`focused.distill`) as a Scrapy extension, run periodically
inside a crawl.

Every second it reads the crawl-wide count of fetched pages (one pipelined round trip) and
runs :func:`~focused.distill.job.distill_job` (a :class:`~focused.store.periodic.PeriodicJob`:
in a thread, one process at a time) when FOCUSED_DISTILL_PAGES pages have been fetched since the
last run of any process, or FOCUSED_DISTILL_INTERVAL seconds have passed and pages were fetched.
A run that takes d seconds is not followed by another within 10·d seconds, so the distiller
takes at most about a tenth of the time on large graphs. Stats: ``focused/distiller/runs``,
``focused/distiller/reboosted``, ``focused/distiller/seconds``, ``focused/distiller/failed``.
"""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING, Any

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused.distill.job import Distillation, distill_job
from focused.errors import FocusedError
from focused.store.crawler import frontier_for
from focused.store.graph import GraphStore
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


logger = logging.getLogger(__name__)
CHECK_S = 1.0


class Distiller:
    def __init__(self, crawler: Crawler, pages: int, interval: float):
        self.crawler = crawler
        self.stats = crawler.stats
        self.pages = pages
        self.interval = interval
        s = crawler.settings
        self.lock_s = s.getfloat("FOCUSED_DISTILL_LOCK_S")
        self.options: dict[str, Any] = {
            "authority_share": s.getfloat("FOCUSED_DISTILL_AUTHORITY_SHARE"),
            "top_hubs": s.getint("FOCUSED_DISTILL_HUBS"),
            "boost": s.getfloat("FOCUSED_DISTILL_BOOST"),
        }
        self.not_before = 0.0
        self.opened = time.time()
        self.task: task.LoopingCall | None = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Distiller:
        s = crawler.settings
        pages, interval = s.getint("FOCUSED_DISTILL_PAGES"), s.getfloat("FOCUSED_DISTILL_INTERVAL")
        if not (pages or interval) or not s.getbool("FOCUSED_CRAWL_GRAPH"):
            raise NotConfigured
        plan = crawl_plan(crawler)
        if not plan.scores_links:  # the unfocused baseline stays so
            raise NotConfigured
        distiller = cls(crawler, pages, interval)
        crawler.signals.connect(distiller.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(distiller.spider_closed, signal=signals.spider_closed)
        return distiller

    def spider_opened(self) -> None:
        self.opened = time.time()
        # The thread gets its own frontier object without the crawl's callbacks: those call
        # into the reactor, which only its own thread may do. It reports by raising.
        self.frontier = frontier_for(self.crawler).for_thread()
        self.graph = GraphStore(frontier_for(self.crawler).store)
        self.job = distill_job(
            self.frontier,
            self.lock_s,
            every=self.pages,
            done=self.done,
            stats=self.stats,
            failures="focused/distiller/failed",
            log=logger,
        )
        self.task = task.LoopingCall(self.check)
        self.task.start(CHECK_S, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def check(self) -> None:
        if self.job.running or time.monotonic() < self.not_before:
            return
        try:
            fetched, last, last_time = self.graph.distiller_counts()
        except FocusedError:  # Redis is lost: the crawl reports it and stops
            return
        waited = time.time() - max(last_time, self.opened)
        if self.interval and fetched > last and waited >= self.interval:
            self.job.start(self.frontier, **self.options)
        else:
            self.job.offer(fetched, last, self.frontier, **self.options)

    def done(self, result: Distillation | None) -> None:
        if result is None:  # another process is distilling
            return
        self.not_before = time.monotonic() + 10 * result.seconds
        self.stats.inc_value("focused/distiller/runs")
        self.stats.inc_value("focused/distiller/reboosted", result.reboosted)
        self.stats.set_value("focused/distiller/seconds", round(result.seconds, 3))
        logger.info(
            "Distilled %(pages)d pages in %(seconds).2f s: %(authorities)d authorities "
            "(R >= %(rho).3f), top hub %(hub)s; re-boosted %(reboosted)d of %(neglected)d "
            "queued neighbours of the top hubs",
            {
                "pages": result.pages,
                "seconds": result.seconds,
                "authorities": result.authorities,
                "rho": result.rho,
                "hub": result.hubs[0][0] if result.hubs else "-",
                "reboosted": result.reboosted,
                "neglected": result.neglected,
            },
        )
