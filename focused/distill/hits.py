"""Server-weighted HITS (Chakrabarti et al. 1999, §3.2), on scipy sparse matrices.

Differences from Kleinberg's HITS, all from the paper:

- authorities are only the pages with R above a bar ρ, chosen so that ``authority_share`` of
  the classified pages pass (10–20% in the paper; ties at the bar pass too); hubs are any
  page linking to one, not thresholded;
- only links between different servers count (the crawl graph holds no others);
- a server is one vote: edge (u, v) weighs R[u] / h0[u, v] when computing a[v], where h0 is the
  number of pages on u's server that link to v, and R[u] / a0[u, v] when computing h[u], where
  a0 is the number of pages on v's server that u links to.

Both score vectors are scaled to sum to one after each round, until they change by less than
``tol`` (L1) or after ``max_iter`` rounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from focused.store.graph import CrawlGraph


@dataclass
class Scores:
    hub: np.ndarray  # per page
    authority: np.ndarray  # per page; zero for pages below the bar
    rho: float  # the relevance bar of authorities
    authorities: int  # pages that passed it
    edges: int  # distinct hub -> authority edges used
    iterations: int


def _group_sizes(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per row: how many rows share its (a, b) pair (both non-negative, below 2^31)."""
    _, inverse, counts = np.unique(a << 31 | b, return_inverse=True, return_counts=True)
    return counts[inverse.reshape(-1)]


def weighted_hits(
    graph: CrawlGraph, authority_share: float = 0.15, max_iter: int = 100, tol: float = 1e-10
) -> Scores:
    n = graph.pages
    if n == 0:
        return Scores(np.zeros(0), np.zeros(0), math.inf, 0, 0, 0)
    ranked = np.sort(graph.relevance)[::-1]
    rho = float(ranked[max(1, math.ceil(authority_share * n)) - 1])
    authority = (graph.relevance >= rho) & (graph.relevance > 0)
    # Distinct edges; the server counts use all of u's links to v's server (fetched or not).
    nodes = n + len(graph.targets)
    edge = np.unique(graph.src * nodes + graph.dst)
    src, dst = edge // nodes, edge % nodes
    server = _servers(graph)
    h0 = _group_sizes(server[src], dst)  # pages on u's server linking to v
    a0 = _group_sizes(src, server[dst])  # pages on v's server that u links to
    keep = dst < n
    keep[keep] = authority[dst[keep]]
    src, dst, h0, a0 = src[keep], dst[keep], h0[keep], a0[keep]
    r = graph.relevance[src]
    to_authority = sparse.csr_matrix((r / h0, (dst, src)), shape=(n, n))
    to_hub = sparse.csr_matrix((r / a0, (src, dst)), shape=(n, n))
    hub = np.zeros(n)
    hub[np.unique(src)] = 1.0
    auth = np.zeros(n)
    rounds, change = 0, math.inf
    while rounds < max_iter and change >= tol:
        new_auth = _scaled(to_authority @ hub)
        new_hub = _scaled(to_hub @ new_auth)
        change = np.abs(new_auth - auth).sum() + np.abs(new_hub - hub).sum()
        auth, hub, rounds = new_auth, new_hub, rounds + 1
    return Scores(hub, auth, rho, int(authority.sum()), len(src), rounds)


def _servers(graph: CrawlGraph) -> np.ndarray:
    """Every node's server as a small integer (pages' own; targets' from edges into them)."""
    servers = np.empty(graph.pages + len(graph.targets), dtype=np.uint32)
    servers[graph.dst] = graph.dst_server
    servers[: graph.pages] = graph.server
    return np.unique(servers, return_inverse=True)[1].reshape(-1).astype(np.int64)


def _scaled(vector: np.ndarray) -> np.ndarray:
    total = vector.sum()
    return vector / total if total > 0 else vector
