"""The genetic algorithm of Zhang and Yuan 2012 over the shared frontier.

Every out-link enters the frontier scored by its **fitness** (§3.7), brought to [0, 1]::

    Fit = (est + R(parent) + k · R(anchor)) / (2 + k)

where ``est`` is the judge's estimate of the page-to-be (:class:`~focused.items.PageLink`),
R(parent) is the page's R and R(anchor) the R of the link's anchor text (the estimate when the
anchor was not scored). With the online link model on, the crawl's link policy blends fitness
with what it learned, as it does any strategy's priorities. The paper's k = 100
makes the anchor nearly all of it.

Every ``generation`` classified pages, crawl-wide, one process runs a **generation** (§3.8)
over the queued URLs (the population, read from every host queue: O(queued)):

- selection: the queued URLs whose fitness (their frontier score) is at least
  ``min_fitness``; visited and duplicate URLs never are in the frontier;
- crossover: the ``round(generation · crossover)`` selected URLs of highest importance, their
  topic-sensitive PageRank (§3.6) as nodes of the graph of fetched pages and their links;
- mutation: ``round(generation · mutation)`` URLs drawn at random (seeded by ``seed`` and the
  generation's number) from all the other queued URLs, below the threshold too, so that less
  relevant regions are still explored.

The paper's seed set of m URLs is split m·Pc + m·Pm with Pc + Pm = 1, so m is the generation's
size: the chosen URLs are what the crawl fetches next. They are raised (``raise_to``) into a
band of scores above any fitness: the j-th chosen (crossover in importance order, mutation
spread evenly among them) to 1 - j/65535, the frontier's score levels, while fitness enters the
frontier capped at 1 - chosen/65535. Between generations, and once the chosen are fetched, the
frontier pops by fitness.

Topic-sensitive PageRank (eq. 3-5, β = 0.85) needs every link, but the crawl graph of the
frontier keeps only links between servers and no estimates, so the strategy keeps its own
edge log: per classified page, ``genetic:edges:<n // 512>`` gets one appended record (its
node, R and its distinct out-links: target node and estimate), 12 bytes and 10 a link. Each
process reads only the records appended since its last generation.
"""

from __future__ import annotations

import hashlib
import logging
import struct
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import numpy as np
from scipy import sparse

from focused.store.frontier.base import Link
from focused.store.frontier.records import SCORE_LEVELS, split_url, unpack_score
from focused.store.lock import LEASE_S, Lease
from focused.store.strategy import GeneticStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page, PageLink
    from focused.store.frontier.queue import RedisFrontier
    from focused.store.periodic import PeriodicJob
    from focused.topic.judge import Verdict

logger = logging.getLogger(__name__)

BETA = 0.85  # the paper's β: the share of PageRank passed along links (networkx's alpha)
HOST_BATCH = 500  # host queues read per pipelined round trip
PAGE_HEAD = struct.Struct(">QHH")  # page node, R · 65535, number of links
EDGE = np.dtype([("fp", ">u8"), ("est", ">u2")])  # target node, estimate · 65535
MAX_LINKS = 65535


def node(url: str) -> int:
    """A URL's node in the edge log: 64 bits of BLAKE2b over its frontier form (``split_url``,
    as the host queues keep it). Not the frontier's canonical fingerprint, which costs four
    times as much (w3lib's canonicalisation): spellings of one URL that differ beyond what
    ``split_url`` evens out are separate nodes."""
    origin, rest = split_url(url)
    return int.from_bytes(hashlib.blake2b((origin + rest).encode(), digest_size=8).digest(), "big")


def level(value: float) -> int:
    """A value in [0, 1] as one of 65,536 levels (the edge log's precision)."""
    return round(min(1.0, max(0.0, float(value))) * SCORE_LEVELS)


def anchor_r(link: PageLink) -> float:
    """R of a link's anchor text, or its estimate where the anchor was not scored."""
    return link.estimate if link.anchor_relevance is None else link.anchor_relevance


