"""The seeds pushed into a crawl, running or not: its ``start_urls`` list, as scrapy-redis reads
its ``redis_key``. ``focused seed`` appends to it (:func:`push_seeds`); a crawl moves them into
its frontier (:class:`PushedSeeds`, :mod:`focused.extensions.seeds`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from focused.store import keys, replies

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


def push_seeds(store: CrawlStore, urls: list[str]) -> tuple[str, int]:
    """Append ``urls`` to the crawl's list: its key, and how many URLs now wait in it."""
    key = store.key(keys.START_URLS)
    return key, store.retrying(lambda: store._client.rpush(key, *urls))


class PushedSeeds:
    """The crawl's list of pushed seeds as a crawl reads it: the head of the list, trimmed only
    once moved into the frontier, by one process at a time (:meth:`moving`). Calls go through
    the crawl's store, with its retries."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.START_URLS)

    def waiting(self) -> int:
        """How many seeds wait in the list."""
        return self.store.retrying(lambda: self.store._client.llen(self.key))

    @contextmanager
    def moving(self, lock_s: float) -> Iterator[bool]:
        """Try to take the crawl's lock on moving the seeds for the block (a lease of
        ``lock_s`` seconds, renewed while it runs); yields whether this process holds it."""
        with self.store.held_lock(keys.START_URLS_LOCK, lock_s) as held:
            yield held

    def head(self, count: int) -> list[str]:
        """The first ``count`` seeds of the list (they stay in it)."""
        seeds = self.store.retrying(lambda: self.store._client.lrange(self.key, 0, count - 1))
        return replies.texts(seeds)

    def drop_head(self, count: int) -> None:
        """Remove the first ``count`` seeds, once moved."""
        self.store.retrying(lambda: self.store._client.ltrim(self.key, count, -1))
