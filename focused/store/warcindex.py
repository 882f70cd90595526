"""A crawl's WARC index, the ``warc`` hash: URL fingerprint -> the response record written for
that URL (``"<record id> <WARC-Date> <payload digest>"``), for the revisit records of later
fetches of it (:mod:`focused.extensions.warc`). ``focused reset --keep-known`` keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from focused.store import keys, replies
from focused.store.frontier.records import fingerprint

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


class WarcIndex:
    """The response records a crawl wrote, by URL; calls go through the crawl's store, with its
    retries, and raise FocusedError once Redis is given up."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.WARC)

    def written(self, url: str) -> str | None:
        """What the index holds of the response record written for ``url``, if any."""
        field = str(fingerprint(url))
        return replies.text(self.store.retrying(lambda: self.store._client.hget(self.key, field)))

    def remember(self, url: str, record: str) -> None:
        """Record the response record just written for ``url``."""
        field = str(fingerprint(url))
        self.store.retrying(lambda: self.store._client.hset(self.key, field, record))
