"""Chakrabarti et al. 1999's two modes, and breadth-first: what out-links of a page enter the
frontier.

- soft focus: every out-link enters at its estimate (:class:`~focused.topic.judge.Verdict`:
  the parent page's R, its anchor's or both, as the topic's ``link_score`` says); when a page is
  fetched, its own R replaces the estimate;
- hard focus: out-links enter only when some node on the page's best category path is good;
- breadth-first: the unfocused baseline, every out-link shallower first.

When the judge is unsure (most recent pages score near 0, as a crawl far from its topic's pages
or a topic of a few keywords sees), its estimates rank links by noise: soft and hard focus then
lean towards breadth-first near the seeds (FOCUSED_EXPLORE).
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING, Self

from focused.store.frontier.base import Link

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict


class SoftFocus:
    """Every out-link enters the frontier at the judge's estimate, blended with a depth prior
    ``1 / (1 + depth)`` by ``explore`` times the share of this process's last ``window`` pages
    whose R was under ``below`` (:meth:`unsure`): breadth-first near the seeds while the
    judge's scores carry no information."""

    scores_links = True
    batch_setting = ""
    reads_context = False
    ceiling = 1.0

    def __init__(self, explore: float = 0.0, window: int = 50, below: float = 0.05):
        self.explore = explore
        self.below = below
        self.recent: deque[bool] = deque(maxlen=max(1, window))  # pages judged: R under below

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        s = crawler.settings
        return cls(
            s.getfloat("FOCUSED_EXPLORE"),
            s.getint("FOCUSED_EXPLORE_WINDOW"),
            s.getfloat("FOCUSED_EXPLORE_BELOW"),
        )

    def expands(self, verdict: Verdict) -> bool:
        """Whether the page's out-links enter the frontier at all."""
        return True

    def unsure(self, verdict: Verdict) -> float:
        """The depth prior's weight in the priorities of the page's links: ``explore`` times
        the share of the recent pages (this one among them) that scored under ``below``."""
        if self.explore <= 0:
            return 0.0
        self.recent.append(verdict.relevance < self.below)
        return self.explore * sum(self.recent) / len(self.recent)

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        weight = self.unsure(verdict)
        if not self.expands(verdict):
            return []
        depth = page.depth + 1
        prior = weight / (1 + depth)
        return [
            Link(link.url, (1 - weight) * link.estimate + prior, depth, link.anchor)
            for link in verdict.links
        ]

    def close(self) -> None:
        """Nothing to finish."""


class HardFocus(SoftFocus):
    """Out-links enter only from pages whose best category path has a good node."""

    def expands(self, verdict: Verdict) -> bool:
        return bool(verdict.path_good)


class BreadthFirst(SoftFocus):
    """The unfocused baseline: every out-link enters, shallower first (relevance unused)."""

    scores_links = False

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        depth = page.depth + 1
        return [Link(link.url, 1.0 / (1 + depth), depth, link.anchor) for link in verdict.links]
