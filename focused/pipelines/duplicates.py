"""DuplicatesPipeline: seed 004's pre-processing skips exact duplicates before they are scored.

A fetched page is a duplicate when

- its text (title and body, :func:`~focused.relevance.preprocess.text_checksum`: case, layout
  and Unicode forms do not count) is that of another URL fetched before in this crawl, or
- its URL was fetched before in this crawl and came back with the same ``Last-Modified``
  (a lease that ran out while the first fetch was still being processed), or
- it is a *revisit* (maintenance mode, :mod:`focused.schedulers.revisits`) and came back with the
  text or the ``Last-Modified`` it had: ``bad = "unchanged"``, acknowledged as such, not
  classified again; a revisit that changed is classified again and its new links queued, or
- its URL is *known* from an earlier run of the crawl (``focused reset NAME --keep-known``)
  and came back unchanged: the same text or the same ``Last-Modified`` (seed 004: a search
  run regularly must skip what it already knows).

The same URL fetched again with no ``Last-Modified``, or a different one, is not a duplicate,
even with the same text: so a URL whose first fetch was never acknowledged (a killed crawler)
is classified when it comes back. The catch: with an unchanged ``Last-Modified`` it is a
duplicate then, and its links are not queued (the window is the time between this pipeline and
the frontier's acknowledgement of the first fetch).

A duplicate is marked ``bad = "duplicate"`` with the reason in its ``duplicate`` field (the
WARC writer keeps a URL that came back unchanged as a revisit record): the classifier skips
it, and the frontier acknowledges it with kind ``duplicate`` (counted as ``duplicate`` in the
crawl's Redis stats) and queues none of its links. Stats: ``focused/pages/duplicate``, and by
reason ``focused/duplicate/text``, ``focused/duplicate/last_modified`` and
``focused/duplicate/known``.

Redis (see :mod:`focused.store.keys`): ``checksums`` maps each text checksum to the fingerprint of
the first URL fetched with it, ``modified`` each URL fingerprint to its latest
``Last-Modified``, ``known`` each URL fingerprint of earlier runs to its checksum and
``Last-Modified``. One Lua script call per page checks and records them, atomically across
processes. ``FOCUSED_SKIP_DUPLICATES = False`` disables the pipeline.
"""

from __future__ import annotations

from email.utils import mktime_tz, parsedate_tz
from typing import TYPE_CHECKING, Any

from scrapy.exceptions import DropItem, NotConfigured

from focused.errors import FocusedError, exit_on_user_error
from focused.relevance.preprocess import text_checksum
from focused.schedulers.frontier import fingerprint
from focused.schedulers.scheduler import store_for
from focused.store import keys

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.store.crawl import CrawlStore

DUPLICATE = "duplicate"  # the item's ``bad`` reason, and the frontier's kind
UNCHANGED = "unchanged"  # the same for a revisit that found the page as it was


def last_modified_value(header: str) -> str:
    """A ``Last-Modified`` header as unix seconds, so spellings of one date compare equal;
    a header that is not an HTTP date is kept as it is (stripped)."""
    parsed = parsedate_tz(header)
    return str(mktime_tz(parsed)) if parsed else header.strip()


class DuplicatesPipeline:
    """Marks exact duplicates (see the module doc) ``bad = "duplicate"``; one round trip a page.

    Each Redis call goes through the crawl's store (``store.retrying``), so a lost connection is
    retried with backoff, then reported once and the crawl stops (``focused_redis_lost``). A page
    that could not be checked is dropped (DropItem) unacknowledged: its lease brings it back.
    """

    def __init__(self, store: CrawlStore, *, stats: StatsCollector):
        self.store = store
        self.stats = stats
        self.keys = [store.key(keys.CHECKSUMS), store.key(keys.MODIFIED), store.key(keys.KNOWN)]
        self._check = store.script("duplicates")

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Crawler) -> DuplicatesPipeline:
        if not crawler.settings.getbool("FOCUSED_SKIP_DUPLICATES"):
            raise NotConfigured("FOCUSED_SKIP_DUPLICATES is False")
        # The crawl's store: its retries and lost-connection report are one per crawl.
        return cls(store_for(crawler), stats=crawler.stats)

    def check(
        self, url: str, document: str, last_modified: str | None, revisit: bool = False
    ) -> str | None:
        """Record a fetched page; why it is a duplicate (``known``, ``text``,
        ``last_modified``) or None."""
        args = [
            text_checksum(document),
            fingerprint(url),
            last_modified_value(last_modified) if last_modified else "",
            "1" if revisit else "",
        ]
        return self.store.retrying(lambda: self._check(keys=self.keys, args=args))

    def process_item(self, item: Any) -> Any:
        if item["bad"]:
            return item
        document = f"{item.get('title') or ''}\n{item['text']}"
        try:
            why = self.check(
                item["url"], document, item.get("last_modified"), bool(item.get("revisit"))
            )
        except FocusedError as exc:  # Redis is gone: the lease will bring the URL back
            raise DropItem(f"not checked for duplicates: {exc}", log_level="DEBUG") from None
        if why == UNCHANGED:
            item["bad"] = UNCHANGED
            self.stats.inc_value("focused/revisit/unchanged")
        elif why:
            item["bad"], item["duplicate"] = DUPLICATE, why
            self.stats.inc_value(f"focused/pages/{DUPLICATE}")
            self.stats.inc_value(f"focused/duplicate/{why}")
        elif item.get("revisit"):
            self.stats.inc_value("focused/revisit/changed")
        return item
