"""Chakrabarti et al. 1999's two modes, and breadth-first: what out-links of a page enter the
frontier.

Chakrabarti et al. 1999's two modes:

- soft focus: every out-link enters, scored by the relevance estimate of its parent page;
  when a page is fetched, its own R replaces the estimate (its out-links carry its R).
- hard focus: out-links enter only when some node on the page's best category path is good.

``link_score`` says how an out-link's estimate is made (Batsakis et al. 2009's best-first variants,
and one more): ``content`` (R of the page, Chakrabarti et al. 1999), ``anchor`` (R of the anchor
text), ``both`` (their mean) or ``context`` (the geometric mean of R of the anchor text and R of the
anchor with the words around it; the classifier pipeline computes it). With a ``learner`` (the
crawl's online link model, :mod:`focused.strategies.learning`) the estimate is one feature of the
link's priority, which the learner blends with what it has learned from the pages fetched so far;
the strategy feeds it each fetched page through ``learn``. Links whose URL matches ``drop_urls``
(Badia et al. 2006: forums and blogs) never enter, whatever the strategy; they are filtered here,
before the frontier's round trip, and counted in ``dropped``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Self, cast

from focused.errors import one_of
from focused.relevance.linkmodel import LinkContext, OnlineLinkModel
from focused.store.frontier.base import Link
from focused.strategies.base import Strategy
from focused.strategies.learning import SharedLinkModel
from focused.strategies.registry import LINK_SCORES

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.spiders.focused import FocusedSpider
    from focused.store.frontier.queue import RedisFrontier


class SoftFocus(Strategy):
    """Every out-link enters the frontier.

    The contract of a strategy: ``links`` turns a classified page (the classifier pipeline's
    item) into the scored links the frontier pipeline pushes with the page's acknowledgement,
    ``learn`` sees every classified page first, and ``close`` runs when the spider closes.
    Strategies keep their shared state in Redis under the crawl's prefix, so several crawler
    processes can run one crawl; the frontier's store is the same for all of them.
    """

    scores_links = True  # False: links are ordered without the topic model's scores
    # The setting of a batch size: the scheduler then pops whole batches of that many URLs,
    # each once the last is all acknowledged (best-N-first); "": it refills as it needs.
    batch_setting = ""
    # True: the spider keeps the words around each anchor (``links[i][2]``) whatever the link
    # score, because the strategy reads them (InfoSpiders' agents).
    reads_context = False

    def __init__(
        self,
        link_score: str = "content",
        drop_urls: Sequence[str] = (),
        learner: SharedLinkModel | None = None,
        carry_anchors: bool = False,
    ):
        if link_score not in LINK_SCORES:
            raise ValueError(f"link_score: expected {one_of(LINK_SCORES)}, got {link_score!r}")
        self.link_score = link_score
        self.learner = learner
        # Queued URLs keep their anchor text when the learner or the topic model needs it
        # back once the page is fetched; otherwise the frontier stores no anchors.
        self.carry_anchors = carry_anchors or learner is not None
        self.drop = re.compile("|".join(f"(?:{p})" for p in drop_urls), re.I) if drop_urls else None
        self.dropped = 0

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        """The strategy of the crawl's topic and settings; subclasses add their own settings
        to :meth:`options`."""
        return cls(**cls.options(crawler, frontier))

    @classmethod
    def options(cls, crawler: Crawler, frontier: RedisFrontier) -> dict[str, Any]:
        """What every strategy is built with: link score, URL patterns dropped,
        the online link model (the plan's ``link_model``) and whether anchors are carried."""
        s = crawler.settings
        plan = cast("FocusedSpider", crawler.spider).plan
        learner = None
        if plan.link_model:
            learner = SharedLinkModel(
                frontier.store,
                OnlineLinkModel(warmup=s.getint("FOCUSED_LINK_MODEL_WARMUP")),
                sync_every=s.getint("FOCUSED_LINK_MODEL_SYNC"),
            )
        return {
            "link_score": plan.link_score,
            "drop_urls": s.getlist("FOCUSED_DROP_URL_PATTERNS"),
            "learner": learner,
            # a topic that learns scores its queued links again from their anchors
            "carry_anchors": plan.reads_anchors or plan.learns,
        }

    def kept(self, links: list[Link]) -> list[Link]:
        """The links whose URLs are not dropped by pattern."""
        if self.drop is None:
            return links
        kept = [link for link in links if not self.drop.search(link.url)]
        self.dropped += len(links) - len(kept)
        return kept

    def expands(self, page: Mapping[str, Any]) -> bool:
        """Whether the page's out-links enter the frontier at all."""
        return True

    def estimate(self, parent: float, anchor: float | None) -> float:
        """The topic model's estimate of a link's target, from its parent's and anchor's R."""
        if self.link_score == "content" or anchor is None:
            return parent
        return (parent + anchor) / 2 if self.link_score == "both" else anchor

    def learn(self, page: Mapping[str, Any]) -> None:
        """Tell the learner what a fetched page reached through a link turned out to be."""
        if self.learner is None or page.get("parent_relevance") is None:
            return  # a seed, or a URL pushed without a parent: no link to learn from
        parent = float(page["parent_relevance"])
        link = LinkContext(
            page["url"],
            page.get("anchor") or "",
            self.estimate(parent, page.get("anchor_relevance")),
            parent,
            page.get("parent_category") or "",
        )
        self.learner.observe(link, bool(page["relevant"]))

    def close(self) -> None:
        """The spider closes: nothing to finish here."""

    def links(self, page: Mapping[str, Any]) -> list[Link]:
        """The page's out-links, scored, or none."""
        depth = page["depth"] + 1
        if not self.expands(page):
            return []
        links: Sequence[tuple[str, str, str]] = page["links"]
        parent = float(page["relevance"])
        anchors = page.get("link_scores") or [None] * len(links)
        scores = [self.estimate(parent, a) for a in anchors]
        kept = self.kept(
            [
                Link(url, score, depth, anchor if self.carry_anchors else "")
                for (url, anchor, _), score in zip(links, scores, strict=True)
            ]
        )
        if self.learner is None or not kept:
            return kept
        category = page.get("category") or ""
        priorities = self.learner.predict(
            [LinkContext(k.url, k.anchor, k.score, parent, category) for k in kept]
        )
        return [Link(k.url, p, depth, k.anchor) for k, p in zip(kept, priorities, strict=True)]


class HardFocus(SoftFocus):
    """Out-links enter only from pages whose best category path has a good node."""

    def expands(self, page: Mapping[str, Any]) -> bool:
        return bool(page.get("path_good"))


class BreadthFirst(SoftFocus):
    """The unfocused baseline: every out-link enters, shallower first (relevance unused)."""

    scores_links = False

    def links(self, page: Mapping[str, Any]) -> list[Link]:
        depth = page["depth"] + 1
        return self.kept([Link(url, 1.0 / (1 + depth), depth) for url, *_ in page["links"]])
