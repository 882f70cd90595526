"""Maintenance: runs Chakrabarti et al. 1999's maintenance mode (:mod:`focused.schedulers.revisits`)
inside a crawl.

Every second it checks whether ``FOCUSED_REVISIT_EVERY`` pages were fetched since the last
round (crawl-wide); the process that claims a round queues about ``FOCUSED_REVISIT_SHARE`` of
them again among known pages. Stats: ``focused/revisit/queued``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.exceptions import NotConfigured
from twisted.internet import task

from focused.errors import FocusedError, exit_on_user_error
from focused.schedulers.revisits import revisit_round
from focused.settings.check import choice
from focused.store.crawler import frontier_for
from focused.store.revisits import claim_round

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.store.frontier.base import Frontier

logger = logging.getLogger(__name__)
CHECK_S = 1.0


class Maintenance:
    def __init__(self, crawler: Crawler, share: float, order: str, every: int):
        self.crawler = crawler
        self.share = share
        self.order = order
        self.every = every
        self.task: task.LoopingCall | None = None

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> Maintenance:
        s = crawler.settings
        share, order = s.getfloat("FOCUSED_REVISIT_SHARE"), choice(s, "FOCUSED_REVISIT_ORDER")
        if share <= 0:
            raise NotConfigured
        maintenance = cls(crawler, share, order, s.getint("FOCUSED_REVISIT_EVERY"))
        crawler.signals.connect(maintenance.spider_opened, signal=signals.spider_opened)
        crawler.signals.connect(maintenance.spider_closed, signal=signals.spider_closed)
        return maintenance

    def spider_opened(self) -> None:
        self.frontier: Frontier = frontier_for(self.crawler)
        self.task = task.LoopingCall(self.check)
        self.task.start(CHECK_S, now=False)

    def spider_closed(self) -> None:
        if self.task is not None and self.task.running:
            self.task.stop()

    def check(self) -> None:
        try:
            if not claim_round(self.frontier.store, self.every):
                return
            queued = revisit_round(
                self.frontier, self.order, max(1, round(self.every * self.share))
            )
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return
        self.crawler.stats.inc_value("focused/revisit/queued", queued)
        logger.info(
            "Maintenance: queued %(queued)d known pages again (by %(order)s)",
            {"queued": queued, "order": self.order},
        )