def fitness(estimate: float, parent: float, anchor: float, k: float) -> float:
    """Zhang and Yuan 2012's Fit = est + R(parent) + k·R(anchor), divided by 2 + k to stay in [0,
    1]."""
    return (estimate + parent + k * anchor) / (2 + k)


def topic_pagerank(
    n: int,
    src: np.ndarray,
    dst: np.ndarray,
    weight: np.ndarray,
    jump: np.ndarray,
    alpha: float = BETA,
    max_iter: int = 100,
    tol: float = 1.0e-6,
) -> np.ndarray:
    """PageRank of nodes ``0 .. n-1`` with edge weights and a biased jump (eq. 3-5).

    A page passes ``alpha`` of its PageRank along its out-links in proportion to their
    ``weight`` (the target's topic relevance, eq. 4) and jumps to node j with probability
    ∝ ``jump[j]`` (eq. 5); nodes without weighted out-links jump the same way. Uniform jumps
    when ``jump`` is all zero. networkx's ``pagerank(G, alpha, personalization, weight=...)``
    computes the same (same start, update and stopping rule); this power iteration on a scipy
    CSR matrix is 30-60 times faster, 70-230 times with building networkx's graph
    (``benchmarks/pagerank.py``).
    """
    if n == 0:
        return np.zeros(0)
    p = np.asarray(jump, dtype=np.float64)
    p = p / p.sum() if p.sum() > 0 else np.full(n, 1.0 / n)
    a = sparse.csr_array((np.asarray(weight, dtype=np.float64), (src, dst)), shape=(n, n))
    out = np.asarray(a.sum(axis=1)).ravel()
    dangling = out <= 0
    scale = np.divide(1.0, out, out=np.zeros(n), where=~dangling)
    transition = (sparse.diags_array(scale) @ a).T.tocsr()  # x @ Q as Q.T @ x
    x = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        last = x
        x = alpha * (transition @ x + x[dangling].sum() * p) + (1 - alpha) * p
        if np.abs(x - last).sum() < n * tol:
            break
    return x


