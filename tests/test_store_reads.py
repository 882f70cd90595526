"""What the readers read of a crawl (focused.store.reads): plain records, shards added up."""

from __future__ import annotations

import json

from focused.monitor.snapshot import crawl_snapshot, crawl_status
from focused.store import keys
from focused.store.admin import record_settings
from focused.store.frontier.base import Link
from focused.store.reads import Reader, newest_first


def fetch(frontier, pages: dict[str, float]) -> None:
    """Queue ``pages`` and acknowledge each as a classified page of its R (relevant >= 0.5)."""
    frontier.push_many([Link(url, 0.5) for url in pages])
    while pop := frontier.pop_ready(100).leased:
        for item in pop:
            r = pages[item.url]
            frontier.complete(item.lease, item.url, "page", r, r >= 0.5, [], "T")


PAGES = {"http://a.test/1": 0.9, "http://b.test/2": 0.2, "http://c.test/3": 0.7}


def test_a_crawl_redis_does_not_have_reads_empty(redis_client, crawl_name):
    reader = Reader(redis_client)
    status, details = reader.snapshot(crawl_name, 1000)
    assert status.empty
    assert details is None
    assert reader.fetched(crawl_name) is None
    assert crawl_status(reader, crawl_name) == {}
    assert crawl_snapshot(reader, crawl_name) == {}
    assert crawl_name not in reader.crawl_names()
    assert repr(crawl_name) in str(reader.no_such_crawl(crawl_name))


def test_a_crawls_status_and_details_are_its_records(frontier, redis_client, crawl_name):
    one = frontier()
    fetch(one, PAGES)
    record_settings(one.store, {"threshold": 0.5, "focus": "hard"})
    one.push_many([Link("http://d.test/4", 0.4)])
    reader = Reader(redis_client)
    assert crawl_name in reader.crawl_names()
    status, details = reader.snapshot(crawl_name, 2)
    assert not status.empty
    assert status.counts["fetched"] == 3
    assert status.counts["queued"] == 1
    assert (status.in_flight, status.hosts_ready, status.hosts_held) == (0, 1, 0)
    assert len(status.recent) == 2  # the last two of three classified pages
    assert status.meta == {"threshold": "0.5", "focus": "hard"}
    assert details is not None
    assert sum(details.census.values()) == 3
    assert details.curve_step == keys.CURVE_BUCKET  # one shard
    assert details.time > 1e9  # Redis's clock
    assert details.processes == {}  # no heartbeat
    figures = crawl_status(reader, crawl_name)
    assert (figures["fetched"], figures["relevant"], figures["focus"]) == (3, 2, "hard")


def test_fetched_records_come_in_fetch_order(frontier, redis_client, crawl_name):
    fetch(frontier(), PAGES)
    fetched = Reader(redis_client).fetched(crawl_name)
    assert fetched is not None
    assert fetched.threshold is None  # no harvest monitor recorded one
    records = list(fetched.records)
    assert [order for order, _ in records] == [1, 2, 3]
    assert {record.split("\t")[0] for _, record in records} == set(PAGES)


def test_the_shards_recent_values_interleave_newest_first():
    assert newest_first([["a1", "a2", "a3"], ["b1"]], 3) == ["a1", "b1", "a2"]
    assert newest_first([["a1", "a2"]], 1) == ["a1"]


def test_the_distillers_run_is_read_whole(frontier, redis_client, crawl_name):
    one = frontier()
    fetch(one, PAGES)
    hubs = json.dumps([["http://a.test/1", 0.5]])
    redis_client.hset(
        one.store.key(keys.DISTILL), mapping={"time": 1, "fetched": 3, "top_hubs": hubs}
    )
    status = Reader(redis_client).status(crawl_name, 100)
    assert status.distill["top_hubs"] == hubs
    assert crawl_status(Reader(redis_client), crawl_name)["top_hub"] == "http://a.test/1"
