"""Distiller figures: one run over a crawl graph of about 1M links between servers, against
networkx's own (unweighted) HITS on the same edges, and what the graph costs in Redis and in
each page's acknowledgement.

    .venv/bin/python benchmarks/distill.py                    # 40,000 pages x 25 links = 1M
    .venv/bin/python benchmarks/distill.py --pages 4000       # a quick look

On a fresh redis-server (or FOCUSED_REDIS_URL): --pages classified pages on --hosts hosts, each
with --links links to pages on other hosts, whose targets follow a Zipf-like popularity (in
random order) over the fetched pages and four times as many pages not fetched; those are queued
in the frontier, so the re-boost searches real host queues. The graph records are written in the
frontier's own format (``EDGE_RECORD``), pipelined. Printed: Redis bytes per link; the
distiller's stages (read, HITS, re-boost) and its whole run; networkx's ``hits`` on a
``DiGraph`` of the same edges, the graph's building and the ``hits`` call timed apart, and the
ratios (graph included, and ``hits`` alone); and the time of
``complete`` with 25 links on --ack-pages pages with the crawl graph on and off.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import networkx as nx
import numpy as np
import redis
from common import DEFAULT_WORK, redis_server

from focused.distill.hits import weighted_hits
from focused.distill.job import distill, neglected_neighbours
from focused.store import keys
from focused.store.admin import reset_crawl
from focused.store.client import binary_client
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import EDGE_RECORD, PAGE_RECORD, fingerprint, split_url
from focused.store.graph import GraphStore
from focused.store.shards import host_hash

CRAWL = "bench-distill"


def url(i: int, hosts: int) -> str:
    return f"http://www.host{i % hosts:05d}.wiki.test/Article_number_{i:09d}_x"


def build(client: redis.Redis, args: argparse.Namespace) -> tuple[RedisFrontier, np.ndarray]:
    """Write the crawl graph and queue the pages not fetched; returns the edge list."""
    frontier = RedisFrontier.for_crawl(client, CRAWL, host_delay=0.0, host_concurrency=100)
    rng = np.random.default_rng(0)
    n, hosts = args.pages, args.hosts
    nodes = 5 * n  # 0..n-1 fetched, n.. not fetched
    urls = [url(i, hosts) for i in range(nodes)]
    fps = [fingerprint(u) for u in urls]
    relevance = rng.beta(0.5, 1.5, n)
    popularity = 1.0 / rng.permutation(np.arange(1, nodes + 1)) ** 0.8  # fetched or not
    popularity /= popularity.sum()
    edges = []
    raw = binary_client(client)
    before = client.info("memory")["used_memory"]
    for start in range(0, n, 1000):
        pipe = raw.pipeline(transaction=False)
        for i in range(start, min(n, start + 1000)):
            targets = rng.choice(nodes, args.links * 2, p=popularity)
            targets = np.unique(targets[targets % hosts != i % hosts])[: args.links]
            record = PAGE_RECORD.pack(fps[i]) + b"".join(
                EDGE_RECORD.pack(host_hash(split_url(urls[t])[0]), fps[t]) for t in targets
            )
            order = i + 1
            bucket = order // keys.URL_BUCKET
            pipe.hset(f"{frontier.store.prefix}{keys.GRAPH}{bucket}", order, record)
            page = f"{urls[i]}\t{relevance[i]}\tT"
            pipe.hset(f"{frontier.store.prefix}{keys.URLS}{bucket}", order, page)
            edges += [(i, int(t)) for t in targets]
        pipe.execute()
    graph_bytes = client.info("memory")["used_memory"] - before
    client.hset(frontier.store.prefix + keys.STATS, "fetched", n)
    for start in range(n, nodes, 10_000):
        frontier.push_many(Link(urls[t], 0.1) for t in range(start, min(nodes, start + 10_000)))
    edge_list = np.array(edges)
    print(
        f"graph: {n:,} pages on {hosts:,} hosts, {len(edge_list):,} links between servers, "
        f"{nodes - n:,} targets queued; Redis {graph_bytes / len(edge_list):.1f} B per link "
        f"(graph and page records)"
    )
    return frontier, edge_list


def timed(what: str, call):  # noqa: ANN001, ANN201 - a benchmark helper
    started = time.perf_counter()
    out = call()
    seconds = time.perf_counter() - started
    print(f"  {what:<44} {seconds:7.2f} s")
    return out, seconds


def ack_cost(client: redis.Redis, pages: int, graph: bool) -> float:
    """Seconds per ``complete`` with 25 new out-links."""
    name = f"{CRAWL}-ack-{graph}"
    frontier = RedisFrontier.for_crawl(
        client, name, host_delay=0.0, host_concurrency=100, graph=graph
    )
    frontier.push_many(Link(url(i, 400), 0.5) for i in range(pages))
    leased = []
    while len(leased) < pages:
        leased += frontier.pop_ready(100).leased
    started = time.perf_counter()
    for k, item in enumerate(leased):
        links = [Link(url(10_000_000 + k * 25 + j, 397), 0.3) for j in range(25)]
        frontier.complete(item.lease, item.url, "page", 0.5, False, links, "T")
    seconds = (time.perf_counter() - started) / pages
    reset_crawl(client, name)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=40_000)
    parser.add_argument("--links", type=int, default=25, help="links between servers a page")
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--ack-pages", type=int, default=2_000)
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args()
    with redis_server(args.work / "distill-redis") as redis_url:
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        reset_crawl(client, CRAWL)
        frontier, edges = build(client, args)
        print("distiller stages:")
        graph_store = GraphStore(frontier.store)
        graph, _ = timed("read the crawl graph from Redis", graph_store.read)
        scores, hits_s = timed("weighted HITS (scipy sparse)", lambda: weighted_hits(graph))
        found, _ = timed(
            "find the top 10 hubs' queued neighbours",
            lambda: neglected_neighbours(frontier, graph, scores.hub, 10),
        )
        result, total_s = timed("whole run (focused distill)", lambda: distill(frontier))
        print(
            f"  {scores.iterations} rounds, {scores.authorities:,} authorities, "
            f"{scores.edges:,} hub -> authority links; re-boosted {result.reboosted} of "
            f"{len(found)} queued neighbours"
        )
        print("baseline, networkx on the same links:")

        def networkx_graph() -> nx.DiGraph:
            g = nx.DiGraph()
            g.add_edges_from(map(tuple, edges))
            return g

        g, build_s = timed("nx.DiGraph of the links", networkx_graph)
        _, nx_hits_s = timed(
            "nx.hits on it (unweighted)", lambda: nx.hits(g, max_iter=100, tol=1e-8)
        )
        nx_s = build_s + nx_hits_s
        print(
            f"  weighted HITS is {nx_s / hits_s:.1f}x faster than networkx's HITS (graph"
            f" included), {nx_hits_s / hits_s:.1f}x than nx.hits alone"
        )
        print(f"  the whole run takes {total_s / nx_s:.2f}x networkx's HITS alone")
        on = ack_cost(client, args.ack_pages, True)
        off = ack_cost(client, args.ack_pages, False)
        print(
            f"complete() with 25 links: {on * 1000:.2f} ms with the crawl graph, "
            f"{off * 1000:.2f} ms without ({on / off:.2f}x)"
        )
        reset_crawl(client, CRAWL)


if __name__ == "__main__":
    main()
