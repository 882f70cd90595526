"""The contract of a crawl strategy, written as code (as Scrapy's ``BaseScheduler``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Protocol, Self

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.base import Link
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict

__all__ = ["Strategy"]


class Strategy(Protocol):
    """A policy over judged pages: which of a page's out-links enter the frontier, and at
    what priority.

    The frontier pipeline calls ``links(page, verdict)`` with every judged page and pushes
    what it returns with the page's acknowledgement, after the crawl's link policy
    (:class:`~focused.strategies.policy.LinkPolicy`: URL patterns dropped, the online link model's
    blend, anchors carried only where needed), which applies to every strategy; ``close``
    runs when the spider closes. The verdict holds each link's estimate
    (:class:`~focused.items.PageLink`), made by the judge: a strategy turns estimates into
    priorities, it does not estimate. Strategies give priorities and never touch the
    frontier's keys; those that keep shared state (several crawler processes run one crawl)
    keep it in Redis under the crawl's prefix, through the crawl's store.

    Class attributes tell the rest of the crawl what the strategy needs:

    - ``scores_links``: False when links are ordered without the judge's estimates
      (breadth-first), so no anchor is scored for nothing;
    - ``batch_setting``: the setting of a batch size when the scheduler must pop whole
      batches of that many URLs, each once the last is all acknowledged (best-N-first);
      "" when it refills as it needs;
    - ``reads_context``: the spider keeps the words around each anchor whatever the link
      score, because the strategy reads them (InfoSpiders' agents).

    ``ceiling`` is the highest priority of an ordinary link (1.0 unless the strategy keeps a
    band above it, as the genetic strategy does for a generation's chosen URLs): the link
    policy's blend stays under it.
    """

    scores_links: ClassVar[bool]
    batch_setting: ClassVar[str]
    reads_context: ClassVar[bool]
    ceiling: float

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        """The strategy of the crawl's plan (``crawler.spider.plan``) and settings."""
        ...

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        """The page's out-links with their priorities, or none."""
        ...

    def close(self) -> None:
        """The spider closes."""
        ...
