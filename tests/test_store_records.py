"""The crawl's own records in Redis, each through its store module: its claim on a topic file,
reset, heartbeats, pushed seeds, WARC index, kept robots.txt, revisit rounds, Scrapy stats."""

from __future__ import annotations

import os

from focused.store import keys
from focused.store.admin import (
    claim_topic,
    has_keys,
    known_count,
    record_claim,
    reset_crawl,
    running_processes,
)
from focused.store.crawl import CrawlStore
from focused.store.processes import ProcessRecord, ProcessRecords
from focused.store.revisits import claim_round
from focused.store.robots import KeptRobots
from focused.store.scrapystats import CrawlScrapyStats
from focused.store.seeds import PushedSeeds, push_seeds
from focused.store.warcindex import WarcIndex


def test_the_first_claim_on_a_crawl_stays_until_recorded_again(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    assert claim_topic(store, "/a.toml", '{"x": 1}') == ("/a.toml", '{"x": 1}')
    assert claim_topic(store, "/b.toml", '{"x": 2}') == ("/a.toml", '{"x": 1}')
    record_claim(store, "/b.toml", '{"x": 2}')
    assert claim_topic(store, "/c.toml", "{}") == ("/b.toml", '{"x": 2}')


def test_a_reset_keeps_known_pages_and_nothing_else(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    redis_client.hset(store.key(keys.CHECKSUMS), "sum1", "11")
    redis_client.hset(store.key(keys.STATS), "fetched", 1)
    assert has_keys(redis_client, crawl_name)
    assert reset_crawl(redis_client, crawl_name, keep_known=True) == 2
    assert known_count(redis_client, crawl_name) == 1
    assert reset_crawl(redis_client, crawl_name) == 1
    assert not has_keys(redis_client, crawl_name)


def test_heartbeats_are_read_and_forgotten(redis_client, crawl_name):
    records = ProcessRecords(CrawlStore(redis_client, crawl_name))
    record = {"host": "here", "pid": os.getpid(), "state": "running"}
    records.beat("p1", record, 30)
    records.for_thread().beat("p2", {**record, "state": "finished"}, 30)
    assert records.heard_of() == [
        ProcessRecord("p1", "here", os.getpid(), "running"),
        ProcessRecord("p2", "here", os.getpid(), "finished"),
    ]
    assert running_processes(redis_client, crawl_name) == ["p1"]
    records.forget(["p1"])
    assert [p.state for p in records.heard_of()] == [None, "finished"]  # its id stays a while
    assert running_processes(redis_client, crawl_name) == []


def test_pushed_seeds_are_read_then_trimmed_by_one_process(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    key, waiting = push_seeds(store, ["http://a.test/", "http://b.test/", "http://c.test/"])
    assert (key, waiting) == (store.key(keys.START_URLS), 3)
    seeds = PushedSeeds(store)
    assert seeds.waiting() == 3

    def push(urls: list[str]) -> int:
        assert PushedSeeds(store).move(10, 30, push) is None  # held by this one
        return len(urls)

    moved = seeds.move(2, 30, push)
    assert moved is not None and moved.urls == ["http://a.test/", "http://b.test/"]
    assert moved.pushed == 2
    assert redis_client.lrange(key, 0, -1) == ["http://c.test/"]


def test_the_warc_index_remembers_records_by_url(redis_client, crawl_name):
    index = WarcIndex(CrawlStore(redis_client, crawl_name))
    assert index.written("http://a.test/") is None
    index.remember("http://a.test/", "<urn:uuid:1> 2025-01-01T00:00:00Z sha1:X")
    assert index.written("http://a.test/") == "<urn:uuid:1> 2025-01-01T00:00:00Z sha1:X"
    assert index.written("http://b.test/") is None


def test_a_kept_robots_txt_is_bytes_that_expire(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    robots = KeptRobots(store)
    assert robots.get("http://a.test") is None
    robots.keep("http://a.test", b"1User-agent: *\nDisallow: /\xff", 60)
    assert robots.get("http://a.test") == b"1User-agent: *\nDisallow: /\xff"
    assert 0 < redis_client.ttl(store.key(keys.ROBOTS, "http://a.test")) <= 60


def test_a_revisit_round_is_claimed_once_per_every_pages(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    assert not claim_round(store, 10)  # nothing fetched
    redis_client.hset(store.key(keys.STATS), "fetched", 10)
    assert claim_round(store, 10)
    assert not claim_round(store, 10)  # claimed: 10 more pages first
    redis_client.hset(store.key(keys.STATS), "fetched", 20)
    assert claim_round(store, 10)


def test_scrapy_stats_of_processes_add_up(redis_client, crawl_name):
    store = CrawlStore(redis_client, crawl_name)
    stats = CrawlScrapyStats(store)
    stats.add({"finish_reason": "a"}, {"pages": 2}, {"max": 5}, {"min": 5})
    stats.add({"finish_reason": "b"}, {"pages": 3}, {"max": 4}, {"min": 3})
    assert redis_client.hgetall(store.key(keys.SCRAPY_STATS)) == {
        "finish_reason": "b",
        "pages": "5",
        "max": "5",
        "min": "3",
    }
