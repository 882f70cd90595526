"""What the readers of a crawl read of it: ``focused status`` and ``report``, the dashboard, the
Prometheus exporter and ``focused export``.

They only read, any number of them while any number of crawler processes write. Each read is a
few pipelined round trips and hands back plain records, every shard's added up or merged
(:mod:`focused.store.shards`); what the figures mean is :mod:`focused.monitor.snapshot`'s and
:mod:`focused.cli.export`'s.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import chain, zip_longest
from typing import TYPE_CHECKING, Any, cast

from focused.store import keys, scripts
from focused.store.client import REDIS_PARAMS
from focused.store.coverage import CoverageStore, coverage_record
from focused.store.crawl import CrawlStore, crawl_names, no_such_crawl
from focused.store.embedded import embedded_client, home_dir, stop_if_last
from focused.store.learning import Generation, LearningStore
from focused.store.shards import add_up, fetched_per_shard

if TYPE_CHECKING:
    import redis
    from redis.cluster import RedisCluster

    from focused.errors import FocusedError


@dataclass(frozen=True)
class StatusRecords:
    """A crawl's counters and queues: what its status is made of."""

    counts: dict[str, float]  # the ``stats`` hash
    in_flight: int  # URLs leased
    hosts_ready: int
    hosts_waiting: int
    hosts_held: int
    recent: list[str]  # the last classified pages' R values, newest first
    distill: dict[str, str]  # the distiller's last run (``distill``)
    learned: dict[str, str]  # a light topic's last refit (``learned``)
    meta: dict[str, str]  # what the crawl recorded of itself (``meta``)
    coverage: dict[str, Any]  # the last estimate of what is left to find (``coverage``)

    @property
    def empty(self) -> bool:
        """Whether Redis has nothing of the crawl (no counter, no lease)."""
        return not self.counts and not self.in_flight


@dataclass(frozen=True)
class DetailRecords:
    """The rest of a crawl's picture: its census, tries, curve, Scrapy stats and processes."""

    time: float  # Redis's clock, which stamps the heartbeats
    census: dict[str, float]  # classified pages per best category
    tries: dict[str, float]  # acknowledged URLs per failed tries before
    curve: dict[str, float]  # the harvest curve's buckets, every shard's added up
    curve_step: int  # classified pages per bucket: CURVE_BUCKET of each shard
    scrapy: dict[str, str]  # the processes' Scrapy stats, added up
    processes: dict[str, dict[str, str]]  # heartbeat records by process id, those still kept


@dataclass(frozen=True)
class FetchedRecords:
    """A crawl's ``url:`` records in fetch order, and the threshold its pages were judged by."""

    threshold: str | None
    records: Iterator[tuple[int, str]]  # (fetch order, ``url:`` record)


def newest_first(lists: Sequence[Sequence[str]], limit: int) -> list[str]:
    """Lists kept newest first (every shard's ``recent``) interleaved into one, newest first:
    at most ``limit`` values."""
    if len(lists) == 1:
        return list(lists[0][:limit])
    merged = chain.from_iterable(zip_longest(*lists))
    return [value for value in merged if value is not None][:limit]


class Reader:
    """The crawls of one Redis as their readers read them (module doc)."""

    def __init__(self, client: redis.Redis | RedisCluster):
        self.client = client

    def crawl_names(self) -> list[str]:
        """Names of the crawls this Redis has (:func:`focused.store.crawl.crawl_names`)."""
        return crawl_names(self.client)

    def no_such_crawl(self, name: str) -> FocusedError:
        """The error of a crawl this Redis does not have, naming its crawls
        (:func:`~focused.store.crawl.no_such_crawl`)."""
        return no_such_crawl(self.client, name)

    def status(self, crawl: str, recent: int) -> StatusRecords:
        """A crawl's counters and queues, with the R values of its last ``recent`` classified
        pages, in one round trip."""
        return _status(CrawlStore(self.client, crawl), recent)

    def snapshot(self, crawl: str, recent: int) -> tuple[StatusRecords, DetailRecords | None]:
        """A crawl's status and, unless it is empty, its details: three round trips."""
        store = CrawlStore(self.client, crawl)
        status = _status(store, recent)
        return status, None if status.empty else _details(store)

    def fetched(self, crawl: str) -> FetchedRecords | None:
        """The pages of a crawl fetched so far (each shard's up to its ``fetched`` count now),
        one HGETALL per 512 pages of a shard as they are iterated; None if there is no such
        crawl."""
        store = CrawlStore(self.client, crawl)
        pipe = self.client.pipeline(transaction=False)
        pipe.exists(store.key(keys.STATS))
        pipe.hget(store.key(keys.META), "threshold")
        exists, threshold = pipe.execute()
        if not exists:
            return None
        return FetchedRecords(
            threshold, _url_records(store, fetched_per_shard(self.client, store.shards))
        )

    def url_records(self, crawl: str, orders: Sequence[int]) -> list[str | None]:
        """The ``url:`` records of a crawl's pages by fetch order (None for an order it has
        no record of), in one round trip."""
        shards = CrawlStore(self.client, crawl).shards
        pipe = self.client.pipeline(transaction=False)
        for order in orders:
            pipe.hget(shards.record_key(keys.URLS, order), str(order))
        return pipe.execute() if orders else []

    def meta(self, crawl: str) -> dict[str, str]:
        """What a crawl recorded of itself (``meta``: its topic file and decisions, threshold,
        the settings its judge is made from...); empty if nothing."""
        key = CrawlStore(self.client, crawl).key(keys.META)
        return cast("dict[str, str]", self.client.hgetall(key))  # the client decodes

    def generation(self, crawl: str) -> Generation | None:
        """A light topic's last published refit (:class:`~focused.store.learning.Generation`),
        from which every process of the crawl fitted its model; None before the first."""
        return LearningStore(CrawlStore(self.client, crawl), sample=0).generation()

    def coverage_log(self, crawl: str) -> list[dict[str, Any]]:
        """Every estimate of what is left to find that a crawl recorded, oldest first."""
        return CoverageStore(CrawlStore(self.client, crawl)).history()


