"""Crawl strategies: what out-links of a page enter the frontier, and with what score.

A strategy only turns a classified page into scored links; the frontier stores and orders them
and knows nothing of topics (Frontera keeps the same seam). Seed 000's two modes:

- soft focus: every out-link enters, scored by the relevance estimate of its parent page;
  when a page is fetched, its own R replaces the estimate (its out-links carry its R).
- hard focus: out-links enter only when some node on the page's best category path is good.

``link_score`` says how an out-link's estimate is made: ``parent`` (R of the page, seed 000),
``anchor`` (R of the anchor text) or ``both`` (their mean). Links whose URL matches
``drop_urls`` (seed 004: forums and blogs) never enter, whatever the strategy; they are
filtered here, before the frontier's round trip, and counted in ``dropped``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from focused.schedulers.frontier import Link

LINK_SCORES = ("parent", "anchor", "both")


class SoftFocus:
    """Every out-link enters the frontier."""

    def __init__(
        self, link_score: str = "parent", depth_limit: int = 0, drop_urls: Sequence[str] = ()
    ):
        if link_score not in LINK_SCORES:
            raise ValueError(f"link_score must be one of {LINK_SCORES}, got {link_score!r}")
        self.link_score = link_score
        self.depth_limit = depth_limit
        self.drop = re.compile("|".join(f"(?:{p})" for p in drop_urls), re.I) if drop_urls else None
        self.dropped = 0

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

    def links(self, page: Mapping[str, Any]) -> list[Link]:
        """The page's out-links, scored, or none."""
        depth = page["depth"] + 1
        if not self.expands(page) or (self.depth_limit and depth > self.depth_limit):
            return []
        links: Sequence[tuple[str, str]] = page["links"]
        parent = float(page["relevance"])
        anchors = page.get("link_scores") or [parent] * len(links)
        if self.link_score == "parent":
            scores = [parent] * len(links)
        elif self.link_score == "anchor":
            scores = list(anchors)
        else:
            scores = [(parent + a) / 2 for a in anchors]
        return self.kept(
            [Link(url, score, depth) for (url, _), score in zip(links, scores, strict=True)]
        )


class HardFocus(SoftFocus):
    """Out-links enter only from pages whose best category path has a good node."""

    def expands(self, page: Mapping[str, Any]) -> bool:
        return bool(page.get("path_good"))


class BreadthFirst(SoftFocus):
    """The unfocused baseline: every out-link enters, shallower first (relevance unused)."""

    def links(self, page: Mapping[str, Any]) -> list[Link]:
        depth = page["depth"] + 1
        if self.depth_limit and depth > self.depth_limit:
            return []
        return self.kept([Link(url, 1.0 / (1 + depth), depth) for url, _ in page["links"]])


STRATEGIES = {"soft": SoftFocus, "hard": HardFocus, "breadth-first": BreadthFirst}
