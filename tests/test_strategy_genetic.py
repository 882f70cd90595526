"""Seed 001's genetic strategy: fitness, topic-sensitive PageRank, generations on a real Redis
frontier, and a two-process crawl."""

from __future__ import annotations

import re

import networkx as nx
import numpy as np
import pytest

from focused.items import Page, PageLink
from focused.store import keys
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import SCORE_LEVELS
from focused.strategies.genetic import (
    EdgeLog,
    GeneticStrategy,
    evolve,
    generation_job,
    node,
    topic_pagerank,
)
from focused.topic.judge import Verdict, link_estimate


@pytest.fixture
def frontier(redis_client, crawl_name) -> RedisFrontier:
    return RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0.0, host_concurrency=100)


def page(
    url: str,
    relevance: float,
    links: list[tuple[str, float | None]],
    depth: int = 0,
    link_score: str = "anchor",
    estimates: list[float] | None = None,
) -> tuple[Page, Verdict]:
    """A judged page and its verdict: links with their anchor's R (None: not scored) and the
    estimate the judge makes of them under ``link_score`` (or ``estimates``)."""
    anchor_r = [r if link_score != "content" else None for _, r in links]
    if estimates is None:
        estimates = [link_estimate(link_score, relevance, r) for r in anchor_r]
    scored = [
        PageLink(target, f"anchor {i}", "", r, e)
        for i, ((target, _), r, e) in enumerate(zip(links, anchor_r, estimates, strict=True))
    ]
    item = Page(url, 200, 0.0, depth=depth, links=[PageLink(k.url, k.anchor) for k in scored])
    return item, Verdict(relevance, relevance >= 0.5, None, relevance, scored)


def dense_pagerank(n, edges, jump, alpha=0.85):
    """PageRank by solving x = alpha·(x·Q + dangling mass·p) + (1 - alpha)·p exactly."""
    p = np.asarray(jump, dtype=float) / sum(jump)
    q = np.zeros((n, n))
    for i, j, w in edges:
        q[i, j] += w
    out = q.sum(axis=1)
    q[out > 0] /= out[out > 0, None]
    q[out == 0] = p  # a node without weighted out-links jumps by p
    g = alpha * q + (1 - alpha) * np.outer(np.ones(n), p)
    # x (G - I) = 0 with sum(x) = 1
    a = np.vstack([(g - np.eye(n)).T, np.ones(n)])
    return np.linalg.lstsq(a, np.r_[np.zeros(n), 1.0], rcond=None)[0]


def test_links_are_scored_by_fitness(frontier):
    strategy = GeneticStrategy(frontier, generation=100)
    links = [("http://a.test/x", 0.9), ("http://b.test/y", None), ("http://b.test/z", 0.0)]
    p = page("http://a.test/p", 0.6, links)
    scores = [round(link.score, 6) for link in strategy.links(*p)]
    # (est + parent + 100 anchor) / 102, est = the anchor's R (the parent's without one)
    assert scores == [
        round((0.9 + 0.6 + 90) / 102, 6),
        round((0.6 + 0.6 + 60) / 102, 6),
        round(0.6 / 102, 6),
    ]
    # k = 0: the mean of est and parent; link score "content": est = parent's R
    assert strategy.links(*p)[0].depth == 1
    flat = GeneticStrategy(frontier, k=0.0)
    content = page("http://a.test/p", 0.6, links, link_score="content")
    assert [round(link.score, 6) for link in flat.links(*content)] == [0.6] * 3
    # A perfect link stays below the band a generation raises its chosen URLs into.
    top = strategy.links(*page("http://a.test/q", 1.0, [("http://a.test/t", 1.0)]))
    assert top[0].score == pytest.approx(1 - 100 / SCORE_LEVELS) and top[0].score < 1


def test_topic_pagerank_matches_a_hand_computed_result():
    # A (fetched, R 1) links to B and C (not fetched), weighted by their estimates 0.9 and
    # 0.1; the jump goes to A alone. x_A = 1 / (1 + alpha), x_B = 0.9 alpha x_A, x_C = 0.1 ...
    x = topic_pagerank(3, np.array([0, 0]), np.array([1, 2]), np.array([0.9, 0.1]), [1, 0, 0])
    a = 1 / 1.85
    assert x == pytest.approx([a, 0.85 * 0.9 * a, 0.85 * 0.1 * a], abs=1e-6)
    # Without links, the jump alone: biased to the relevant page.
    assert topic_pagerank(2, np.zeros(0, int), np.zeros(0, int), np.zeros(0), [0.75, 0.25]) == (
        pytest.approx([0.75, 0.25], abs=1e-6)
    )


