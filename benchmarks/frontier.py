"""Frontier figures: push and pop rates, as shares of Redis's own ceiling on the same server,
Redis bytes per queued URL, against scrapy-redis, and how all grow with the queued URLs.

    .venv/bin/python benchmarks/frontier.py [--sizes 10000,100000] [--hosts 400]
    .venv/bin/python benchmarks/frontier.py --sizes 100000,1000000     # 8 to 9 minutes
    .venv/bin/python benchmarks/frontier.py --sizes 10M --no-scrapy-redis  # over half an hour

Sizes may be written 100000, 100k, 1M or 10M. Before it starts the script checks that Redis's
largest structure fits in the machine's available memory (about 450 B a URL with scrapy-redis,
150 B without: 4.5 GB at 10M). For each size N, on a fresh redis-server (the embedded Redis's
binary, no persistence; or FOCUSED_REDIS_URL, where only this benchmark's keys are touched):

- ours: N URLs pushed with ``push_many`` in batches of 100 (about a page's out-links), then
  popped (leased) with ``pop_ready`` in batches of 100; Redis ``used_memory`` growth per
  queued URL (host queues, seen set, host state). Then the crawl's own shape: pops of
  FOCUSED_POP_BATCH (8) URLs, acknowledged by ``complete_many`` FOCUSED_ACK_BATCH (16) at a
  time, each page with 12 new out-links, on the full frontier: frontier-bound pages/s (a
  round trip per 8 pages and one per 16).
  The seen set has ``--seen-buckets`` buckets, by default 4,096 doubled until each holds at
  most 512 URLs (32,768 at 10M), as a crawl of that size should be set.
  With ``--breakdown``, where the bytes go on the full frontier, and again after the crawl's
  shape (hosts' hashes, ``url:`` and ``graph:`` records) and after the pop (the leases):
  ``MEMORY USAGE`` of a sample of each kind of key, per key, per element and per queued URL.
  Beside the rates, the CPU time a URL pushed and popped, Redis's (``INFO cpu``) and this
  process's: they move less than the rates with what else the machine runs.
- Redis's ceiling, right after, on the same server: the same N URL strings pushed into one
  sorted set, 100 a round trip, and popped from it, 100 a round trip; first as one command
  a batch (``ZADD`` of 100 members, ``ZPOPMIN key 100``: the ceiling ours' rates are printed
  as shares of), then as 100 one-member ``ZADD``/``ZPOPMIN`` commands pipelined (a command
  per URL, printed for comparison). Both include making the URL strings, as ours' push does;
  ``--no-ceiling`` leaves it out.
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
from common import DEFAULT_WORK, redis_cpu_seconds, redis_server
from scrapy_redis.dupefilter import RFPDupeFilter
from scrapy_redis.queue import PriorityQueue

from focused.settings import defaults
from focused.store.admin import reset_crawl
from focused.store.frontier.base import Ack, Link
from focused.store.frontier.queue import RedisFrontier

BATCH = 100  # links per push (about a page's out-links) and URLs per pop
POP_BATCH = 8  # FOCUSED_POP_BATCH
ACK_BATCH = 16  # FOCUSED_ACK_BATCH
LINKS_PER_PAGE = 12  # out-links per page in the crawl-shaped run
CRAWL = "bench-frontier"
SR_QUEUE, SR_DUPES = "bench-sr:requests", "bench-sr:dupefilter"
CEILING = "bench-ceiling"
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
    push_cpu: tuple[float, float]  # µs of CPU a URL pushed: Redis's, this process's
    pop_cpu: tuple[float, float]  # µs of CPU a URL popped: Redis's, this process's


@dataclass
class Ceiling:
    """Redis's own rates at one size: the same URL strings in one sorted set."""

    push: float  # URLs/s, one ZADD of BATCH members per round trip
    pop: float  # URLs/s, one ZPOPMIN of BATCH per round trip
    push_each: float  # URLs/s, BATCH one-member ZADDs pipelined per round trip
    pop_each: float  # URLs/s, BATCH one-member ZPOPMINs pipelined per round trip