class EdgeLog:
    """One process's copy of the crawl's edge log, read incrementally from the crawl's
    :class:`GeneticStore`.

    Holds, per logged page record, its node and R, and per link the record it belongs to, the
    target's node and estimate. A page logged again (a revisit) keeps only its latest record.
    """

    def __init__(self, frontier: RedisFrontier):
        self.state = GeneticStore(frontier.store)
        self.bucket = 0  # the first bucket not read to its end
        self.offset = 0  # bytes of it read
        self.in_bucket = 0  # records of it read
        self.page_fp: list[np.ndarray] = []
        self.page_r: list[np.ndarray] = []
        self.edge_page: list[np.ndarray] = []
        self.edge_fp: list[np.ndarray] = []
        self.edge_est: list[np.ndarray] = []
        self.pages = 0

    def read(self) -> int:
        """Read the records appended since the last read; returns how many."""
        before = self.pages
        for data in self.state.edge_log(self.bucket, self.offset):
            self._parse(data)
            self.offset += len(data)
            if self.in_bucket < self.state.bucket_records:
                break  # the bucket being written; anything read after it is read again
            self.bucket, self.offset, self.in_bucket = self.bucket + 1, 0, 0
        return self.pages - before

    def _parse(self, data: bytes) -> None:
        fps, rs, sizes, chunks = [], [], [], []
        at = 0
        while at < len(data):
            fp, r, n = PAGE_HEAD.unpack_from(data, at)
            at += PAGE_HEAD.size
            fps.append(fp)
            rs.append(r)
            sizes.append(n)
            chunks.append(np.frombuffer(data, EDGE, count=n, offset=at))
            at += n * EDGE.itemsize
        if not fps:
            return
        edges = np.concatenate(chunks)
        self.page_fp.append(np.array(fps, dtype=np.uint64))
        self.page_r.append(np.array(rs, dtype=np.float64) / SCORE_LEVELS)
        self.edge_page.append(np.repeat(np.arange(self.pages, self.pages + len(fps)), sizes))
        self.edge_fp.append(edges["fp"].astype(np.uint64))
        self.edge_est.append(edges["est"].astype(np.float64) / SCORE_LEVELS)
        self.pages += len(fps)
        self.in_bucket += len(fps)

    def importance(self, alpha: float = BETA) -> tuple[np.ndarray, np.ndarray]:
        """(node ids, sorted; their topic-sensitive PageRank) over the log's graph.

        Fetched pages are jumped to in proportion to their R; an edge weighs its target's R
        when the target was fetched, else the link's estimate.
        """

        def joined(chunks: list[np.ndarray], dtype: Any) -> np.ndarray:
            if len(chunks) > 1:
                chunks[:] = [np.concatenate(chunks)]  # joined once, then grown
            return chunks[0] if chunks else np.zeros(0, dtype)

        page_fp = joined(self.page_fp, np.uint64)
        page_r = joined(self.page_r, np.float64)
        edge_page = joined(self.edge_page, np.int64)
        edge_fp = joined(self.edge_fp, np.uint64)
        edge_est = joined(self.edge_est, np.float64)
        # The latest record of each page.
        _, latest = np.unique(page_fp[::-1], return_index=True)
        keep = np.zeros(len(page_fp), dtype=bool)
        keep[len(page_fp) - 1 - latest] = True
        kept_edges = keep[edge_page]
        nodes = np.unique(np.concatenate([page_fp[keep], edge_fp[kept_edges]]))
        relevance = np.full(len(nodes), np.nan)
        relevance[np.searchsorted(nodes, page_fp[keep])] = page_r[keep]
        src = np.searchsorted(nodes, page_fp[edge_page[kept_edges]])
        dst = np.searchsorted(nodes, edge_fp[kept_edges])
        target = relevance[dst]
        weight = np.where(np.isnan(target), edge_est[kept_edges], target)
        jump = np.nan_to_num(relevance, nan=0.0)
        return nodes, topic_pagerank(len(nodes), src, dst, weight, jump, alpha)


@dataclass
class Generation:
    """What one generation found and did."""

    number: int
    population: int  # URLs queued
    selected: int  # of those, with fitness at least the threshold
    crossover: int  # chosen by importance among the selected
    mutation: int  # chosen at random among the others
    raised: int = 0  # chosen URLs moved up in the frontier
    seconds: float = 0.0


def queued_population(frontier: RedisFrontier) -> list[tuple[str, str, int, str]]:
    """(origin, member, packed order, URL) of every queued URL, hosts in name order (of every
    shard: a host's queue is in its shard)."""
    hosts = sorted(frontier.queued_hosts())
    population = []
    for start in range(0, len(hosts), HOST_BATCH):
        batch = hosts[start : start + HOST_BATCH]
        for origin, queue in zip(batch, frontier.host_queues(batch), strict=True):
            population += [(origin, member, packed, url) for member, packed, url in queue]
    return population


def chosen_counts(size: int, crossover: float, mutation: float) -> tuple[int, int]:
    """URLs a generation chooses by crossover and by mutation."""
    return round(size * crossover), round(size * mutation)


def interleave(first: list[Any], second: list[Any]) -> list[Any]:
    """Both lists in one, each spread evenly over it in its own order."""
    slots = [((i + 0.5) / len(first), 0, x) for i, x in enumerate(first)]
    slots += [((i + 0.5) / len(second), 1, x) for i, x in enumerate(second)]
    return [x for *_, x in sorted(slots, key=lambda slot: slot[:2])]


