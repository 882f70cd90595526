"""A crawl's near-copies index in Redis, shared by every process of the crawl: the LSH buckets
of the pages indexed (``near:buckets``) and their packed signatures and URLs (``near:pages``),
crawl-wide keys (a cluster keeps them in the crawl's first shard). The signatures, bands and
threshold arithmetic are :mod:`focused.relevance.nearcopies`'; the pipeline that checks pages
is :mod:`focused.pipelines.nearcopies`.

A page is checked and added in one script call (``nearcopies.lua``), atomic across processes:
of two near-copies checked at once by two processes, one is the original. Its own URL found
indexed (a page fetched again) is not a copy. Calls go through the crawl's store, with its
retries, and raise FocusedError once Redis is given up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from focused.store import keys

if TYPE_CHECKING:
    from collections.abc import Sequence

    from focused.store.crawl import CrawlStore

COPY = "copy"  # the page copies an indexed one: not added
KNOWN = "known"  # its URL is indexed already: not a copy, not added again
ADDED = "added"
FULL = "full"  # the index holds its cap of pages: checked, not added


class Checked(NamedTuple):
    """What one check did: the URL the page copies (``""`` for none), what became of the page
    (COPY, KNOWN, ADDED or FULL) and the pages indexed after it."""

    copy_of: str
    state: str
    indexed: int


class NearCopyIndex:
    """One crawl's near-copies index (the module says what it holds)."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.keys = [store.key(keys.NEAR_BUCKETS), store.key(keys.NEAR_PAGES)]
        self._check = store.script("nearcopies")

    def check(
        self, url: str, signature: bytes, bands: Sequence[bytes], needed: int, cap: int = 0
    ) -> Checked:
        """Check a page against the index and add it unless it is a copy, its URL is indexed
        already or the index holds ``cap`` pages (0: no cap). ``signature`` is the page's packed
        signature, ``bands`` its band keys, ``needed`` how many of its 2-byte values must agree
        with an indexed page's for a copy."""
        args: list[str | bytes | int] = [url, signature, needed, cap, *bands]
        copy_of, state, indexed = self.store.retrying(
            lambda: self._check(keys=self.keys, args=args)
        )
        return Checked(copy_of, state, int(indexed))

    def indexed(self) -> int:
        """How many pages the index holds."""
        return int(self.store.retrying(lambda: self.store._client.hlen(self.keys[1])))

    def memory(self) -> int:
        """The bytes Redis uses for the index (``MEMORY USAGE`` of its keys, every field
        counted)."""

        def usage() -> int:
            client = self.store._client
            return sum(client.memory_usage(key, samples=0) or 0 for key in self.keys)

        return int(self.store.retrying(usage))
