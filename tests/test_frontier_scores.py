"""The frontier counted by link score on a real Redis: queued URLs per score bucket and the
calibration the acknowledgement keeps."""

from __future__ import annotations

import random

import pytest
import redis

from focused.monitor.coverage import Coverage
from focused.monitor.metrics import CrawlCollector
from focused.monitor.snapshot import crawl_snapshot, status_rows
from focused.store import keys
from focused.store.coverage import CoverageStore, coverage_record
from focused.store.frontier.base import Ack, Link
from focused.store.frontier.records import (
    SCORE_BUCKETS,
    SCORE_EDGES,
    SCORE_LEVELS,
    SCORE_UNIT,
    bucket_levels,
    bucket_middles,
    pack,
    score_bucket,
)
from focused.store.reads import Reader


@pytest.fixture(params=["server", pytest.param("cluster", marks=pytest.mark.cluster)])
def frontier_client(request: pytest.FixtureRequest) -> redis.Redis:
    return request.getfixturevalue("redis_client" if request.param == "server" else "cluster")


def totals(hosts: list[list[int]]) -> list[int]:
    return [sum(column) for column in zip(*hosts, strict=True)]


def test_a_score_falls_in_the_bucket_of_the_last_edge_below_it_and_each_level_in_one():
    assert score_bucket(pack(1.0, 0, 7)) == SCORE_BUCKETS - 1
    assert score_bucket(pack(0.0, 3, 7)) == 0
    assert score_bucket(pack(0.26, 2, 7)) == SCORE_EDGES.index(0.2)
    for bucket, edge in enumerate(SCORE_EDGES):  # an edge opens its bucket, as it packs
        assert score_bucket(pack(edge, 0, 7)) == bucket
        assert score_bucket(pack(max(0.0, edge - 0.0001), 0, 7)) == max(0, bucket - 1)
    middles = bucket_middles()
    assert all(
        low < middle < high
        for low, middle, high in zip(SCORE_EDGES, middles, (*SCORE_EDGES[1:], 1.0), strict=True)
    )
    levels = bucket_levels()
    assert levels[0] == 0 and levels[-1] == SCORE_LEVELS + 1 and len(levels) == SCORE_BUCKETS + 1
    for n in range(SCORE_BUCKETS):  # each bucket's levels, and only they, map to it
        bucket = SCORE_BUCKETS - 1 - n
        assert score_bucket(levels[n] * SCORE_UNIT) == bucket
        assert score_bucket((levels[n + 1] - 1) * SCORE_UNIT) == bucket


def test_queued_and_leased_urls_are_counted_by_score_on_short_and_long_queues(frontier):
    f = frontier(host_concurrency=1)
    links = (
        [Link("http://a.test/1", 0.05), Link("http://a.test/2", 0.55)]
        + [Link(f"http://b.test/{i}", 0.97) for i in range(3)]
        # a queue of one bucket, counted at once
        + [Link(f"http://same.test/{i}", 0.42 + i / 1000) for i in range(10)]
        # a long queue, counted per bucket, with URLs in every bucket
        + [
            Link(f"http://long.test/{i}", (SCORE_EDGES + (1.0,))[i % 20] + 0.0004)
            for i in range(200)
        ]
    )
    f.push_many(links)
    leased = f.pop_ready(1).leased  # a URL in flight still counts
    assert len(leased) == 1
    expected = [0] * SCORE_BUCKETS
    for link in links:
        expected[score_bucket(pack(link.score, 0, 0))] += 1
    assert min(expected) >= 10  # every bucket has URLs, on the long queue at least
    scores = f.queued_by_score()
    assert (scores.population, len(scores.hosts), scores.sampled) == (4, 4, False)
    assert totals(scores.hosts) == expected
    # a retried URL of the long queue keeps its score's bucket
    f.release([leased[0].lease], retry=True)
    assert totals(f.queued_by_score().hosts) == expected


