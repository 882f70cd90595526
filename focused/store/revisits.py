"""What maintenance mode keeps in a crawl's Redis (:mod:`focused.schedulers.revisits` says
what it does): each shard's relevant pages to revisit in this cycle and the next (``revisit``,
``revisit:next``), the distiller's best hubs (``hubs``), and the fetched count at the last
round any process claimed (``maintain``). Calls go through the crawl's store, with its
retries, and raise FocusedError once Redis is given up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from focused.store import keys, replies, scripts
from focused.store.frontier.records import page_urls
from focused.store.shards import fetched_per_shard

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


def next_relevant(store: CrawlStore, shard: int, count: int) -> list[str]:
    """Up to ``count`` of one shard's relevant pages to revisit, best first (a new cycle starts
    when this one's are all taken): one script call."""
    revisit, later = store.key(keys.REVISIT, shard=shard), store.key(keys.REVISIT_NEXT, shard=shard)
    source = scripts.source("revisit_next")
    return store.retrying(lambda: store._client.eval(source, 2, revisit, later, count))


def pop_best_hubs(store: CrawlStore, count: int) -> list[str]:
    """The URLs of the ``count`` best hubs of the distiller's last run, taken out of its list."""
    popped = replies.scored(
        store.retrying(lambda: store._client.zpopmax(store.key(keys.HUBS), count))
    )
    orders = [member for member, _ in popped]
    return store.retrying(lambda: page_urls(store._client, store.crawl, orders))


def claim_round(store: CrawlStore, every: int) -> bool:
    """Whether this process claimed the next round: ``every`` pages were fetched (crawl-wide)
    since the last round of any process."""
    key, source = store.key(keys.MAINTAIN), scripts.source("revisit_claim")

    def claim() -> int:
        fetched = sum(fetched_per_shard(store._client, store.shards))
        return store._client.eval(source, 1, key, fetched, every)

    return bool(store.retrying(claim))
