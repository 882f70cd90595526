"""Chakrabarti et al. 1999's maintenance mode, re-visiting known pages for new links.

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

from typing import TYPE_CHECKING

from focused.store import revisits

if TYPE_CHECKING:
    from focused.store.frontier.base import Frontier

ORDERS = ("relevance", "hub")


def revisit_round(frontier: Frontier, order: str, count: int) -> int:
    """Queue up to ``count`` known pages again, best first by ``order``; returns how many."""
    store = frontier.store
    if order == "relevance":
        shards = len(store.shards)
        urls: list[str] = []
        for shard in range(shards):  # each shard its share, one script call each
            share = -(-(count - len(urls)) // (shards - shard))  # of what the others left
            if share:
                urls += revisits.next_relevant(store, shard, share)
    else:
        urls = revisits.pop_best_hubs(store, count)
    return frontier.requeue(urls)
