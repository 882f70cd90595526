"""The seeds pushed into a crawl, running or not: its ``start_urls`` list, as scrapy-redis reads
its ``redis_key``. ``focused seed`` appends to it (:func:`push_seeds`); a crawl moves them into
its frontier (:class:`PushedSeeds`, :mod:`focused.extensions.seeds`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, TypeVar

from focused.store import keys, replies

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore

T = TypeVar("T")


def push_seeds(store: CrawlStore, urls: list[str]) -> tuple[str, int]:
    """Append ``urls`` to the crawl's list: its key, and how many URLs now wait in it."""
    key = store.key(keys.START_URLS)
    return key, store.retrying(lambda: store._client.rpush(key, *urls))


class PushedSeeds:
    """The crawl's list of pushed seeds as a crawl reads it: the head of the list, trimmed only
    once moved into the frontier, by one process at a time (:meth:`move`). Calls go through
    the crawl's store, with its retries."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.START_URLS)

    def waiting(self) -> int:
        """How many seeds wait in the list."""
        return self.store.retrying(lambda: self.store._client.llen(self.key))

    def move(self, count: int, lock_s: float, push: Callable[[list[str]], T]) -> Moved[T] | None:
        """Move the first ``count`` seeds under the crawl's lock on moving them (a lease of
        ``lock_s`` seconds, renewed while it runs): read them, ``push`` them (into the
        frontier), then trim them from the list. None when another process holds the lock.

        The trim is fenced (:func:`~focused.store.lock.fenced`): a process paused past its
        lease, whose seeds another process moved meanwhile, would trim as many seeds pushed
        since, never moved. It raises LockLost instead and trims nothing; what it pushed was
        the head the other process moved, which the frontier had seen already.
        """
        with self.store.held_lock(keys.START_URLS_LOCK, lock_s) as lease:
            if lease is None:
                return None
            urls = replies.texts(
                self.store.retrying(lambda: self.store._client.lrange(self.key, 0, count - 1))
            )
            pushed = push(urls)
            self.store.fenced(lease, [("LTRIM", self.key, len(urls), -1)])
            return Moved(urls, pushed)


@dataclass(frozen=True)
class Moved(Generic[T]):
    """Seeds moved: the URLs read from the list, and what pushing them returned."""

    urls: list[str]
    pushed: T
