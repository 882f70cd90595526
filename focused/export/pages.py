"""A crawl's fetched pages as rows of its data set: what its WARC files' metadata records say of
each page, and for the pages they do not describe, what Redis keeps.

Redis has a ``url:`` record of every page the crawl fetched (URL, fetch order, R, category);
the WARC files have a ``metadata`` record of every page fetched while they were written
(:mod:`focused.extensions.warc`: the feed's fields, main text included, and where its response
record is). The rows come in two passes, each a stream: first the WARC files' pages, each
checked against Redis's record of its fetch order (one round trip per :data:`BATCH` pages; a
page of another run of the same crawl name, or of a crawl reset since, does not match and is
left out), then Redis's records of the pages not seen in the first pass, in fetch order. What
is kept between the passes is one bit per fetch order (:class:`Orders`): 125 KB for a million
pages. So rows are not in fetch order: ``order`` gives it.

Why metadata records in the WARC files rather than another store: Redis keeps a page in a
few dozen bytes, and its text there would multiply a crawl's memory; the WARC files are
already each page's durable, written-through record, and a ``metadata`` record concurrent to
a response is where WARC (and Heritrix) keeps what a crawler learnt of a page, so the files
stay one self-describing archive. Extracting the columns again from the responses instead
would miss the pages whose responses are not kept (most of them, by default) and could not
give the values the crawl computed (its R, its category, its near-copies).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from focused.store.frontier.records import recorded_verdict, url_record

if TYPE_CHECKING:
    from focused.store.reads import FetchedRecords, Reader

BATCH = 1024  # WARC pages checked against Redis in one round trip


class Orders:
    """A set of fetch orders (positive ints), a bit each."""

    def __init__(self) -> None:
        self.bits = bytearray()

    def add(self, order: int) -> None:
        byte = order >> 3
        if byte >= len(self.bits):
            self.bits.extend(bytes(max(byte + 1, 2 * len(self.bits)) - len(self.bits)))
        self.bits[byte] |= 1 << (order & 7)

    def __contains__(self, order: int) -> bool:
        byte = order >> 3
        return byte < len(self.bits) and bool(self.bits[byte] & (1 << (order & 7)))


class CrawlPages:
    """The rows of a crawl's fetched pages (module doc): iterate :meth:`rows`; then
    ``from_warc`` and ``from_redis`` say how many came from each."""

    def __init__(
        self,
        reader: Reader,
        crawl: str,
        fetched: FetchedRecords,
        warc_pages: Iterable[dict[str, Any]],
        *,
        relevant_only: bool = False,
    ):
        self.reader = reader
        self.crawl = crawl
        self.fetched = fetched
        self.warc_pages = warc_pages
        self.relevant_only = relevant_only
        self.seen = Orders()
        self.from_warc = 0
        self.from_redis = 0

    def rows(self) -> Iterator[dict[str, Any]]:
        for row in self._warc_rows():
            self.from_warc += 1
            yield row
        for row in self._redis_rows():
            self.from_redis += 1
            yield row

    def _warc_rows(self) -> Iterator[dict[str, Any]]:
        pages = (page for page in self.warc_pages if isinstance(page.get("order"), int))
        while batch := list(islice(pages, BATCH)):
            records = self.reader.url_records(self.crawl, [page["order"] for page in batch])
            for page, record in zip(batch, records, strict=True):
                order = page["order"]
                if record is None or order in self.seen or url_record(record)[0] != page["url"]:
                    continue
                self.seen.add(order)
                if page.get("relevant") or not self.relevant_only:
                    yield page

    def _redis_rows(self) -> Iterator[dict[str, Any]]:
        threshold = self.fetched.threshold
        for order, record in self.fetched.records:
            if order in self.seen:
                continue
            row = redis_row(order, record, None if threshold is None else float(threshold))
            if row["relevant"] or not self.relevant_only:
                yield row


def redis_row(order: int, record: str, threshold: float | None) -> dict[str, Any]:
    """The row of a page from its ``url:`` record: the feed's values of what Redis keeps (an
    unclassified page is not relevant), its host from its URL, nulls elsewhere."""
    url, relevance, category = url_record(record)
    relevant = recorded_verdict(record, threshold)
    return {
        "url": url,
        "order": order,
        "relevance": relevance,
        "relevant": relevant,
        "category": category or None,
        "host": urlsplit(url).hostname,
    }
