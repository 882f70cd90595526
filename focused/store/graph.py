"""The crawl graph in Redis, as the frontier's acknowledgement writes it and the distiller reads
it, and what is kept of it for the next run.

The acknowledgement of a classified page (``complete.lua``, its graph and list blocks) stores,
per shard, its URL record (``url:<n // 512>``: fetch order -> URL, R, category) and its links
to other servers (``graph:<n // 512>``: its fingerprint, PAGE_RECORD, then one EDGE_RECORD a
link: the target's host hash and fingerprint), and counts Badia et al. 2006's good hubs and sites
(``hubscore``, ``sites``, ``found``). :class:`GraphStore` reads those into plain Python data
(:class:`CrawlGraph`, lists of pairs) and writes the distiller's results back (``distill``,
``hubs``); the distiller (:mod:`focused.distill`) works on that data alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from focused.store import keys
from focused.store.crawl import no_such_crawl
from focused.store.frontier.records import PAGE_RECORD, page_urls, split_url, url_record
from focused.store.shards import add_up, fetched_per_shard, host_hash

if TYPE_CHECKING:
    from redis.typing import EncodableT

    from focused.store.crawl import CrawlStore
    from focused.store.lock import Lease
    from focused.store.periodic import PeriodicJob

__all__ = ["CrawlGraph", "GraphStore"]

T = TypeVar("T")

# The layout of EDGE_RECORD (``>IQ``), to read a page's links at once.
EDGE_DTYPE = np.dtype([("server", ">u4"), ("fp", ">u8")])


@dataclass
class CrawlGraph:
    """The crawl graph as read at one moment.

    Nodes ``0 .. n-1`` are the classified pages (with their URL, fetch order, R and server);
    nodes ``n ..`` are link targets not fetched (yet), known by fingerprint and server. Edges
    are the pages' links to other servers.
    """

    urls: list[str]  # page i's URL
    orders: np.ndarray  # page i's fetch order
    relevance: np.ndarray  # page i's R
    server: np.ndarray  # page i's server (host hash)
    src: np.ndarray  # edge sources (page indices)
    dst: np.ndarray  # edge targets: page indices, or n + index into ``targets``
    dst_server: np.ndarray  # edge targets' servers
    targets: np.ndarray  # fingerprints of the targets not fetched (nodes n ..)
    fetched: int  # the crawl's fetched count when the graph was read (all shards')

    @property
    def pages(self) -> int:
        return len(self.urls)


class GraphStore:
    """The crawl graph of one crawl, and the distiller's and the lists' keys, through the
    crawl's :class:`~focused.store.crawl.CrawlStore` (its retries)."""

    def __init__(self, store: CrawlStore):
        self.store = store

    def read(self) -> CrawlGraph:
        """The crawl graph as it is now (every shard's pages), in one pipelined round trip
        after reading the shards' fetched counts."""
        store = self.store
        fetched = store.retrying(lambda: fetched_per_shard(store._client, store.shards))

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = store._binary.pipeline(transaction=False)  # the records are binary
            for j, last in enumerate(fetched):
                for bucket in range(last // keys.URL_BUCKET + 1):
                    pipe.hgetall(store.key(keys.GRAPH, bucket, shard=j))
                    pipe.hgetall(store.key(keys.URLS, bucket, shard=j))
            return pipe.execute()

        replies = store.retrying(read)
        return _decode(replies[::2], replies[1::2], sum(fetched))

    def distiller_counts(self) -> tuple[int, int, float]:
        """(pages fetched crawl-wide, at the distiller's last run, unix time of that run;
        zeros before the first), in one round trip."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for j in range(len(store.shards)):  # each shard counts its own pages
                pipe.hget(store.key(keys.STATS, shard=j), "fetched")
            pipe.hmget(store.key(keys.DISTILL), "fetched", "time")
            return pipe.execute()

        *fetched, (last_fetched, last_time) = store.retrying(read)
        return sum(int(n or 0) for n in fetched), int(last_fetched or 0), float(last_time or 0)

    def record_distillation(
        self, record: Mapping[str, Any], hubs: Mapping[int, float], lease: Lease
    ) -> None:
        """Record a distiller run (``distill``: its figures, its run counted) and its best
        hubs' scores by fetch order (``hubs``, replacing the last run's), at once, only while
        ``lease`` (of ``distill:lock``) is the run's: a run paused past it would put an older
        graph's hubs over a newer run's (LockLost)."""
        store = self.store
        key, hubs_key = store.key(keys.DISTILL), store.key(keys.HUBS)
        writes: list[tuple[EncodableT, ...]] = [
            ("HSET", key, *(v for name, value in record.items() for v in (name, value))),
            ("HINCRBY", key, "runs", 1),
            ("DEL", hubs_key),
        ]
        if hubs:
            scores = (v for order, score in hubs.items() for v in (score, str(order)))
            writes.append(("ZADD", hubs_key, *scores))
        store.fenced(lease, writes)

    def distill_job(
        self, job: Callable[..., T | None], *, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as the crawl's distiller run, one process at a time under ``distill:lock``
        (:meth:`CrawlStore.periodic`)."""
        return self.store.periodic(
            "Distiller run", job, lock=keys.DISTILL_LOCK, lock_s=lock_s, **periodic
        )

    def recorded_politeness(self) -> tuple[float, int]:
        """(host delay, host concurrency) the crawl's processes recorded in its ``meta``: a
        re-boost from outside the crawl reschedules hosts by them. A FocusedError names the
        crawls this Redis has when it has not this one."""
        store = self.store
        if not store.retrying(lambda: store._client.exists(store.key(keys.STATS))):
            raise no_such_crawl(store._client, store.crawl)
        meta = store.retrying(lambda: store._client.hgetall(store.key(keys.META)))
        return float(meta.get("host_delay", 1.0)), int(meta.get("host_concurrency", 1))

    def hub_scores(self) -> list[tuple[int, float]]:
        """(fetch order, Badia et al. 2006's hub score) of the pages that reached the hub bar, every
        shard's."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):
                pipe.zrange(store.key(keys.HUB_SCORES, shard=shard), 0, -1, withscores=True)
            return pipe.execute()

        # fetch orders: disjoint between shards
        return [(int(order), score) for hubs in store.retrying(read) for order, score in hubs]

    def relevant_found(self, orders: Sequence[int]) -> list[int]:
        """Relevant pages reached by a link from each of these pages (by fetch order), added
        up over the shards they were fetched from."""
        if not orders:
            return []
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):
                pipe.hmget(store.key(keys.FOUND, shard=shard), [str(n) for n in orders])
            return pipe.execute()

        per_shard = store.retrying(read)
        return [sum(int(n or 0) for n in per_page) for per_page in zip(*per_shard, strict=True)]

    def relevant_per_site(self) -> dict[str, int]:
        """Relevant pages fetched from each site (origin), every shard's added up."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):
                pipe.hgetall(store.key(keys.SITES, shard=shard))
            return pipe.execute()

        return {site: int(n) for site, n in add_up(store.retrying(read)).items()}

    def page_urls(self, orders: Sequence[int]) -> list[str]:
        """URLs of fetched pages by fetch order (unknown ones left out)."""
        store = self.store
        return store.retrying(lambda: page_urls(store._client, store.crawl, orders))