def evolve(
    frontier: RedisFrontier,
    log: EdgeLog,
    *,
    number: int,
    size: int = 100,
    crossover: float = 0.9,
    mutation: float = 0.1,
    min_fitness: float = 0.02,
    seed: int = 0,
) -> Generation:
    """Run generation ``number``: select, cross over, mutate and raise the chosen URLs."""
    started = time.perf_counter()
    log.read()
    nodes, pagerank = log.importance()
    population = queued_population(frontier)
    importance = np.zeros(len(population))
    if len(nodes):
        fps = np.array([node(url) for *_, url in population], dtype=np.uint64)
        at = np.minimum(np.searchsorted(nodes, fps), len(nodes) - 1)
        importance = np.where(nodes[at] == fps, pagerank[at], 0.0)
    fit = [unpack_score(packed)[1] for _, _, packed, _ in population]
    selected = [i for i, f in enumerate(fit) if f >= min_fitness]
    n_cross, n_mutate = chosen_counts(size, crossover, mutation)
    ranked = sorted(selected, key=lambda i: (-importance[i], -fit[i], population[i][3]))
    crossed = ranked[:n_cross]
    taken = set(crossed)
    rest = [i for i in range(len(population)) if i not in taken]
    rng = np.random.default_rng([seed, number])
    mutated = [rest[j] for j in rng.choice(len(rest), size=min(n_mutate, len(rest)), replace=False)]
    raised = 0
    for j, i in enumerate(interleave(crossed, mutated)):
        origin, member, packed, _ = population[i]
        raised += frontier.raise_to(1.0 - j / SCORE_LEVELS, [(origin, member, packed)])
    return Generation(
        number,
        len(population),
        len(selected),
        len(crossed),
        len(mutated),
        raised,
        time.perf_counter() - started,
    )


def evolve_due(
    frontier: RedisFrontier, log: EdgeLog, *, size: int, lease: Lease, **options: Any
) -> Generation | None:
    """:func:`evolve` when ``size`` pages were logged since the last generation of any
    process (read again under the lock), recorded in the crawl's :class:`GeneticStore`; None
    when not due."""
    counts = log.state.counts()
    if counts.pages - counts.last < size:
        return None
    result = evolve(frontier, log, number=counts.generations + 1, size=size, **options)
    record = {
        "last": counts.pages,
        "generations": result.number,
        "population": result.population,
        "selected": result.selected,
        "crossover": result.crossover,
        "mutation": result.mutation,
        "raised": result.raised,
        "seconds": round(result.seconds, 3),
    }
    log.state.record_generation(record, lease)
    return result


def generation_job(frontier: RedisFrontier, **periodic: Any) -> PeriodicJob[Generation]:
    """:func:`evolve_due` as the crawl's job, one process at a time under the generation lock;
    ``periodic``: when and how a crawl runs it (:class:`PeriodicJob`)."""
    return GeneticStore(frontier.store).generation_job(evolve_due, lock_s=LEASE_S, **periodic)


