"""TopicEdits: a keywords topic's edited keywords applied to the crawl it resumes.

A crawl keeps what its topic file decides (``claim_crawl`` in :mod:`focused.schedulers.scheduler`)
and refuses a run of the file deciding otherwise, but for new keywords (or description) of a
keywords topic: those are recorded, and when the spider opens this extension scores the crawl's
queued URLs again by their anchors with the new keywords, as a refitted topic's are
(:meth:`~focused.store.frontier.queue.RedisFrontier.rescore_anchors`), and says so in one line.
Pages fetched before keep their R. Counted in the crawl's ``rescored``.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from scrapy import signals

from focused.errors import FocusedError
from focused.schedulers.scheduler import applied_topic_changes
from focused.store.crawler import frontier_for
from focused.topic.judge import Judge
from focused.topic.plan import crawl_plan

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class TopicEdits:
    """Applies the edits the scheduler's claim of the crawl accepted (built before it, so it
    looks when the spider opens)."""

    def __init__(self, crawler: Crawler):
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> TopicEdits:
        edits = cls(crawler)
        crawler.signals.connect(edits.spider_opened, signal=signals.spider_opened)
        return edits

    def spider_opened(self) -> None:
        changed = applied_topic_changes(self.crawler)
        if not changed:
            return
        frontier = frontier_for(self.crawler)
        try:
            judge = Judge.from_plan(crawl_plan(self.crawler), self.crawler.settings)
            moved = frontier.rescore_anchors(judge.anchor_relevance)
        except FocusedError:  # Redis is lost: the frontier reports it and stops the crawl
            return
        logger.warning(
            "Topic of crawl %(crawl)s edited (%(changed)s): applied, its queued URLs scored"
            " again by their anchors with it (%(n)d moved)",
            {"crawl": frontier.store.crawl, "changed": ", ".join(changed), "n": moved},
        )
