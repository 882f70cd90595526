"""The contract of a crawl strategy, written as code (as Scrapy's ``BaseScheduler``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.store.frontier.base import Link
    from focused.store.frontier.queue import RedisFrontier

__all__ = ["Strategy"]


class Strategy(ABC):
    """Turns classified pages into scored links; the frontier stores and orders them.

    The frontier pipeline calls ``learn`` with every classified page (the classifier
    pipeline's item) and then pushes what ``links`` returns with the page's acknowledgement;
    ``close`` runs when the spider closes. Strategies give scores and never touch the
    frontier's keys; those that keep shared state (several crawler processes run one crawl)
    keep it in Redis under the crawl's prefix. ``dropped`` counts the links left out by URL
    pattern (the stats' ``focused/links/dropped``).

    Class attributes tell the rest of the crawl what the strategy needs:

    - ``scores_links``: False when links are ordered without the topic model's scores
      (breadth-first), so no anchor is scored for nothing;
    - ``batch_setting``: the setting of a batch size when the scheduler must pop whole
      batches of that many URLs, each once the last is all acknowledged (best-N-first);
      "" when it refills as it needs;
    - ``reads_context``: the spider keeps the words around each anchor whatever the link
      score, because the strategy reads them (InfoSpiders' agents).
    """

    scores_links = True
    batch_setting = ""
    reads_context = False
    dropped = 0

    @classmethod
    @abstractmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        """The strategy of the crawl's plan (``crawler.spider.plan``) and settings."""

    @abstractmethod
    def links(self, page: Mapping[str, Any]) -> list[Link]:
        """The page's out-links, scored, or none."""

    def learn(self, page: Mapping[str, Any]) -> None:  # noqa: B027 - most strategies learn nothing
        """See a classified page before its links are asked for."""

    def close(self) -> None:  # noqa: B027 - most strategies have nothing to finish
        """The spider closes."""