@dataclass
class Theirs:
    """scrapy-redis's figures at one size."""

    request_bytes: float
    fingerprint_bytes: float
    push: float  # URLs/s, unpipelined, on the sample
    pop: float


def breakdown(client: redis.Redis, n: int, sample: int = 50) -> None:
    """Print where the frontier's bytes go: per kind of key (its name after the crawl's prefix,
    up to its first ``:``), MEMORY USAGE of a sample of its keys, per key, per element and
    over all its keys per queued URL."""
    kinds: dict[str, list[str]] = {}
    for key in client.scan_iter(match=f"focused:{{{CRAWL}}}:*", count=10_000):
        name = key.split("}:", 1)[1]
        kinds.setdefault(name.split(":")[0] + ":" if ":" in name else name, []).append(key)
    sizes = {"zset": client.zcard, "set": client.scard, "hash": client.hlen, "list": client.llen}
    print(f"  {'key':10} {'keys':>9} {'type':5} {'encoding':10} {'B/key':>10} {'elements':>9}"
          f" {'B/element':>9} {'B/URL':>6}")  # fmt: skip
    for kind, names in sorted(kinds.items()):
        picked = names[:: max(1, len(names) // sample)][:sample]
        per_key = sum(client.memory_usage(k, samples=0) or 0 for k in picked) / len(picked)
        kind_type = client.type(picked[0])
        elements = (
            sum(sizes[kind_type](k) for k in picked) / len(picked) if kind_type in sizes else 1
        )
        print(
            f"  {kind:10} {len(names):>9,} {kind_type:5} {client.object('encoding', picked[0]):10}"
            f" {per_key:>10,.0f} {elements:>9,.0f} {per_key / max(elements, 1):>9.1f}"
            f" {per_key * len(names) / n:>6.1f}"
        )


def bench_ours(
    client: redis.Redis,
    n: int,
    hosts: int,
    crawl_pages: int,
    seen_buckets: int,
    show_breakdown: bool = False,
) -> Ours:
    """Push n URLs, measure memory, pop them all, then run the crawl-shaped cycle."""
    reset_crawl(client, CRAWL)
    frontier = RedisFrontier.for_crawl(
        client,
        CRAWL,
        host_delay=0.0,
        host_concurrency=10**6,
        lease_s=3600,
        seen_buckets=seen_buckets,
    )
    before = used_memory(client)
    cpu, own = redis_cpu_seconds(client), time.process_time()
    started = time.perf_counter()
    for i in range(0, n, BATCH):
        frontier.push_many(links(i, min(n, i + BATCH), hosts))
    push_s = time.perf_counter() - started
    push_cpu = ((redis_cpu_seconds(client) - cpu) * 1e6 / n, (time.process_time() - own) * 1e6 / n)
    per_url = (used_memory(client) - before) / n
    if show_breakdown:
        breakdown(client, n)
    # The crawl's shape on the full frontier: lease 8 at a time, acknowledge 16 at a time,
    # each page with 12 new links.
    started = time.perf_counter()
    fresh, done = n, 0
    finished: list[Ack] = []
    while done < crawl_pages:
        for leased in frontier.pop_ready(POP_BATCH).leased:
            new = list(links(fresh, fresh + LINKS_PER_PAGE, hosts))
            fresh += LINKS_PER_PAGE
            finished.append(Ack(leased.lease, leased.url, "page", 0.5, False, new))
            done += 1
        if len(finished) >= ACK_BATCH:
            frontier.complete_many(finished)
            finished = []
    if finished:
        frontier.complete_many(finished)
    cycle_s = time.perf_counter() - started
    if show_breakdown:
        print(f"  after the crawl shape ({done:,} pages leased and acknowledged):")
        breakdown(client, n)
    cpu, own = redis_cpu_seconds(client), time.process_time()
    started = time.perf_counter()
    popped = 0
    while True:
        got = len(frontier.pop_ready(BATCH).leased)
        if not got:
            break
        popped += got
    pop_s = time.perf_counter() - started
    pop_cpu = (
        (redis_cpu_seconds(client) - cpu) * 1e6 / popped,
        (time.process_time() - own) * 1e6 / popped,
    )
    if show_breakdown:
        print(f"  after the pop ({popped:,} URLs leased):")
        breakdown(client, n)
    reset_crawl(client, CRAWL)
    return Ours(n / push_s, popped / pop_s, per_url, done / cycle_s, push_cpu, pop_cpu)


def bench_ceiling(client: redis.Redis, n: int, hosts: int) -> Ceiling:
    """Redis's ceiling for the same n URLs on the same server: pushed into one sorted set and
    popped from it, BATCH URLs per round trip, first as one command per batch (``ZADD`` of
    BATCH members, ``ZPOPMIN key BATCH``), then as BATCH one-member commands pipelined."""

    def push(each: bool) -> float:
        client.delete(CEILING)
        started = time.perf_counter()
        for i in range(0, n, BATCH):
            members = {url(j, hosts): j % 97 / 97 for j in range(i, min(n, i + BATCH))}
            pipe = client.pipeline(transaction=False)
            if each:
                for member, score in members.items():
                    pipe.zadd(CEILING, {member: score})
            else:
                pipe.zadd(CEILING, members)
            pipe.execute()
        return n / (time.perf_counter() - started)

    def pop(each: bool) -> float:
        started = time.perf_counter()
        popped = 0
        while True:
            pipe = client.pipeline(transaction=False)
            if each:
                for _ in range(BATCH):
                    pipe.zpopmin(CEILING)
            else:
                pipe.zpopmin(CEILING, BATCH)
            got = sum(len(r) for r in pipe.execute())
            if not got:
                break
            popped += got
        return popped / (time.perf_counter() - started)

    rates = [push(False), pop(False), push(True), pop(True)]
    client.delete(CEILING)
    return Ceiling(*rates)


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


def size(text: str) -> int:
    """A --sizes entry: 100000, 100_000, 100k, 1M or 10M."""
    text = text.strip().lower().replace("_", "")
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text.rstrip("km")) * scale)


