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

# A band key's bytes after its band's number that name its bucket's hash (``near:b:<n>``): 2**18
# hashes, so that up to about 2**18 * 128 / 18 = 1.9 million pages a bucket's hash holds at most
# Redis's 128 fields of a listpack (hash-max-listpack-entries), where a field costs about 17
# bytes, not the 90 of a hashtable.
BUCKET_BITS = 18
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
        self.pages_key = store.key(keys.NEAR_PAGES)
        self._check = store.script("nearcopies")

    def _bucket(self, band: bytes) -> tuple[str, bytes]:
        """A band key's bucket hash and its field there: the band's number and the hash's
        bytes past the BUCKET_BITS that name the bucket."""
        head, rest = divmod(int.from_bytes(band[1:4], "big"), 1 << (24 - BUCKET_BITS))
        return self.store.key(keys.NEAR_BUCKETS, head), band[:1] + bytes([rest]) + band[4:]

    def check(
        self, url: str, signature: bytes, bands: Sequence[bytes], needed: int, cap: int = 0
    ) -> Checked:
        """Check a page against the index and add it unless it is a copy, its URL is indexed
        already or the index holds ``cap`` pages (0: no cap). ``signature`` is the page's packed
        signature, ``bands`` its band keys, ``needed`` how many of its 2-byte values must agree
        with an indexed page's for a copy."""
        buckets = [self._bucket(band) for band in bands]
        names = [self.pages_key, *(name for name, _ in buckets)]
        args: list[str | bytes | int] = [url, signature, needed, cap, *(f for _, f in buckets)]
        copy_of, state, indexed = self.store.retrying(lambda: self._check(keys=names, args=args))
        return Checked(copy_of, state, int(indexed))

    def indexed(self) -> int:
        """How many pages the index holds."""
        return int(self.store.retrying(lambda: self.store._client.hlen(self.pages_key)))

    def memory(self) -> int:
        """The bytes Redis uses for the index (``MEMORY USAGE`` of its keys, every field
        counted): a SCAN of its buckets, for measures."""

        def usage() -> int:
            client = self.store._client
            buckets = client.scan_iter(keys.pattern(self.store.prefix, keys.NEAR_BUCKETS), 1000)
            names = [self.pages_key, *buckets]
            return sum(client.memory_usage(key, samples=0) or 0 for key in names)

        return int(self.store.retrying(usage))
