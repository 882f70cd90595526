"""Read the crawl graph of a crawl from Redis into arrays (one pass, pipelined).

Nodes ``0 .. n-1`` are the classified pages (with their URL, fetch order, R and server); nodes
``n ..`` are link targets not fetched (yet), known by fingerprint and server. Edges are the
pages' links to other servers, as stored by :meth:`RedisFrontier.complete`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from focused.store import keys
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import PAGE_RECORD, split_url, url_record
from focused.store.shards import fetched_per_shard, host_hash

EDGE_DTYPE = np.dtype([("server", ">u4"), ("fp", ">u8")])  # the layout of EDGE_RECORD


@dataclass
class CrawlGraph:
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


def read_graph(frontier: RedisFrontier) -> CrawlGraph:
    """The crawl graph of ``frontier``'s crawl as it is now (every shard's pages), read with
    its store's bytes-returning client (the records are binary)."""
    store = frontier.store
    raw, shards = store.binary, store.shards
    fetched = store.retrying(lambda: fetched_per_shard(store.client, shards))

    def read() -> list:  # a new pipeline per try: a failed execute empties it
        pipe = raw.pipeline(transaction=False)
        for j, last in enumerate(fetched):
            for bucket in range(last // keys.URL_BUCKET + 1):
                pipe.hgetall(store.key(keys.GRAPH, bucket, shard=j))
                pipe.hgetall(store.key(keys.URLS, bucket, shard=j))
        return pipe.execute()

    replies = store.retrying(read)
    urls, orders, relevance, fps, chunks, counts = [], [], [], [], [], []
    for records, pages in zip(replies[::2], replies[1::2], strict=True):
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
        sum(fetched),
    )
