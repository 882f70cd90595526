"""A crawl's ``scrapy`` hash: the Scrapy stats of every process of the crawl, added up
(:mod:`focused.extensions.stats` says how); ``focused status``, the dashboard and the exporter
read it (:mod:`focused.store.reads`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from focused.store import keys

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore

Value = str | int | float


class CrawlScrapyStats:
    """The crawl's added-up Scrapy stats, written through its store (with its retries; a call
    raises FocusedError once Redis is given up)."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.SCRAPY_STATS)
        self._flush = store.script("stats_flush")

    def add(
        self,
        sets: Mapping[str, Value],
        incs: Mapping[str, Value],
        maxes: Mapping[str, Value],
        mins: Mapping[str, Value],
    ) -> None:
        """Add one process's changes, in one atomic script call: values set (the last writer's
        stay), counters' increments (summed), maxima and minima (the largest and smallest
        stay)."""
        args: list[Value] = [len(sets), len(incs), len(maxes)]
        for changes in (sets, incs, maxes, mins):
            for name, value in changes.items():
                args += (name, value)
        self.store.retrying(lambda: self._flush(keys=[self.key], args=args))