@contextmanager
def finished_crawls(home: str | os.PathLike) -> Iterator[Reader]:
    """A reader of the crawls a Redis embedded in ``home`` holds (never FOCUSED_REDIS_URL's),
    whose server is stopped again after, unless another process uses it: a reader of many
    homes of one finished crawl each (``focused evaluate``) would otherwise keep a server
    running per home until it exits."""
    folder = home_dir(home).resolve()
    client = embedded_client(folder, REDIS_PARAMS)
    try:
        yield Reader(client)
    finally:
        client.close()
        stop_if_last(folder)


def _status(store: CrawlStore, recent: int) -> StatusRecords:
    pipe = store._client.pipeline(transaction=False)
    for shard in range(len(store.shards)):
        pipe.hgetall(store.key(keys.STATS, shard=shard))
        pipe.zcard(store.key(keys.LEASES, shard=shard))
        pipe.zcard(store.key(keys.READY, shard=shard))
        pipe.zcard(store.key(keys.WAIT, shard=shard))
        pipe.zcard(store.key(keys.HELD, shard=shard))
        pipe.lrange(store.key(keys.RECENT, shard=shard), 0, recent - 1)
    pipe.hgetall(store.key(keys.DISTILL))
    pipe.hgetall(store.key(keys.LEARNED))
    pipe.hgetall(store.key(keys.META))
    pipe.hgetall(store.key(keys.COVERAGE))
    *replies, distilled, learned, meta, coverage = pipe.execute()
    stats, leased, ready, waiting, held, recents = (replies[i::6] for i in range(6))
    return StatusRecords(
        counts=add_up(stats),
        in_flight=sum(leased),
        hosts_ready=sum(ready),
        hosts_waiting=sum(waiting),
        hosts_held=sum(held),
        recent=newest_first(recents, recent),
        distill=distilled,
        learned=learned,
        meta=meta,
        coverage=coverage_record(coverage),
    )


def _details(store: CrawlStore) -> DetailRecords:
    client = store._client
    pipe = client.pipeline(transaction=False)
    # Redis's clock: TIME in a script (a cluster pipeline sends neither TIME nor ``eval``) on
    # a key, so that a cluster asks the master whose clock stamps the heartbeats read here.
    pipe.execute_command("EVAL", scripts.source("time"), 1, store.key(keys.PROCS))
    for shard in range(len(store.shards)):
        pipe.hgetall(store.key(keys.CENSUS, shard=shard))
        pipe.hgetall(store.key(keys.TRIES, shard=shard))
        pipe.hgetall(store.key(keys.CURVE, shard=shard))
    pipe.hgetall(store.key(keys.SCRAPY_STATS))
    pipe.zrange(store.key(keys.PROCS), 0, -1)  # shard 0's heartbeats: every process beats there
    (seconds, micros), *replies, scrapy, ids = pipe.execute()
    census, tries, curve = (add_up(replies[i::3]) for i in range(3))
    pipe = client.pipeline(transaction=False)
    for process_id in ids:
        pipe.hgetall(store.key(keys.PROC, process_id))
    records = pipe.execute() if ids else []
    return DetailRecords(
        time=int(seconds) + int(micros) / 1e6,
        census=census,
        tries=tries,
        curve=curve,
        curve_step=len(store.shards) * keys.CURVE_BUCKET,
        scrapy=scrapy,
        processes={i: record for i, record in zip(ids, records, strict=True) if record},
    )


def _url_records(store: CrawlStore, fetched: list[int]) -> Iterator[tuple[int, str]]:
    # Bucket b of every shard together holds a run of consecutive fetch orders.
    for bucket in range(max(fetched) // keys.URL_BUCKET + 1):
        pipe = store._client.pipeline(transaction=False)
        for shard in range(len(store.shards)):
            pipe.hgetall(store.key(keys.URLS, bucket, shard=shard))
        found = [
            (order, records[str(order)])
            for shard, records in enumerate(pipe.execute())
            for order in store.shards.orders(shard, fetched[shard], bucket)
            if str(order) in records
        ]
        yield from sorted(found)
