"""Topic-sensitive PageRank: networkx's ``pagerank`` against the genetic strategy's own scipy
power iteration (:func:`focused.strategies.genetic.topic_pagerank`), on the same graph.

    .venv/bin/python benchmarks/pagerank.py                  # 10,000 and 100,000 edges
    .venv/bin/python benchmarks/pagerank.py --edges 1000000

Each graph has a tenth as many fetched pages as edges, with as many unfetched targets again
(the crawl's shape: every fetched page has about ten out-links, to fetched pages or not);
targets follow a Zipf-like popularity. Edges weigh their target's R (fetched) or estimate (not
fetched), the jump goes to fetched pages by R, as the strategy builds them. networkx's time
includes building the ``DiGraph`` from the edge arrays (the strategy holds arrays), the own
one building its CSR matrix. Printed: seconds of each (best of --repeat), their ratio and the
largest difference between the two results; ``(pagerank)`` is networkx's time without
building the graph.
"""

from __future__ import annotations

import argparse
import time

import networkx as nx
import numpy as np

from focused.strategies.genetic import BETA, topic_pagerank


def graph(edges: int, seed: int = 0) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(nodes, src, dst, weight, jump) of a random crawl-shaped graph."""
    rng = np.random.default_rng(seed)
    pages = max(edges // 10, 1)
    n = 2 * pages  # 0 .. pages-1 fetched, the others not
    popularity = 1.0 / rng.permutation(np.arange(1, n + 1)) ** 0.8
    src = rng.integers(0, pages, edges)
    dst = rng.choice(n, edges, p=popularity / popularity.sum())
    pairs = np.unique(src * n + dst)  # one edge per (page, target), as the edge log keeps
    src, dst = pairs // n, pairs % n
    relevance = np.concatenate([rng.beta(0.5, 1.5, pages), np.zeros(n - pages)])
    estimate = rng.random(len(dst))
    weight = np.where(dst < pages, relevance[dst], estimate)
    return n, src, dst, weight, relevance


def digraph(n, src, dst, weight) -> nx.DiGraph:
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(zip(src.tolist(), dst.tolist(), weight.tolist(), strict=True))
    return g


def networkx_pagerank(g: nx.DiGraph, jump: np.ndarray) -> np.ndarray:
    personalization = {i: float(r) for i, r in enumerate(jump) if r > 0}
    ranks = nx.pagerank(g, alpha=BETA, personalization=personalization, weight="weight")
    return np.array([ranks[i] for i in range(len(jump))])


def best(call, repeat: int) -> tuple[float, np.ndarray]:
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - started)
    return min(times), result


def compare(edges: int, repeat: int) -> None:
    """Time both on one graph and print a row."""
    n, src, dst, weight, jump = graph(edges)
    theirs_s, theirs = best(lambda: networkx_pagerank(digraph(n, src, dst, weight), jump), repeat)
    built = digraph(n, src, dst, weight)
    rank_s, _ = best(lambda: networkx_pagerank(built, jump), repeat)
    ours_s, ours = best(lambda: topic_pagerank(n, src, dst, weight, jump), repeat)
    diff = float(np.abs(theirs - ours).max())
    print(
        f"{len(src):>9,} {n:>8,} {theirs_s:>11.4f} {rank_s:>10.4f} {ours_s:>8.4f} "
        f"{theirs_s / ours_s:>6.1f}x {diff:>9.1e}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edges", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'edges':>9} {'nodes':>8} {'networkx s':>11} {'(pagerank)':>10} {'own s':>8} "
        f"{'ratio':>7} {'max diff':>9}"
    )
    for edges in args.edges:
        compare(edges, args.repeat)


if __name__ == "__main__":
    main()
