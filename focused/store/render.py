"""The hosts whose pages need a browser, shared by every process of a crawl
(``FOCUSED_RENDER`` auto, :mod:`focused.render.pages`): ``render:seen`` counts per host the pages
that had little text until the browser rendered them, and a host that reaches the crawl's
threshold joins the set ``render:hosts``, whose pages every process renders from then on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from focused.store import keys

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


class RenderedHosts:
    """A crawl's hosts that need a browser; calls go through the crawl's store, with its
    retries, and raise FocusedError once Redis is given up."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.seen = store.key(keys.RENDER_SEEN)
        self.hosts = store.key(keys.RENDER_HOSTS)

    def rendered(self, host: str, threshold: int) -> bool:
        """Count a page of ``host`` that needed the browser; True when that made the host one
        whose pages go straight to it (``threshold`` such pages; 0: never)."""
        client = self.store._client
        count = self.store.retrying(lambda: client.hincrby(self.seen, host, 1))
        if not threshold or count < threshold:
            return False
        return bool(self.store.retrying(lambda: client.sadd(self.hosts, host)))

    def flagged(self) -> set[str]:
        """The hosts whose pages go straight to the browser."""
        members = self.store.retrying(lambda: self.store._client.smembers(self.hosts))
        return cast("set[str]", members)
