"""The link policy: what applies to a page's links whatever the strategy.

Links whose URL matches FOCUSED_DROP_URL_PATTERNS (Badia et al. 2006: forums and blogs) never
enter: they are taken out of the verdict before the strategy sees it (so no strategy spends
work or shared state on them) and counted in ``dropped``. With the online link model on
(FOCUSED_LINK_MODEL, :mod:`focused.strategies.learning`), each priority the strategy gives is
blended with what the model has learned from the pages fetched so far, which it is taught here
too: what each fetched page reached through a link turned out to be; the blend stays under the
strategy's ``ceiling``.

With FOCUSED_SIBLING_CREDIT, under a strategy that scores links, links listed on the same page
are taken as alike: once a page is found relevant, its siblings still queued on its host (the
URLs pushed by the same parent) are raised to the parent's yield, relevant / (judged + 2) of
its links judged so far (in this process), times the setting, if at least two were relevant
and the yield is twice the crawl's (a site's home page or navigation links to everything).

Queued URLs keep their anchor text only where the crawl needs it back once the page is fetched
(a model that reads anchors, a topic that learns, the link model); otherwise the frontier
stores none.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from focused.links.urls import origin
from focused.relevance.linkmodel import LinkContext, OnlineLinkModel
from focused.store.frontier.base import Link
from focused.store.frontier.records import split_member, unpack_score
from focused.strategies.learning import SharedLinkModel
from focused.strategies.registry import strategy_class

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.spiders.focused import FocusedSpider
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict

__all__ = ["SIBLING_PARENTS", "SIBLING_LIFT", "SIBLING_MIN", "LinkPolicy"]

# Parents whose links' yield is counted for sibling credit (forgotten all at once past this).
SIBLING_PARENTS = 100_000
# A parent's queued links are raised once SIBLING_MIN of them were relevant, to its yield
# relevant / (judged + SIBLING_MIN), when that is SIBLING_LIFT times the crawl's own share.
SIBLING_MIN = 2
SIBLING_LIFT = 2.0


class LinkPolicy:
    """URL patterns dropped before the strategy; the link model's blend and the anchors
    carried where needed after it."""

    def __init__(
        self,
        drop_urls: Sequence[str] = (),
        learner: SharedLinkModel | None = None,
        carry_anchors: bool = False,
        *,
        frontier: RedisFrontier | None = None,
        sibling_credit: float = 0.0,
    ):
        self.drop = re.compile("|".join(f"(?:{p})" for p in drop_urls), re.I) if drop_urls else None
        self.learner = learner
        self.carry_anchors = carry_anchors or learner is not None
        self.dropped = 0  # links left out by URL pattern
        self.frontier = frontier  # where siblings are raised (None: no sibling credit)
        self.sibling_credit = sibling_credit
        # parent's fetch order -> [its links judged, relevant] (sibling credit)
        self.yields: dict[int, list[int]] = {}
        self.raised = 0  # queued siblings raised
        self.judged = self.found = 0  # pages judged and found relevant, for sibling credit

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
        credit = s.getfloat("FOCUSED_SIBLING_CREDIT")
        credit = credit if strategy_class(plan.strategy).scores_links else 0.0
        return cls(
            s.getlist("FOCUSED_DROP_URL_PATTERNS"),
            learner,
            # a topic that learns scores its queued links again from their anchors
            plan.reads_anchors or plan.learns,
            frontier=frontier if credit else None,
            sibling_credit=credit,
        )

    def learn(self, page: Page, verdict: Verdict) -> None:
        """Tell the link model what a fetched page reached through a link turned out to be,
        and raise a relevant page's queued siblings."""
        leased = page.leased
        if leased is None:
            return  # not from the frontier
        if self.frontier is not None and leased.parent:  # found on a fetched page
            self._credit_siblings(page.url, leased.parent, leased.parent_url, verdict.relevant)
        if self.learner is None or verdict.arrival_estimate is None:
            return  # a seed, or a URL pushed without a parent: no link to learn from
        link = LinkContext(
            page.url,
            leased.anchor,
            verdict.arrival_estimate,
            float(leased.parent_relevance or 0.0),
            leased.parent_category,
        )
        self.learner.observe(link, verdict.relevant)

    def _credit_siblings(self, url: str, parent: int, parent_url: str, relevant: bool) -> None:
        """Count the page in its parent's yield and in the crawl's; if it is relevant and its
        parent has yielded more than the crawl (see :data:`SIBLING_MIN`), raise the parent's
        other links still queued on the page's and the parent's hosts to the yield."""
        if len(self.yields) >= SIBLING_PARENTS:
            self.yields.clear()
        counts = self.yields.setdefault(parent, [0, 0])
        counts[0] += 1
        counts[1] += relevant
        self.judged += 1
        self.found += relevant
        if not relevant or counts[1] < SIBLING_MIN:
            return
        yields = counts[1] / (counts[0] + SIBLING_MIN)
        if yields < SIBLING_LIFT * (self.found + 1) / (self.judged + 2):
            return  # a page of links like any other (a site's home page, its navigation)
        assert self.frontier is not None
        score = min(1.0, self.sibling_credit * yields)
        origins = list(dict.fromkeys((origin(url), origin(parent_url))))
        mark = str(parent)
        siblings = [  # those below the score
            (host, member, packed)
            for host, queue in zip(origins, self.frontier.host_queues(origins), strict=True)
            for member, packed, _ in queue
            if split_member(member)[1] == mark and unpack_score(packed)[1] < score
        ]
        if siblings:
            self.raised += self.frontier.raise_to(score, siblings)

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