def test_topic_pagerank_agrees_with_networkx_and_an_exact_solution():
    rng = np.random.default_rng(3)
    n = 30
    pairs = {(int(i), int(j)) for i, j in rng.integers(0, n, (120, 2))}
    edges = [(i, j, float(rng.random())) for i, j in sorted(pairs)]
    jump = np.where(rng.random(n) < 0.5, rng.random(n), 0.0)  # only some pages are relevant
    src, dst, w = (np.array(column) for column in zip(*edges, strict=True))
    ours = topic_pagerank(n, src, dst, w, jump)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_weighted_edges_from(edges)
    personalization = {i: float(r) for i, r in enumerate(jump) if r > 0}
    theirs = nx.pagerank(g, alpha=0.85, personalization=personalization, weight="weight")
    assert ours == pytest.approx([theirs[i] for i in range(n)], abs=1e-6)
    assert ours == pytest.approx(dense_pagerank(n, edges, jump), abs=1e-5)
    # The jump is biased to relevant pages: a page nobody links to gets rank only through it.
    uniform = topic_pagerank(n, src, dst, w, np.ones(n))
    orphans = [j for j in range(n) if j not in set(dst.tolist())]
    assert orphans
    for j in orphans:
        assert ours[j] == pytest.approx(0.15 * jump[j] / jump.sum(), abs=1e-6)
        assert uniform[j] == pytest.approx(0.15 / n, abs=1e-6)


def test_importance_weighs_fetched_targets_by_their_r(frontier):
    strategy = GeneticStrategy(frontier)
    a, b, c = "http://a.test/A", "http://b.test/B", "http://c.test/C"
    strategy.links(*page(a, 1.0, [(b, 0.9), (c, 0.1), (b, 0.9)]))  # B twice: one edge
    log = EdgeLog(frontier)
    assert log.read() == 1
    nodes, ranks = log.importance()
    rank = dict(zip(nodes.tolist(), ranks, strict=True))
    expected = dense_pagerank(3, [(0, 1, 0.9), (0, 2, 0.1)], [1, 0, 0])
    assert [rank[node(u)] for u in (a, b, c)] == pytest.approx(expected, abs=1e-5)
    # B is fetched (R 0.3): A's edge to it now weighs 0.3, not its estimate; B is jumped to.
    strategy.links(*page(b, 0.3, []))
    assert log.read() == 1
    nodes, ranks = log.importance()
    rank = dict(zip(nodes.tolist(), ranks, strict=True))
    expected = dense_pagerank(3, [(0, 1, 0.3), (0, 2, 0.1)], [1, 0.3, 0])
    assert [rank[node(u)] for u in (a, b, c)] == pytest.approx(expected, abs=1e-5)


def test_the_edge_log_is_read_incrementally_across_buckets(frontier):
    strategy = GeneticStrategy(frontier, generation=10_000)
    pages = keys.URL_BUCKET + 88
    early = EdgeLog(frontier)
    for i in range(pages):
        strategy.links(*page(f"http://h{i % 7}.test/{i}", (i % 10) / 10, [("http://x.test/", 0.5)]))
        if i in (10, keys.URL_BUCKET - 1, keys.URL_BUCKET + 3):
            early.read()
    early.read()
    late = EdgeLog(frontier)  # a process that starts now reads the whole log at once
    assert late.read() == early.pages == pages
    for one, two in zip(early.importance(), late.importance(), strict=True):
        assert np.array_equal(one, two)
    size = sum(
        frontier.store._client.strlen(frontier.store.key(keys.GENETIC_EDGES, b)) for b in range(2)
    )
    assert size == pages * (12 + 10)  # 12 bytes a page, 10 a link


def population(frontier, crawl_name):
    """Queue 20 URLs on two hosts: u0..u11 with fitness 0.5, u12..u19 with fitness 0.1; the
    fetched page P links to all of them, with estimates that make importance rise with i."""
    urls = [f"http://h{i % 2}.test/u{i}" for i in range(20)]
    frontier.push_many(Link(u, 0.5 if i < 12 else 0.1) for i, u in enumerate(urls))
    strategy = GeneticStrategy(frontier)
    estimates = [(i + 1) / 20 for i in range(20)]
    strategy.record(*page("http://p.test/P", 1.0, [(u, None) for u in urls], estimates=estimates))
    return urls


def queued_scores(frontier) -> dict[str, float]:
    from focused.store.frontier.records import unpack_score

    return {
        url: unpack_score(packed)[1]
        for origin in frontier.queued_hosts()
        for _, packed, url in frontier.host_queue(origin)
    }