class GeneticStrategy:
    """Out-links scored by fitness; generations re-order the frontier (module docstring).

    Each classified page costs one more Redis round trip (its edge-log record); a process
    whose page completes a generation's worth runs the generation in a thread, one process of
    the crawl at a time (:func:`generation_job`). Stats: ``focused/genetic/generations``,
    ``.../crossover``, ``.../mutation``, ``.../raised`` (totals of this process's
    generations), ``.../selected``, ``.../population`` and ``.../seconds`` (its last
    generation), ``.../failed`` (generations that raised).
    """

    scores_links = True
    batch_setting = ""
    reads_context = False

    def __init__(
        self,
        frontier: RedisFrontier,
        stats: StatsCollector | None = None,
        *,
        k: float = 100.0,
        min_fitness: float = 0.02,
        generation: int = 100,
        crossover: float = 0.9,
        mutation: float = 0.1,
        seed: int = 0,
        worker: RedisFrontier | None = None,
    ):
        if k < 0 or not 0 <= min_fitness <= 1:
            raise ValueError(f"k must be >= 0 and min_fitness in [0, 1], got {k}, {min_fitness}")
        if not 1 <= generation <= 10_000:
            raise ValueError(f"the generation size must be 1..10000, got {generation}")
        if not (0 <= crossover <= 1 and 0 <= mutation <= 1 and crossover + mutation <= 1):
            raise ValueError(
                f"crossover and mutation must be shares summing to at most 1, "
                f"got {crossover}, {mutation}"
            )
        self.frontier = frontier
        self.stats = stats
        self.k = k
        self.min_fitness = min_fitness
        self.generation = generation
        self.crossover = crossover
        self.mutation = mutation
        self.seed = seed
        # The chosen URLs of a generation take the top score levels; fitness stays below them.
        self.ceiling = 1.0 - sum(chosen_counts(generation, crossover, mutation)) / SCORE_LEVELS
        self.worker = worker or frontier  # the frontier object the generation thread uses
        self.log = EdgeLog(self.worker)
        self.generations = generation_job(
            self.worker,
            every=generation,
            done=self.done,
            stats=stats,
            failures="focused/genetic/failed",
            log=logger,
        )
        self.state = GeneticStore(frontier.store)

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        s = crawler.settings
        # The generation thread gets its own frontier object without the crawl's callbacks,
        # which call into the reactor (as the distiller's): it reports by raising.
        worker = frontier.for_thread()
        return cls(
            frontier,
            crawler.stats,
            k=s.getfloat("FOCUSED_GENETIC_K"),
            min_fitness=s.getfloat("FOCUSED_GENETIC_MIN_FITNESS"),
            generation=s.getint("FOCUSED_GENETIC_GENERATION"),
            crossover=s.getfloat("FOCUSED_GENETIC_PC"),
            mutation=s.getfloat("FOCUSED_GENETIC_PM"),
            seed=s.getint("FOCUSED_GENETIC_SEED"),
            worker=worker,
        )

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        """The page's out-links scored by fitness (at most the ceiling, under the chosen
        band); the page goes into the edge log first, and a due generation starts."""
        self.record(page, verdict)
        depth = page.depth + 1
        parent = verdict.relevance
        return [
            Link(
                link.url,
                min(self.ceiling, fitness(link.estimate, parent, anchor_r(link), self.k)),
                depth,
                link.anchor,
            )
            for link in verdict.links
        ]

    def record(self, page: Page, verdict: Verdict) -> None:
        """Append the page's edge-log record; start a generation if one is due."""
        targets: dict[int, float] = {}
        for link in verdict.links:
            fp = node(link.url)
            targets[fp] = max(link.estimate, targets.get(fp, 0.0))
        edges = np.array(
            [(fp, level(e)) for fp, e in list(targets.items())[:MAX_LINKS]], dtype=EDGE
        )
        head = PAGE_HEAD.pack(node(page.url), level(verdict.relevance), len(edges))
        logged, last = self.state.log_page(head + edges.tobytes())
        # In a thread when due: a generation reads every host queue, too long for the reactor.
        self.generations.offer(
            logged,
            last,
            self.worker,
            self.log,
            size=self.generation,
            crossover=self.crossover,
            mutation=self.mutation,
            min_fitness=self.min_fitness,
            seed=self.seed,
        )

    def close(self) -> None:
        """Nothing to finish: a generation under way ends with its thread."""

    def done(self, result: Generation | None) -> None:
        if result is None or self.stats is None:
            return
        for name in ("crossover", "mutation", "raised"):
            self.stats.inc_value(f"focused/genetic/{name}", getattr(result, name))
        self.stats.inc_value("focused/genetic/generations")
        self.stats.set_value("focused/genetic/selected", result.selected)
        self.stats.set_value("focused/genetic/population", result.population)
        self.stats.set_value("focused/genetic/seconds", round(result.seconds, 3))
        logger.info(
            "Genetic generation %(number)d: %(selected)d of %(population)d queued URLs selected, "
            "%(crossover)d by crossover and %(mutation)d by mutation raised (%(raised)d moved) "
            "in %(seconds).2f s",
            vars(result),
        )
