"""The robots.txt files a crawl keeps for its processes (``robots:<origin>``), so that each is
fetched once per crawl, not once per process (:mod:`focused.middlewares.robots` says what a kept
one holds). Each expires a while after it was kept, so that a long crawl fetches it again. A
host's is kept in its shard (:mod:`focused.store.shards`), beside its queue.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from focused.store import keys, replies

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


class KeptRobots:
    """A crawl's kept robots.txt files, by origin; calls go through the crawl's store, with its
    retries, and raise FocusedError once Redis is given up."""

    def __init__(self, store: CrawlStore):
        self.store = store

    def get(self, origin: str) -> bytes | None:
        """What was kept for ``origin``, if anything."""
        key = self.store.host_key(keys.ROBOTS, origin)
        return replies.blob(self.store.retrying(lambda: self.store._binary.get(key)))

    def keep(self, origin: str, kept: bytes, seconds: int) -> None:
        """Keep ``kept`` for ``origin`` for ``seconds``."""
        key = self.store.host_key(keys.ROBOTS, origin)
        self.store.retrying(lambda: self.store._binary.set(key, kept, ex=seconds))
