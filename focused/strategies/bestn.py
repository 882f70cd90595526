"""Srinivasan et al. 2005's best-N-first (BFS-N): soft focus's link scores, popped N at a time from
a frontier capped at MAX_BUFFER links.

The paper's crawler takes the best N links of its frontier as one batch, fetches them all, adds
their pages' links, and keeps at most MAX_BUFFER links, dropping the worst. Here:

- links are scored as under soft focus (the judge's estimates), so best-N-first works with
  every relevance method;
- the scheduler pops ``FOCUSED_BEST_N`` URLs at a time and the next batch only when the last
  one is all acknowledged (``batch_setting``; :mod:`focused.schedulers.scheduler`). Politeness
  still holds: a batch is the best URLs whose hosts may be hit now, so it may be smaller;
- the frontier is trimmed to ``FOCUSED_MAX_BUFFER`` queued URLs by
  :meth:`~focused.store.frontier.queue.RedisFrontier.drop_worst`, one atomic call, once this
  process has handed ``max_buffer // TRIM_SHARE`` links (at least one) to the frontier since
  its last trim: the queue overshoots the cap by at most that share per process, and a trim's
  cost (one read per host with queued URLs and per URL dropped) is spread over as many links.
  Measured on the embedded Redis: 1-3 ms a trim at the default cap of 256 (20-200 hosts),
  35-90 ms at 10,000, so trimming on every page would be affordable only for small caps. The
  trim runs when the next page's links are made (the last page's were pushed by then), and
  at close.

Several processes share one crawl: each pops its own batches, and any of them may trim (the
script never goes below the cap, so concurrent trims drop nothing twice). Dropped URLs stay
seen, so they never come back; the crawl counts them as ``dropped/buffer`` (``focused
status``). Stats: ``focused/best_n_first/dropped``, ``focused/best_n_first/trims``.
"""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING, Self

from focused.errors import FocusedError
from focused.strategies.focus import SoftFocus

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page
    from focused.store.frontier.base import Link
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict

TRIM_SHARE = 8  # trim once the links handed over since the last trim reach 1/8 of the cap


class BestNFirst(SoftFocus):
    """Soft focus's links, N URLs popped at a time, the frontier capped (see the module doc)."""

    batch_setting = "FOCUSED_BEST_N"

    def __init__(
        self,
        frontier: RedisFrontier,
        max_buffer: int = 256,
        stats: StatsCollector | None = None,
    ):
        if max_buffer < 1:
            raise ValueError(f"FOCUSED_MAX_BUFFER must be at least 1, got {max_buffer}")
        self.frontier = frontier
        self.max_buffer = max_buffer
        self.stats = stats
        self.trim_every = max(1, max_buffer // TRIM_SHARE)
        self.handed = 0  # links handed to the frontier since the last trim

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        return cls(
            frontier,
            crawler.settings.getint("FOCUSED_MAX_BUFFER"),
            crawler.stats,
        )

    def trim(self) -> int:
        """Drop the frontier's worst queued URLs beyond the cap; returns how many."""
        self.handed = 0
        dropped = self.frontier.drop_worst(self.max_buffer)
        if self.stats is not None:
            self.stats.inc_value("focused/best_n_first/trims")
            self.stats.inc_value("focused/best_n_first/dropped", dropped)
        return dropped

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        if self.handed >= self.trim_every:
            with suppress(FocusedError):  # reported by the frontier, and the crawl is stopping
                self.trim()
        links = super().links(page, verdict)
        self.handed += len(links)
        return links

    def close(self) -> None:
        """Trim once more, so the crawl ends within the cap (unless Redis is gone)."""
        if self.handed and not self.frontier.store.lost:
            self.trim()
