"""FrontierPipeline: acknowledge each page's lease and queue its out-links, in one call."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem

from focused.errors import FocusedError, exit_on_user_error
from focused.pipelines.duplicates import DUPLICATE, UNCHANGED
from focused.relevance.preprocess import hub_score
from focused.relevance.text import analyze
from focused.schedulers.scheduler import frontier_for
from focused.strategies.registry import build_strategy
from focused.urls import origin

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.schedulers.base import Frontier
    from focused.strategies.focus import SoftFocus


STOPWORD_SHARE_BOUND = 0.6  # of a page's words, at most (the hub score's shortcut)


class FrontierPipeline:
    """Turns a classified page into frontier writes through the topic's strategy.

    One frontier round trip per page: the lease is acknowledged, the page gets its fetch
    order, the crawl's counters move, and the out-links the strategy keeps are pushed.
    Stats: ``focused/pages/fetched``, ``focused/pages/relevant``, ``focused/pages/failed``,
    ``focused/links/extracted``, ``focused/links/new``.
    """

    def __init__(
        self,
        frontier: Frontier,
        strategy: SoftFocus,
        stats: StatsCollector,
        hub_min_score: float = 0.05,
    ):
        self.frontier = frontier
        self.strategy = strategy
        self.stats = stats
        self.hub_min_score = hub_min_score

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> FrontierPipeline:
        frontier = frontier_for(crawler)
        strategy = build_strategy(crawler, frontier)
        pipeline = cls(
            frontier, strategy, crawler.stats, crawler.settings.getfloat("FOCUSED_HUB_MIN_SCORE")
        )
        return pipeline

    def close_spider(self, spider: Any) -> None:
        self.strategy.close()

    def hub_score(self, item: Any) -> float | None:
        """Seed 004's hub score of a page, if it reaches FOCUSED_HUB_MIN_SCORE: links to other
        sites per word of content (the text without the anchors' words, without stopwords).

        Counting content words costs about 1 ms on a long page, so pages that could only be
        hubs if more than STOPWORD_SHARE_BOUND of their words were stopwords are left out on
        a whitespace count first (English text has about half).
        """
        host = origin(item["url"])  # the page's and its links' URLs are clean (focused.urls)
        external = sum(origin(url) != host for url, *_ in item["links"])
        if not external:
            return None
        text = item["text"] or ""
        anchors = " ".join(anchor for _, anchor, *_ in item["links"])
        rough = len(text.split()) - len(anchors.split())
        if (
            self.hub_min_score > 0
            and rough * (1 - STOPWORD_SHARE_BOUND) * self.hub_min_score > external
        ):
            return None
        words = len(analyze(text)) - len(analyze(anchors))
        score = hub_score(external, max(words, 0))
        return score if score >= self.hub_min_score else None

    def process_item(self, item: Any) -> Any:
        if item["status"] is None:
            kind = "failed"
        elif item["bad"]:
            kind = item["bad"] if item["bad"] in (DUPLICATE, UNCHANGED) else "bad"
        else:
            kind = "page"
        if kind == "page":
            self.strategy.learn(item)
        links = self.strategy.links(item) if kind == "page" else []
        self.stats.set_value("focused/links/dropped_by_url", self.strategy.dropped)
        self.stats.inc_value("focused/links/extracted", len(item["links"]))
        if item["lease"] is None:  # not from the frontier (a dont_filter request): no lease
            self.stats.inc_value("focused/links/new", self.frontier.push_many(links))
            return item
        try:
            order, new = self.frontier.complete(
                item["lease"],
                item["url"],
                kind,
                item["relevance"] or 0.0,
                item["relevant"],
                links,
                item["category"] or "",
                self.hub_score(item) if kind == "page" else None,
            )
        except FocusedError as exc:  # Redis is gone: the lease will bring the URL back
            raise DropItem(f"not acknowledged: {exc}", log_level="DEBUG") from None
        item["order"] = order or None
        self.stats.inc_value("focused/links/new", new)
        if kind == "failed":
            self.stats.inc_value("focused/pages/failed")
        else:
            self.stats.inc_value("focused/pages/fetched")
            if item["relevant"]:
                self.stats.inc_value("focused/pages/relevant")
        return item
