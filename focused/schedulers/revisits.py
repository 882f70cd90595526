"""Seed 000's maintenance mode, re-visiting known pages for new links.

With ``FOCUSED_REVISIT_SHARE`` above 0, after every ``FOCUSED_REVISIT_EVERY`` fetched pages
(crawl-wide; one process claims each round atomically) about that share of them is spent on
pages already fetched, queued again through the frontier (so politeness and leases hold) at
the top of their hosts' queues, best first by ``FOCUSED_REVISIT_ORDER``:

- ``relevance``: the relevant pages, by R; each is revisited once per cycle (``revisit``
  holds the pages not revisited yet in this cycle, ``revisit:next`` the others; a new cycle
  starts when the first is empty). On a cluster each shard keeps its own pages and cycles,
  and gives its share of a round (more when the shards before it had fewer), its best first;
- ``hub``: the best hubs of the distiller's last run (its ``hubs`` scores; each run refills
  them).

A revisited page that comes back with the text or ``Last-Modified`` it had is acknowledged as
``unchanged`` and not classified again; one that changed is classified again and its new links
are queued (``pipelines/duplicates.py``). Stats: ``focused/revisit/queued``,
``focused/revisit/unchanged``, ``focused/revisit/changed``.

The rounds run in a crawl from :class:`focused.extensions.maintenance.Maintenance`.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, cast

from focused.store import keys, scripts
from focused.store.frontier.records import page_urls
from focused.store.shards import fetched_per_shard

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore
    from focused.store.frontier.base import Frontier

ORDERS = ("relevance", "hub")


def _next_relevant(store: CrawlStore, shard: int, count: int) -> list[str]:
    """Up to ``count`` of one shard's relevant pages to revisit, best first."""
    revisit, later = store.key(keys.REVISIT, shard=shard), store.key(keys.REVISIT_NEXT, shard=shard)
    return store.client.eval(scripts.source("revisit_next"), 2, revisit, later, count)


def revisit_round(frontier: Frontier, order: str, count: int) -> int:
    """Queue up to ``count`` known pages again, best first by ``order``; returns how many."""
    store, client = frontier.store, frontier.store.client
    if order == "relevance":
        shards = len(store.shards)
        urls: list[str] = []
        for shard in range(shards):  # each shard its share, one script call each
            share = -(-(count - len(urls)) // (shards - shard))  # of what the others left
            if share:
                urls += store.retrying(partial(_next_relevant, store, shard, share))
    else:
        popped = cast(
            list[tuple[str, float]],
            store.retrying(lambda: client.zpopmax(store.key(keys.HUBS), count)),
        )
        orders = [member for member, _ in popped]
        urls = store.retrying(lambda: page_urls(client, store.crawl, orders))
    return frontier.requeue(urls)


def claim_round(frontier: Frontier, every: int) -> bool:
    """Whether this process claimed the next round: ``every`` pages were fetched (crawl-wide)
    since the last round of any process."""
    store = frontier.store
    client, key = store.client, store.key(keys.MAINTAIN)

    def claim() -> int:
        fetched = sum(fetched_per_shard(client, store.shards))
        return client.eval(scripts.source("revisit_claim"), 1, key, fetched, every)

    return bool(store.retrying(claim))