def test_a_generation_raises_exactly_the_chosen_urls(frontier, crawl_name):
    urls = population(frontier, crawl_name)
    options = {"size": 10, "crossover": 0.8, "mutation": 0.2, "min_fitness": 0.3, "seed": 7}
    result = evolve(frontier, EdgeLog(frontier), number=1, **options)
    assert (result.population, result.selected, result.crossover, result.mutation) == (20, 12, 8, 2)
    scores = queued_scores(frontier)
    cap = 1 - 10 / SCORE_LEVELS  # fitness never reaches the band of the chosen
    chosen = {u for u, s in scores.items() if s > cap}
    assert len(chosen) == result.raised == 10
    # Crossover: the 8 selected URLs of highest importance (u4..u11), not u12..u19, which
    # are more important but under the fitness threshold; fetched in importance order.
    crossed = urls[4:12]
    assert set(crossed) <= chosen
    ranked = [scores[u] for u in reversed(crossed)]
    assert ranked == sorted(ranked, reverse=True) and len(set(ranked)) == 8
    # Mutation: two of the other queued URLs, any fitness, drawn with the seed.
    mutated = chosen - set(crossed)
    assert len(mutated) == 2 and mutated <= set(urls) - set(crossed)
    # The same seed and generation number draw the same URLs in another crawl.
    again = RedisFrontier.for_crawl(frontier.store._client, crawl_name + "-again", host_delay=0.0)
    population(again, crawl_name)
    evolve(again, EdgeLog(again), number=1, **options)
    assert {u for u, s in queued_scores(again).items() if s > cap} == chosen


def test_generations_run_when_due_one_process_at_a_time(frontier, crawl_name):
    population(frontier, crawl_name)  # one page logged
    key, lock = frontier.store.key(keys.GENETIC), frontier.store.key(keys.GENETIC_LOCK)
    log = EdgeLog(frontier)
    job = generation_job(frontier)  # the crawl's job, run here in the test's thread
    assert job.run(frontier, log, size=2) is None  # one page since the last: not due
    frontier.store._client.set(lock, "another process")
    assert job.run(frontier, log, size=1) is None  # the lock is held elsewhere
    frontier.store._client.delete(lock)
    result = job.run(frontier, log, size=1, crossover=1.0, mutation=0.0, min_fitness=0.3)
    assert result is not None and (result.number, result.crossover, result.raised) == (1, 1, 1)
    record = frontier.store._client.hgetall(key)
    assert (record["pages"], record["last"], record["generations"]) == ("1", "1", "1")
    assert job.run(frontier, log, size=1) is None  # done: not due again


def test_shares_and_sizes_out_of_range_are_refused(frontier):
    with pytest.raises(ValueError, match="crossover"):
        GeneticStrategy(frontier, crossover=0.9, mutation=0.2)
    with pytest.raises(ValueError, match="generation"):
        GeneticStrategy(frontier, generation=0)


def test_a_genetic_crawl_runs_generations_shared_by_two_processes(
    crawl, web, tmp_path, redis_client
):
    topic = tmp_path / "genetic.toml"
    text = (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "genetic"')
    topic.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    crawl.topic = topic
    settings = {"FOCUSED_GENETIC_GENERATION": 20, "CONCURRENT_REQUESTS": 4}
    one = crawl.start("one.jsonl", **settings)
    two = crawl.start("two.jsonl", **settings)
    assert one.wait(240) == 0 and two.wait(240) == 0
    assert crawl.feed("one.jsonl") and crawl.feed("two.jsonl")  # both did part of the work
    from tests.conftest import final_stats

    stats = [final_stats(crawl.log(feed)) for feed in ("one.jsonl", "two.jsonl")]
    prefix = keys.prefix(crawl.name)
    record = redis_client.hgetall(prefix + keys.GENETIC)
    counts = redis_client.hgetall(prefix + keys.STATS)
    # Both processes logged every classified page into the one edge log ...
    assert int(record["pages"]) == int(counts["classified"]) >= 200
    # ... and each generation ran in exactly one of them, every 20 pages or so.
    generations = sum(s.get("focused/genetic/generations", 0) for s in stats)
    assert generations == int(record["generations"]) >= int(record["pages"]) // 40
    assert sum(s.get("focused/genetic/crossover", 0) for s in stats) > 0
    assert sum(s.get("focused/genetic/mutation", 0) for s in stats) > 0
    # Some generation selected URLs by fitness (the stat holds only each process's last one,
    # which may find nothing fit left once the small topic is crawled).
    logs = crawl.log("one.jsonl") + crawl.log("two.jsonl")
    selected = re.findall(r"Genetic generation \d+: (\d+) of \d+ queued URLs selected", logs)
    assert len(selected) == generations and any(int(n) > 0 for n in selected)
    assert "Traceback" not in crawl.log("one.jsonl") + crawl.log("two.jsonl")
