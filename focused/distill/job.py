"""One distiller run: read the crawl graph, score hubs and authorities, re-boost, record.

Only one process of a crawl distils at a time: the run holds ``distill:lock``, a lease it
renews while it runs, so a holder that dies lets go of it within ``lock_s`` seconds. The lock,
and the periodic runs inside a crawl, are a :class:`~focused.store.periodic.PeriodicJob`'s
(:func:`distill_job`).
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from focused.distill.hits import Scores, weighted_hits
from focused.store.crawl import CrawlStore
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import fingerprint
from focused.store.graph import CrawlGraph, GraphStore
from focused.store.lock import LEASE_S
from focused.store.shards import host_hash

if TYPE_CHECKING:
    import redis

    from focused.store.lock import Lease
    from focused.store.periodic import PeriodicJob

KEEP_HUBS = 1000  # hub scores kept in Redis (``hubs``) by a run, for maintenance mode


@dataclass
class Distillation:
    """What one run found and did."""

    pages: int
    edges: int  # hub -> authority edges between servers
    authorities: int
    rho: float
    iterations: int
    hubs: list[tuple[str, float]] = field(default_factory=list)  # best first
    top_authorities: list[tuple[str, float]] = field(default_factory=list)
    neglected: int = 0  # unvisited neighbours of the top hubs found queued
    reboosted: int = 0  # of those, raised in the frontier
    seconds: float = 0.0


def crawl_frontier(client: redis.Redis, crawl: str) -> RedisFrontier:
    """The frontier of an existing crawl, with the politeness its crawlers recorded in ``meta``
    (a re-boost reschedules hosts by it)."""
    host_delay, host_concurrency = GraphStore(CrawlStore(client, crawl)).recorded_politeness()
    return RedisFrontier.for_crawl(
        client, crawl, host_delay=host_delay, host_concurrency=host_concurrency
    )


def score(graph: CrawlGraph, authority_share: float, top: int) -> tuple[Scores, Distillation]:
    """Weighted HITS over ``graph``, with the ``top`` hubs and authorities by URL."""
    scores = weighted_hits(graph, authority_share)

    def best(values: np.ndarray) -> list[tuple[str, float]]:
        ranked = np.argsort(-values, kind="stable")[:top]
        return [(graph.urls[i], float(values[i])) for i in ranked if values[i] > 0]

    return scores, Distillation(
        graph.pages,
        scores.edges,
        scores.authorities,
        scores.rho,
        scores.iterations,
        best(scores.hub),
        best(scores.authority),
    )


def neglected_neighbours(
    frontier: RedisFrontier, graph: CrawlGraph, hub: np.ndarray, top_hubs: int
) -> list[tuple[str, str, int]]:
    """The queued URLs (origin, member, packed order) that the best hubs link to.

    Targets are known by fingerprint and server; each server's queue is read and its URLs
    fingerprinted to find them, so the cost is the queue lengths of those servers.
    """
    best = np.argsort(-hub, kind="stable")[:top_hubs]
    best = best[hub[best] > 0]
    linked = np.isin(graph.src, best) & (graph.dst >= graph.pages)
    wanted: dict[int, set[int]] = defaultdict(set)
    for server, target in zip(graph.dst_server[linked], graph.dst[linked], strict=True):
        wanted[int(server)].add(int(graph.targets[target - graph.pages]))
    if not wanted:
        return []
    origins = [origin for origin in frontier.queued_hosts() if host_hash(origin) in wanted]
    return [
        (origin, member, packed)
        for origin, queue in zip(origins, frontier.host_queues(origins), strict=True)
        for member, packed, url in queue
        if fingerprint(url) in wanted[host_hash(origin)]
    ]


def distill(
    frontier: RedisFrontier,
    *,
    authority_share: float = 0.15,
    top_hubs: int = 10,
    boost: float | None = 1.0,
    top: int = 10,
    lease: Lease | None = None,
) -> Distillation:
    """Score the crawl graph; with ``boost``, raise the ``top_hubs`` best hubs' queued
    neighbours to it (none when ``top_hubs`` is 0).

    A run under the crawl's lock (``lease``: :func:`distill_job`) with ``boost`` is recorded
    in the crawl's ``distill`` hash, and its best hubs' scores in ``hubs``, only while the lease
    is its own (LockLost otherwise); ``focused hubs`` only reads. The boost is not fenced: a
    run paused past its lease raises the queued URLs that an older graph's best hubs link to,
    links still worth fetching, and each shard's queues are a slot of their own on a cluster,
    which one script cannot check the lock in.
    """
    started = time.perf_counter()
    store = GraphStore(frontier.store)
    graph = store.read()
    scores, result = score(graph, authority_share, top)
    if boost is not None:
        queued = neglected_neighbours(frontier, graph, scores.hub, top_hubs)
        result.neglected = len(queued)
        result.reboosted = frontier.raise_to(boost, queued)
    result.seconds = time.perf_counter() - started
    if boost is not None and lease is not None:
        record = {
            "fetched": graph.fetched,
            "time": time.time(),
            "seconds": round(result.seconds, 3),
            "pages": result.pages,
            "edges": result.edges,
            "authorities": result.authorities,
            "reboosted": result.reboosted,
            # the run's best hubs and authorities, [[url, score], ...] best first (for readers)
            "top_hubs": json.dumps([[url, round(s, 6)] for url, s in result.hubs]),
            "top_authorities": json.dumps([[u, round(s, 6)] for u, s in result.top_authorities]),
        }
        ranked = np.argsort(-scores.hub, kind="stable")[:KEEP_HUBS]
        hubs = {int(graph.orders[i]): float(scores.hub[i]) for i in ranked if scores.hub[i] > 0}
        store.record_distillation(record, hubs, lease)
    return result


def distill_job(
    frontier: RedisFrontier, lock_s: float, **periodic: Any
) -> PeriodicJob[Distillation]:
    """:func:`distill` as the crawl's job, one process at a time under ``distill:lock``;
    ``periodic``: when and how a crawl runs it (:class:`PeriodicJob`)."""
    return GraphStore(frontier.store).distill_job(distill, lock_s=lock_s, **periodic)


def distill_locked(
    frontier: RedisFrontier, lock_s: float = LEASE_S, **options: Any
) -> Distillation | None:
    """:func:`distill` under the crawl's lock; None when another process holds it."""
    return distill_job(frontier, lock_s).run(frontier, **options)