def _decode(
    graph_records: Sequence[Mapping[bytes, bytes]],
    url_records: Sequence[Mapping[bytes, bytes]],
    fetched: int,
) -> CrawlGraph:
    """The crawl graph of the buckets' ``graph:`` and ``url:`` records (bucket by bucket)."""
    urls, orders, relevance, fps, chunks, counts = [], [], [], [], [], []
    for records, pages in zip(graph_records, url_records, strict=True):
        for order, record in records.items():
            url, r, _ = url_record(pages[order].decode())
            urls.append(url)
            orders.append(int(order))
            relevance.append(r)
            fps.append(PAGE_RECORD.unpack_from(record)[0])
            edges = np.frombuffer(record, EDGE_DTYPE, offset=PAGE_RECORD.size)
            chunks.append(edges)
            counts.append(len(edges))
    n = len(urls)
    page_fps = np.array(fps, dtype=np.uint64)
    edges = np.concatenate(chunks) if chunks else np.empty(0, EDGE_DTYPE)
    src = np.repeat(np.arange(n, dtype=np.int64), counts)
    dst = np.empty(len(edges), dtype=np.int64)
    # Targets that are fetched pages become page indices; the others get indices n.. by
    # fingerprint.
    sorted_pages = np.argsort(page_fps)
    target_fps = edges["fp"].astype(np.uint64)
    at = np.searchsorted(page_fps[sorted_pages], target_fps)
    at = np.minimum(at, n - 1)
    fetched_target = page_fps[sorted_pages][at] == target_fps
    dst[fetched_target] = sorted_pages[at[fetched_target]]
    targets, inverse = np.unique(target_fps[~fetched_target], return_inverse=True)
    dst[~fetched_target] = n + inverse
    return CrawlGraph(
        urls,
        np.array(orders, dtype=np.int64),
        np.array(relevance, dtype=np.float64),
        np.array([host_hash(split_url(url)[0]) for url in urls], dtype=np.uint32),
        src,
        dst,
        edges["server"].astype(np.uint32),
        targets,
        fetched,
    )
