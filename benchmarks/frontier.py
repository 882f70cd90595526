"""Frontier figures: push and pop rates, Redis bytes per queued URL, against scrapy-redis, and
how both grow with the number of queued URLs.

    .venv/bin/python benchmarks/frontier.py [--sizes 10000,100000] [--hosts 400]
    .venv/bin/python benchmarks/frontier.py --sizes 10000,100000,1000000     # a few minutes

For each size N, on a fresh redis-server (the embedded Redis's binary, no persistence; or
FOCUSED_REDIS_URL, where only this benchmark's keys are touched):

- ours: N URLs pushed with ``push_many`` in batches of 100 (about a page's out-links), then
  popped (leased) with ``pop_ready`` in batches of 100; Redis ``used_memory`` growth per
  queued URL (host queues, seen set, host state). Then the crawl's own shape: pops of
  FOCUSED_POP_BATCH (8) URLs, each acknowledged by ``complete`` with 12 new out-links, on
  the full frontier: frontier-bound pages/s (two round trips per 8 pages plus one per page).
- scrapy-redis: the same N URLs as Scrapy ``Request`` objects (callback ``parse``, meta
  depth, a priority) pushed with ``scrapy_redis.queue.PriorityQueue.push`` and their
  fingerprints added with ``scrapy_redis.dupefilter.RFPDupeFilter.request_seen``, as its
  scheduler does; pipelined to fill Redis quickly (only the bytes are measured there). Its
  push (SADD + ZADD, two round trips) and pop (a MULTI transaction) rates are measured
  unpipelined, as its scheduler calls them, on the first --sample URLs.

URLs are about 57 characters, like the Wikispeedia ones, spread over --hosts hosts.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import redis
import scrapy
from common import DEFAULT_WORK, redis_server
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue

from focused import defaults
from focused.monitor.snapshot import reset_crawl
from focused.schedulers.frontier import Link, RedisFrontier

BATCH = 100  # links per push (about a page's out-links) and URLs per pop
POP_BATCH = 8  # FOCUSED_POP_BATCH
LINKS_PER_PAGE = 12  # out-links per page in the crawl-shaped run
CRAWL = "bench-frontier"
SR_QUEUE, SR_DUPES = "bench-sr:requests", "bench-sr:dupefilter"
CHUNK = 10_000


def url(i: int, hosts: int) -> str:
    """The i-th benchmark URL (about 57 characters)."""
    return f"http://www.host{i % hosts:05d}.wiki.test/Article_number_{i:09d}_x"


def links(first: int, last: int, hosts: int) -> Iterator[Link]:
    """Links first..last-1 with varied scores."""
    for i in range(first, last):
        yield Link(url(i, hosts), i % 97 / 97)


def used_memory(client: redis.Redis) -> int:
    """Redis's used_memory, once the keys deleted before (UNLINK frees them in the
    background) are freed."""
    while True:
        info = client.info("memory")
        if not int(info.get("lazyfree_pending_objects", 0)):
            return int(info["used_memory"])
        time.sleep(0.05)


@dataclass
class Ours:
    """Our frontier's figures at one size."""

    push: float  # URLs/s
    pop: float  # URLs/s
    bytes_per_url: float
    crawl_pages: float  # pages/s in the crawl's shape


@dataclass
class Theirs:
    """scrapy-redis's figures at one size."""

    request_bytes: float
    fingerprint_bytes: float
    push: float  # URLs/s, unpipelined, on the sample
    pop: float


def bench_ours(
    client: redis.Redis, n: int, hosts: int, crawl_pages: int, seen_buckets: int
) -> Ours:
    """Push n URLs, measure memory, pop them all, then run the crawl-shaped cycle."""
    reset_crawl(client, CRAWL)
    frontier = RedisFrontier(
        client,
        CRAWL,
        host_delay=0.0,
        host_concurrency=10**6,
        lease_s=3600,
        seen_buckets=seen_buckets,
    )
    before = used_memory(client)
    started = time.perf_counter()
    for i in range(0, n, BATCH):
        frontier.push_many(links(i, min(n, i + BATCH), hosts))
    push_s = time.perf_counter() - started
    per_url = (used_memory(client) - before) / n
    # The crawl's shape on the full frontier: lease 8, acknowledge each with 12 new links.
    started = time.perf_counter()
    fresh, done = n, 0
    while done < crawl_pages:
        for leased in frontier.pop_ready(POP_BATCH).leased:
            new = list(links(fresh, fresh + LINKS_PER_PAGE, hosts))
            fresh += LINKS_PER_PAGE
            frontier.complete(leased.lease, leased.url, "page", 0.5, False, new)
            done += 1
    cycle_s = time.perf_counter() - started
    started = time.perf_counter()
    popped = 0
    while True:
        got = len(frontier.pop_ready(BATCH).leased)
        if not got:
            break
        popped += got
    pop_s = time.perf_counter() - started
    reset_crawl(client, CRAWL)
    return Ours(n / push_s, popped / pop_s, per_url, done / cycle_s)


