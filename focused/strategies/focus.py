"""Chakrabarti et al. 1999's two modes, and breadth-first: what out-links of a page enter the
frontier.

- soft focus: every out-link enters at its estimate (:class:`~focused.topic.judge.Verdict`:
  the parent page's R, its anchor's or both, as the topic's ``link_score`` says); when a page is
  fetched, its own R replaces the estimate;
- hard focus: out-links enter only when some node on the page's best category path is good;
- breadth-first: the unfocused baseline, every out-link shallower first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from focused.store.frontier.base import Link

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

    from focused.items import Page
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict


class SoftFocus:
    """Every out-link enters the frontier at the judge's estimate."""

    scores_links = True
    batch_setting = ""
    reads_context = False
    ceiling = 1.0

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        return cls()

    def expands(self, verdict: Verdict) -> bool:
        """Whether the page's out-links enter the frontier at all."""
        return True

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        if not self.expands(verdict):
            return []
        depth = page.depth + 1
        return [Link(link.url, link.estimate, depth, link.anchor) for link in verdict.links]

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