def buckets_for(n: int, given: int | None) -> int:
    """--seen-buckets, else the default or, past its 2M URLs, the power of two that keeps every
    bucket at most 512 fingerprints (compact), as a crawl of n URLs should be set."""
    if given:
        return given
    buckets = defaults.FOCUSED_SEEN_BUCKETS
    while buckets * 512 < n:
        buckets *= 2
    return buckets


def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where there is none)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def share(ours: float, ceiling: float) -> str:
    return f"{ours / ceiling:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", default="10000,100000", help="queued URLs, comma-separated (100k, 1M, 10M)"
    )
    parser.add_argument("--urls", type=size, help="one size (the old option)")
    parser.add_argument("--hosts", type=int, default=400)
    parser.add_argument("--crawl-pages", type=int, default=4000, help="pages of the crawl shape")
    parser.add_argument("--sample", type=int, default=20_000, help="scrapy-redis rate sample")
    parser.add_argument("--no-scrapy-redis", action="store_true")
    parser.add_argument("--no-ceiling", action="store_true", help="skip Redis's own rates")
    parser.add_argument(
        "--seen-buckets",
        type=int,
        help="FOCUSED_SEEN_BUCKETS (default: 4,096, doubled until each holds at most 512 URLs)",
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="MEMORY USAGE by kind of key, once pushed"
    )
    parser.add_argument("--work", type=Path, default=DEFAULT_WORK)
    args = parser.parse_args()
    sizes = [args.urls] if args.urls else [size(s) for s in args.sizes.split(",")]
    # Redis holds one structure at a time (each is deleted before the next): scrapy-redis's
    # about 440 B a URL is the largest, ours about 150 B, the ceiling's one sorted set less.
    need = max(sizes) * (150 if args.no_scrapy_redis else 450)
    free = available_memory()
    if free is not None and need > 0.8 * free:
        parser.error(
            f"{max(sizes):,} URLs need about {need / 2**30:.1f} GiB of Redis memory,"
            f" {free / 2**30:.1f} GiB available"
        )
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
            buckets = buckets_for(n, args.seen_buckets)
            ours = bench_ours(client, n, args.hosts, args.crawl_pages, buckets, args.breakdown)
            ceiling = None if args.no_ceiling else bench_ceiling(client, n, args.hosts)
            theirs = None if args.no_scrapy_redis else bench_theirs(raw, n, args.hosts, args.sample)
            rows.append((n, ours, ceiling, theirs))
            line = (
                f"{n:>10,} URLs: ours push {ours.push:,.0f}/s, pop {ours.pop:,.0f}/s,"
                f" {ours.bytes_per_url:.0f} B/URL ({buckets:,} seen buckets),"
                f" crawl shape {ours.crawl_pages:,.0f} pages/s;"
                f" CPU µs a URL (Redis + client) push {ours.push_cpu[0]:.1f}"
                f" + {ours.push_cpu[1]:.1f}, pop {ours.pop_cpu[0]:.1f} + {ours.pop_cpu[1]:.1f}"
            )
            if ceiling:
                line += (
                    f"; Redis's ceiling push {ceiling.push:,.0f}/s, pop {ceiling.pop:,.0f}/s"
                    f" (ours' shares {share(ours.push, ceiling.push)},"
                    f" {share(ours.pop, ceiling.pop)}), a command per URL push"
                    f" {ceiling.push_each:,.0f}/s, pop {ceiling.pop_each:,.0f}/s"
                )
            if theirs:
                line += (
                    f"; scrapy-redis {theirs.request_bytes:.0f} + {theirs.fingerprint_bytes:.0f}"
                    f" B, push {theirs.push:,.0f}/s, pop {theirs.pop:,.0f}/s"
                )
            print(line, flush=True)
    print(
        "\n| queued URLs | push URLs/s | pop URLs/s | push+pop ops/s | crawl shape pages/s |"
        " ceiling push / pop URLs/s | push / pop share of the ceiling |"
        " a command per URL push / pop URLs/s |"
        " ours B/URL | scrapy-redis B/URL (request + fingerprint) | ours / scrapy-redis |"
        " scrapy-redis push / pop URLs/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n, ours, ceiling, theirs in rows:
        both = 2 / (1 / ours.push + 1 / ours.pop)
        sr = sr_rates = ratio = top = shares = each = "-"
        if ceiling:
            top = f"{ceiling.push:,.0f} / {ceiling.pop:,.0f}"
            shares = f"{share(ours.push, ceiling.push)} / {share(ours.pop, ceiling.pop)}"
            each = f"{ceiling.push_each:,.0f} / {ceiling.pop_each:,.0f}"
        if theirs:
            total = theirs.request_bytes + theirs.fingerprint_bytes
            sr = f"{total:.0f} ({theirs.request_bytes:.0f} + {theirs.fingerprint_bytes:.0f})"
            ratio = f"{ours.bytes_per_url / total:.2f}"
            sr_rates = f"{theirs.push:,.0f} / {theirs.pop:,.0f}"
        print(
            f"| {n:,} | {ours.push:,.0f} | {ours.pop:,.0f} | {both:,.0f} |"
            f" {ours.crawl_pages:,.0f} | {top} | {shares} | {each} |"
            f" {ours.bytes_per_url:.0f} | {sr} | {ratio} | {sr_rates} |"
        )


if __name__ == "__main__":
    main()
