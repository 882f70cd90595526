"""The link policy: what applies to a page's links whatever the strategy.

Links whose URL matches FOCUSED_DROP_URL_PATTERNS (Badia et al. 2006: forums and blogs) never
enter: they are taken out of the verdict before the strategy sees it (so no strategy spends
work or shared state on them) and counted in ``dropped``. With the online link model on
(FOCUSED_LINK_MODEL, :mod:`focused.strategies.learning`), each priority the strategy gives is
blended with what the model has learned from the pages fetched so far, which it is taught here
too: what each fetched page reached through a link turned out to be; the blend stays under the
strategy's ``ceiling``. Queued URLs keep their anchor text only where the crawl needs it back
once the page is fetched (a model that reads anchors, a topic that learns, the link model);
otherwise the frontier stores none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from focused.relevance.linkmodel import LinkContext, OnlineLinkModel
from focused.store.frontier.base import Link
from focused.strategies.learning import SharedLinkModel

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.spiders.focused import FocusedSpider
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict

__all__ = ["LinkPolicy"]


class LinkPolicy:
    """URL patterns dropped before the strategy; the link model's blend and the anchors
    carried where needed after it."""

    def __init__(
        self,
        drop_urls: Sequence[str] = (),
        learner: SharedLinkModel | None = None,
        carry_anchors: bool = False,
    ):
        self.drop = re.compile("|".join(f"(?:{p})" for p in drop_urls), re.I) if drop_urls else None
        self.learner = learner
        self.carry_anchors = carry_anchors or learner is not None
        self.dropped = 0  # links left out by URL pattern

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> LinkPolicy:
        s = crawler.settings
        plan = cast("FocusedSpider", crawler.spider).plan
        learner = None
        if plan.link_model:
            learner = SharedLinkModel(
                frontier.store,
                OnlineLinkModel(warmup=s.getint("FOCUSED_LINK_MODEL_WARMUP")),
                sync_every=s.getint("FOCUSED_LINK_MODEL_SYNC"),
            )
        return cls(
            s.getlist("FOCUSED_DROP_URL_PATTERNS"),
            learner,
            # a topic that learns scores its queued links again from their anchors
            plan.reads_anchors or plan.learns,
        )

    def learn(self, page: Page, verdict: Verdict) -> None:
        """Tell the link model what a fetched page reached through a link turned out to be."""
        leased = page.leased
        if self.learner is None or leased is None or verdict.arrival_estimate is None:
            return  # a seed, or a URL pushed without a parent: no link to learn from
        link = LinkContext(
            page.url,
            leased.anchor,
            verdict.arrival_estimate,
            float(leased.parent_relevance or 0.0),
            leased.parent_category,
        )
        self.learner.observe(link, verdict.relevant)

    def admitted(self, verdict: Verdict) -> Verdict:
        """The verdict without the links whose URLs the patterns drop."""
        if self.drop is None:
            return verdict
        kept = [link for link in verdict.links if not self.drop.search(link.url)]
        if len(kept) == len(verdict.links):
            return verdict
        self.dropped += len(verdict.links) - len(kept)
        return replace(verdict, links=kept)

    def apply(self, links: list[Link], verdict: Verdict, ceiling: float = 1.0) -> list[Link]:
        """The links a strategy gave, at their final priorities (at most ``ceiling``, the
        strategy's highest for an ordinary link)."""
        if self.learner is not None and links:
            category = verdict.category or ""
            parent = verdict.relevance
            priorities = self.learner.predict(
                [LinkContext(k.url, k.anchor, k.score, parent, category) for k in links]
            )
            links = [
                Link(k.url, min(p, ceiling), k.depth, k.anchor)
                for k, p in zip(links, priorities, strict=True)
            ]
        if not self.carry_anchors:
            links = [Link(k.url, k.score, k.depth) if k.anchor else k for k in links]
        return links