def test_more_hosts_than_the_cap_are_sampled_uniformly(frontier):
    f = frontier()
    f.push_many([Link(f"http://h{i}.test/", 0.5) for i in range(30)])
    scores = f.queued_by_score(max_hosts=6, rng=random.Random(1))
    assert scores.population == 30 and scores.sampled
    assert 6 <= len(scores.hosts) <= 8  # each shard's share of the cap, rounded up
    assert all(sum(counts) == 1 for counts in scores.hosts)


def test_the_acknowledgement_counts_each_bucket_and_its_new_relevant_pages(frontier):
    f = frontier()
    f.push_many([Link(f"http://c{i}.test/", 0.9) for i in range(4)] + [Link("http://d.test/", 0.1)])
    leased = {lease.url: lease for lease in f.pop_ready(10).leased}
    high = [leased[f"http://c{i}.test/"] for i in range(4)]
    low = leased["http://d.test/"]
    f.complete_many(
        [
            Ack(high[0].lease, high[0].url, "page", 0.9, True, checksum="same", found=1.0),
            # the same text again: a duplicate, no new relevant page
            Ack(high[1].lease, high[1].url, "page", 0.9, True, checksum="same", found=1.0),
            # what a page counts for is its found share, not its relevant flag
            Ack(high[2].lease, high[2].url, "page", 0.2, False, found=0.25),
            Ack(high[3].lease, high[3].url, "failed"),
            Ack(low.lease, low.url, "page", 0.8, True, found=0.5),
        ]
    )
    low, high = score_bucket(pack(0.1, 0, 0)), score_bucket(pack(0.9, 0, 0))
    assert f.score_calibration() == {low: (1, 0.5), high: (4, 1.25)}
    fetched, found, _ = CoverageStore(f.store).progress()
    assert (fetched, found) == (4, 1.75)
    # a revisit finds nothing new: it is not counted
    f.requeue(["http://d.test/"], score=0.9)
    again = f.pop_ready(1).leased[0]
    f.complete(again.lease, again.url, "page", 0.8, True, found=1.0)
    assert f.score_calibration() == {low: (1, 0.5), high: (4, 1.25)}
    assert CoverageStore(f.store).progress()[1] == 1.75


def test_the_estimates_are_kept_and_read_by_status_and_the_exporter(frontier):
    f = frontier()
    f.push_many([Link(f"http://e{i}.test/", 0.9) for i in range(30)])  # some on every shard
    records = CoverageStore(f.store)
    assert records.progress() == (0, 0, {}) and records.history() == []
    with f.store.held_lock(keys.COVERAGE_LOCK, 5) as lease:
        assert lease is not None
        for pages, left in ((50, 30.0), (100, 12.5)):
            estimate = Coverage(
                found=20, left=left, low=left / 2, high=left * 2, next=4.0, queued=3
            )
            records.record({**estimate.record(), "pages": pages, "covered_since": None}, lease)
    assert [r["pages"] for r in records.history()] == [50, 100]
    assert coverage_record(records.progress()[2])["left"] == 12.5
    snapshot = crawl_snapshot(Reader(f.store._client), f.store.crawl)
    rows = dict(status_rows(snapshot))
    assert rows["relevant found / est. in reach"] == "20 / 32 (26-45) at 100 pages"
    assert rows["best 100 queued, relevant"] == "4.0 expected"
    families = {m.name: m for m in CrawlCollector(Reader(f.store._client)).collect()}

    def sample(name: str, **labels: str) -> float:
        wanted = {"crawl": f.store.crawl, **labels}
        return next(x.value for x in families[name].samples if x.labels == wanted)

    assert sample("focused_relevant_left", bound="estimate") == 12.5
    assert sample("focused_relevant_in_reach", bound="high") == 45
    assert sample("focused_best_queued_relevant") == 4.0
    assert sample("focused_topic_covered") == 0
