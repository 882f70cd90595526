"""The crawl graph's store (focused/store/graph.py), method by method, on a real Redis: the
graph as the acknowledgement writes it, the distiller's record and the lists' counts."""

from __future__ import annotations

import pytest

from focused.errors import FocusedError
from focused.monitor.metrics import CrawlCollector
from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.graph import GraphStore
from focused.store.reads import Reader


@pytest.fixture
def frontier(redis_client, crawl_name) -> RedisFrontier:
    return RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0.0, host_concurrency=10)


def fetch(frontier: RedisFrontier, url: str, r: float, links: list[str]) -> None:
    frontier.push_many([Link(url, 1.0)])
    (leased,) = [item for item in frontier.pop_ready(10).leased if item.url == url]
    frontier.complete(leased.lease, url, "page", r, r >= 0.5, [Link(t, 0.1) for t in links], "T")


def test_the_graph_is_read_as_the_acknowledgement_wrote_it(frontier):
    fetch(
        frontier, "http://a.test/", 0.9, ["http://b.test/", "http://c.test/x", "http://a.test/in"]
    )
    fetch(frontier, "http://b.test/", 0.2, ["http://a.test/"])
    graph = GraphStore(frontier.store).read()
    assert graph.urls == ["http://a.test/", "http://b.test/"] and graph.fetched == 2
    assert graph.relevance.tolist() == [0.9, 0.2]
    # Links to other servers only: a -> b (a page), a -> c/x (not fetched), b -> a.
    edges = sorted(zip(graph.src.tolist(), graph.dst.tolist(), strict=True))
    assert edges == [(0, 1), (0, 2), (1, 0)] and len(graph.targets) == 1


def test_the_distiller_counts_and_its_record(frontier):
    graph = GraphStore(frontier.store)
    assert graph.distiller_counts() == (0, 0, 0.0)
    fetch(frontier, "http://a.test/", 0.9, [])
    store = frontier.store
    with store.held_lock(keys.DISTILL_LOCK, 5) as lease:
        assert lease is not None
        graph.record_distillation({"fetched": 1, "time": 1234.5, "pages": 1}, {0: 0.75}, lease)
        assert graph.distiller_counts() == (1, 1, 1234.5)
        assert store._client.hget(store.key(keys.DISTILL), "runs") == "1"
        hubs = store._client.zrange(store.key(keys.HUBS), 0, -1, withscores=True)
        assert hubs == [("0", 0.75)]
        graph.record_distillation({"fetched": 1}, {}, lease)  # no hubs: the last ones dropped
    assert store._client.hget(store.key(keys.DISTILL), "runs") == "2"
    assert not store._client.exists(store.key(keys.HUBS))
    # The exporter shows a record without its seconds (the exporter's page answered 500).
    families = {f.name: f for f in CrawlCollector(Reader(store._client)).collect()}
    mine = [
        x for x in families["focused_distiller_runs"].samples if x.labels["crawl"] == store.crawl
    ]
    assert [x.value for x in mine] == [2]
    assert not [
        x
        for x in families["focused_distiller_last_run_duration_seconds"].samples
        if x.labels["crawl"] == store.crawl
    ]


def test_the_distill_job_takes_the_distill_lock(frontier):
    store = frontier.store
    job = GraphStore(store).distill_job(lambda lease: "ran", lock_s=5)
    assert job.run() == "ran"
    store._client.set(store.key(keys.DISTILL_LOCK), "another process")
    assert job.run() is None


def test_recorded_politeness_of_a_crawl_and_of_none(redis_client, frontier, crawl_name):
    store = frontier.store
    fetch(frontier, "http://a.test/", 0.9, [])  # the crawl now has stats
    assert GraphStore(store).recorded_politeness() == (1.0, 1)  # nothing recorded: defaults
    store._client.hset(store.key(keys.META), mapping={"host_delay": 2.5, "host_concurrency": 3})
    assert GraphStore(store).recorded_politeness() == (2.5, 3)
    with pytest.raises(FocusedError, match="no crawl named"):
        GraphStore(CrawlStore(redis_client, crawl_name + "-none")).recorded_politeness()


def test_the_lists_counts_by_fetch_order_and_site(frontier):
    store = frontier.store
    fetch(frontier, "http://a.test/", 0.9, [])
    fetch(frontier, "http://b.test/", 0.9, [])
    store._client.zadd(store.key(keys.HUB_SCORES), {"1": 0.5, "2": 0.25})  # by fetch order
    store._client.hset(store.key(keys.FOUND), mapping={"1": 4})
    store._client.hset(store.key(keys.SITES), mapping={"http://a.test": 2})
    graph = GraphStore(store)
    assert sorted(graph.hub_scores()) == [(1, 0.5), (2, 0.25)]
    assert graph.relevant_found([1, 2]) == [4, 0] and graph.relevant_found([]) == []
    assert graph.relevant_per_site()["http://a.test"] == 2
    assert graph.page_urls([2, 1, 7]) == ["http://b.test/", "http://a.test/"]
