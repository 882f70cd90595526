"""Badia et al. 2006's pre-processing: exact duplicates are told apart in the page's
acknowledgement.

A fetched page is a duplicate when

- its text (title and body, :func:`~focused.relevance.preprocess.text_checksum`: case, layout
  and Unicode forms do not count) is that of another URL fetched before in this crawl, or
- its URL was fetched before in this crawl and came back with the same ``Last-Modified``
  (a lease that ran out while the first fetch was still being processed), or
- it is a *revisit* (maintenance mode, :mod:`focused.schedulers.revisits`) and came back with the
  text or the ``Last-Modified`` it had: ``bad = "unchanged"``, not counted as classified; a
  revisit that changed is counted again and its new links queued, or
- its URL is *known* from an earlier run of the crawl (``focused reset NAME --keep-known``)
  and came back unchanged: the same text or the same ``Last-Modified`` (Badia et al. 2006: a search
  run regularly must skip what it already knows), or
- its main text nearly copies another page's (:mod:`focused.pipelines.nearcopies`, which sets
  its ``near_duplicate_of``): reason ``near``, unless it is an exact duplicate too.

The same URL fetched again with no ``Last-Modified``, or a different one, is not a duplicate,
even with the same text: so a URL whose first fetch was never acknowledged (a killed crawler)
is counted when it comes back.

The check is part of the page's acknowledgement (:meth:`RedisFrontier.complete_many
<focused.store.frontier.queue.RedisFrontier.complete_many>`, atomic across processes; on a
cluster a call to its text's shard first, then its verdict in its own shard's call): the
frontier pipeline sends each page's checksum and ``Last-Modified`` (:func:`duplicate_fields`)
with its batch, and a duplicate is acknowledged as such, counted as ``duplicate`` (or
``unchanged``) in the crawl's Redis stats, and none of its links are queued but a
near-copy's (they may differ from those of the page it copies). The pipeline then
marks the item (:func:`mark_duplicate`): ``bad = "duplicate"`` with the reason in its
``duplicate`` field (the WARC writer keeps a URL that came back unchanged as a revisit record),
and no relevance. Stats: ``focused/pages/duplicate``, and by reason ``focused/duplicate/text``,
``focused/duplicate/last_modified``, ``focused/duplicate/known`` and ``focused/duplicate/near``;
for revisits ``focused/revisit/unchanged`` and ``focused/revisit/changed``.

Redis (see :mod:`focused.store.keys`): ``checksums`` maps each text checksum to the fingerprint of
the first URL fetched with it, ``modified`` each URL fingerprint to its latest
``Last-Modified``, ``known`` each URL fingerprint of earlier runs to its checksum and
``Last-Modified``. ``FOCUSED_SKIP_DUPLICATES = False`` turns the check off.
"""

from __future__ import annotations

from email.utils import mktime_tz, parsedate_tz
from typing import TYPE_CHECKING

from focused.relevance.preprocess import text_checksum

if TYPE_CHECKING:
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page

DUPLICATE = "duplicate"  # the item's ``bad`` reason, and the frontier's kind
UNCHANGED = "unchanged"  # the same for a revisit that found the page as it was


def last_modified_value(header: str) -> str:
    """A ``Last-Modified`` header as unix seconds, so spellings of one date compare equal;
    a header that is not an HTTP date is kept as it is (stripped)."""
    parsed = parsedate_tz(header)
    return str(mktime_tz(parsed)) if parsed else header.strip()


def duplicate_fields(page: Page) -> tuple[str, str]:
    """(text checksum, Last-Modified as unix seconds or ``""``) of a page: what its duplicates
    check reads."""
    checksum = text_checksum(f"{page.title or ''}\n{page.text}")
    header = page.last_modified
    return checksum, last_modified_value(header) if header else ""


def mark_duplicate(page: Page, why: str, stats: StatsCollector) -> None:
    """Record a page's duplicates verdict (``why``, ``""`` for none) in the page and the
    stats."""
    if why == UNCHANGED:
        page.bad = UNCHANGED
        stats.inc_value("focused/revisit/unchanged")
    elif why:
        page.bad, page.duplicate = DUPLICATE, why
        stats.inc_value(f"focused/pages/{DUPLICATE}")
        stats.inc_value(f"focused/duplicate/{why}")
    elif page.revisit:
        stats.inc_value("focused/revisit/changed")
    if why:
        page.relevance, page.relevant, page.category = None, False, None