def requests(first: int, last: int, hosts: int, spider: scrapy.Spider) -> Iterator[scrapy.Request]:
    """The same URLs as Scrapy requests, as a crawl yields them."""
    for i in range(first, last):
        yield scrapy.Request(
            url(i, hosts), callback=spider.parse, meta={"depth": 2}, priority=i % 97
        )


def bench_theirs(client: redis.Redis, n: int, hosts: int, sample: int) -> Theirs:
    """scrapy-redis's bytes per queued request and per fingerprint; its rates on a sample."""
    spider = scrapy.Spider(name="bench-sr")
    client.delete(SR_QUEUE, SR_DUPES)
    before = used_memory(client)
    pipe = client.pipeline(transaction=False)
    queue = PriorityQueue(pipe, spider, SR_QUEUE)
    for i in range(0, n, CHUNK):
        for request in requests(i, min(n, i + CHUNK), hosts, spider):
            queue.push(request)
        pipe.execute()
    queued = used_memory(client)
    dupes = RFPDupeFilter(pipe, SR_DUPES)
    for i in range(0, n, CHUNK):
        for request in requests(i, min(n, i + CHUNK), hosts, spider):
            dupes.request_seen(request)
        pipe.execute()
    seen = used_memory(client)
    client.delete(SR_QUEUE, SR_DUPES)
    # Rates as its scheduler calls it: request_seen + push per request, pop one at a time.
    sample = min(sample, n)
    queue, dupes = PriorityQueue(client, spider, SR_QUEUE), RFPDupeFilter(client, SR_DUPES)
    batch = list(requests(0, sample, hosts, spider))
    started = time.perf_counter()
    for request in batch:
        if not dupes.request_seen(request):
            queue.push(request)
    push_s = time.perf_counter() - started
    started = time.perf_counter()
    while queue.pop() is not None:
        pass
    pop_s = time.perf_counter() - started
    client.delete(SR_QUEUE, SR_DUPES)
    return Theirs((queued - before) / n, (seen - queued) / n, sample / push_s, sample / pop_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="queued URLs, comma-separated")
    parser.add_argument("--urls", type=int, help="one size (the old option)")
    parser.add_argument("--hosts", type=int, default=400)
    parser.add_argument("--crawl-pages", type=int, default=4000, help="pages of the crawl shape")
    parser.add_argument("--sample", type=int, default=20_000, help="scrapy-redis rate sample")
    parser.add_argument("--no-scrapy-redis", action="store_true")
    parser.add_argument(
        "--seen-buckets",
        type=int,
        default=defaults.FOCUSED_SEEN_BUCKETS,
        help="FOCUSED_SEEN_BUCKETS (compact while each holds at most 512 URLs)",
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args()
    sizes = [args.urls] if args.urls else [int(s) for s in args.sizes.split(",")]
    rows = []
    with redis_server(args.work.resolve() / "redis-frontier") as redis_url:
        client = redis.Redis.from_url(redis_url, decode_responses=True)
        raw = redis.Redis.from_url(redis_url)  # scrapy-redis's: pickles are bytes, not text
        info = client.info("server")
        print(
            f"Redis {info['redis_version']} ({client.info('memory').get('mem_allocator')});"
            f" URLs of {len(url(0, args.hosts))} chars on {args.hosts} hosts"
        )
        for n in sizes:
            ours = bench_ours(client, n, args.hosts, args.crawl_pages, args.seen_buckets)
            theirs = None if args.no_scrapy_redis else bench_theirs(raw, n, args.hosts, args.sample)
            rows.append((n, ours, theirs))
            line = (
                f"{n:>9,} URLs: ours push {ours.push:,.0f}/s, pop {ours.pop:,.0f}/s,"
                f" {ours.bytes_per_url:.0f} B/URL, crawl shape {ours.crawl_pages:,.0f} pages/s"
            )
            if theirs:
                line += (
                    f"; scrapy-redis {theirs.request_bytes:.0f} + {theirs.fingerprint_bytes:.0f}"
                    f" B, push {theirs.push:,.0f}/s, pop {theirs.pop:,.0f}/s"
                )
            print(line, flush=True)
    print(
        "\n| queued URLs | push URLs/s | pop URLs/s | push+pop ops/s | crawl shape pages/s |"
        " ours B/URL | scrapy-redis B/URL (request + fingerprint) | ours / scrapy-redis |"
        " scrapy-redis push / pop URLs/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, ours, theirs in rows:
        both = 2 / (1 / ours.push + 1 / ours.pop)
        sr = sr_rates = ratio = "-"
        if theirs:
            total = theirs.request_bytes + theirs.fingerprint_bytes
            sr = f"{total:.0f} ({theirs.request_bytes:.0f} + {theirs.fingerprint_bytes:.0f})"
            ratio = f"{ours.bytes_per_url / total:.2f}"
            sr_rates = f"{theirs.push:,.0f} / {theirs.pop:,.0f}"
        print(
            f"| {n:,} | {ours.push:,.0f} | {ours.pop:,.0f} | {both:,.0f} |"
            f" {ours.crawl_pages:,.0f} | {ours.bytes_per_url:.0f} | {sr} | {ratio} | {sr_rates} |"
        )


if __name__ == "__main__":
    main()
