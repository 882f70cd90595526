"""Redis refusing writes (used memory over ``maxmemory``, a read-only replica, a snapshot it
cannot save) and Redis wanting a password: the crawl stops with one line and exit code 3 and
loses no fetched page; the periodic jobs back off; a missing password is one line at once.

Real servers only: redis-servers of the tests' own, run as ``focused redis serve`` runs them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import pytest
import redis
from scrapy.exceptions import DropItem
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler
from twisted.internet import defer
from twisted.python.failure import Failure

from focused.commands.crawl import EXIT_CODES
from focused.errors import REDIS_REFUSED, FocusedError
from focused.lab.webs.bundle import url_key
from focused.links.urls import origin
from focused.monitor.snapshot import crawl_status
from focused.pipelines.frontier import FrontierPipeline
from focused.store.client import connect
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Ack, Acked, Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.periodic import PeriodicJob
from focused.store.reads import Reader
from focused.store.retries import REFUSALS, RedisRefused, refusal, retrying
from tests.conftest import RedisServer, focused, free_port, stop, wait_for
from tests.test_crawl import reachable, served_pages
from tests.test_durability import fetched

OOM_LINE = (
    "Redis refuses writes: its used memory is over maxmemory (OOM); raise maxmemory or free "
    "memory, then resume the crawl; stopping it"
)


def test_a_crawl_whose_redis_reaches_maxmemory_exits_3_and_loses_nothing(crawl, served, own_redis):
    assert EXIT_CODES[REDIS_REFUSED] == 3
    client = connect(own_redis.url)
    fast = {"FOCUSED_HOST_DELAY": 0.05, "CONCURRENT_REQUESTS": 4, "FOCUSED_HEARTBEAT_S": 1}
    # The distiller as often as it goes, in its thread: the crawl does not wait for its retries.
    fast |= {"FOCUSED_DISTILL_PAGES": 5, "FOCUSED_DISTILL_INTERVAL": 1}
    crawl.extra_env["FOCUSED_REDIS_URL"] = own_redis.url
    process = crawl.start("first.jsonl", **fast)
    try:
        wait_for(lambda: fetched(client, crawl.name) >= 30, 120)
        client.config_set("maxmemory-policy", "noeviction")
        client.config_set("maxmemory", 1)  # every write that may add memory is refused
        refused = time.monotonic()
        assert process.wait(60) == 3, crawl.log("first.jsonl")[-3000:]
        took = time.monotonic() - refused
    finally:
        if process.poll() is None:
            process.kill()
    log = crawl.log("first.jsonl")
    assert f"Spider closed ({REDIS_REFUSED})" in log and "Traceback" not in log, log[-3000:]
    errors = [line for line in log.splitlines() if " ERROR: " in line]
    assert len(errors) == 1 and errors[0].endswith(OOM_LINE), errors
    assert log.count("Distiller skipped") <= 1 and took < 45
    first = {url_key(item["url"]) for item in crawl.feed("first.jsonl")}
    pages = {url_key(e["url"]) for e in served_pages(served.log_path) if e["status"] == 200}
    unfed = pages - first  # fetched, never acknowledged: they must come back
    assert unfed  # the test would show nothing otherwise
    client.config_set("maxmemory", 0)
    crawl.run("last.jsonl", **fast)
    status = crawl_status(Reader(client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    last = {url_key(item["url"]) for item in crawl.feed("last.jsonl")}
    assert unfed <= last  # every page fetched and not in the first feed is in the second
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys  # no URL lost
    print(f"refused -> exit 3 in {took:.1f} s; {len(unfed)} unacknowledged pages refetched")


def refused(error: Exception) -> str:
    """The message of the RedisRefused that ``retrying`` makes of ``error``."""
    with pytest.raises(RedisRefused) as raised:
        retrying(lambda: (_ for _ in ()).throw(error), retries=0)
    return str(raised.value)


def test_refusals_are_told_apart_by_their_code_in_each_reply_redis_gives():
    oom = "command not allowed when used memory > 'maxmemory'."
    readonly = "You can't write against a read only replica."
    misconf = "MISCONF Redis is configured to save RDB snapshots, but it's currently unable"
    script = "Error running script (call to f_d55447cc): @user_script:1: @user_script: 1: -"
    for error, code in [
        (redis.OutOfMemoryError(oom), "OOM"),  # a command's, Redis 6 and 7, and a script's in 7
        (redis.ResponseError(f"{script}OOM {oom}"), "OOM"),  # a script's in Redis 6
        (redis.ReadOnlyError(readonly), "READONLY"),
        (redis.ResponseError(f"{script}READONLY {readonly}"), "READONLY"),
        (redis.ResponseError(misconf), "MISCONF"),
        (redis.ResponseError(f"{script}MISCONF Redis is configured"), "MISCONF"),
        (redis.ResponseError("NOREPLICAS Not enough good replicas to write."), "NOREPLICAS"),
        (redis.ResponseError(f"{script}NOREPLICAS Not enough good replicas"), "NOREPLICAS"),
    ]:
        assert refused(error) == f"Redis refuses writes: {REFUSALS[code]}"
        assert refusal(error) == REFUSALS[code]
    assert refusal(redis.ResponseError("WRONGTYPE Operation against a key")) is None
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):  # not retried: a bug, raised
        retrying(lambda: (_ for _ in ()).throw(redis.ResponseError("WRONGTYPE x")), retries=3)


def test_each_refusal_of_a_real_server_is_retried_then_named(own_redis):
    client = connect(own_redis.url)
    script = client.register_script("return redis.call('set', KEYS[1], ARGV[1])")
    retries: list = []

    def retried(attempt: int, error: Exception) -> None:
        retries.append(error)

    def cause() -> str:
        retries.clear()
        for call in (lambda: client.set("k", 1), lambda: script(["k"], [1])):  # and a script
            with pytest.raises(RedisRefused) as raised:
                retrying(call, retries=1, on_retry=retried)
        assert len(retries) == 2 and all(isinstance(e, RedisRefused) for e in retries)
        return str(raised.value)

    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    assert cause() == f"Redis refuses writes: {REFUSALS['OOM']}"
    client.config_set("maxmemory", 0)
    client.replicaof("127.0.0.1", free_port())  # a replica of a master that is not there
    assert cause() == f"Redis refuses writes: {REFUSALS['READONLY']}"
    client.replicaof("no", "one")
    gone = own_redis.folder / "gone"  # a snapshot that cannot be written
    gone.mkdir()
    client.config_set("dir", str(gone))
    gone.rmdir()
    client.config_set("save", "3600 1")
    client.config_set("stop-writes-on-bgsave-error", "yes")
    client.bgsave()
    wait_for(lambda: client.info("persistence")["rdb_last_bgsave_status"] == "err", 20)
    assert cause() == f"Redis refuses writes: {REFUSALS['MISCONF']}"
    client.config_set("stop-writes-on-bgsave-error", "no")
    client.config_set("dir", str(own_redis.folder))
    client.config_set("min-replicas-to-write", 1)  # and it has none
    assert cause() == f"Redis refuses writes: {REFUSALS['NOREPLICAS']}"
    client.config_set("min-replicas-to-write", 0)
    assert retrying(lambda: client.set("k", 2), retries=0)  # writes again


def test_periodic_jobs_back_off_while_redis_refuses_writes(own_redis, caplog):
    client = connect(own_redis.url)
    runs: list = []
    job = PeriodicJob(
        "Test job",
        lambda lease: runs.append(1),
        client=client,
        lock="test:lock",
        lock_s=5,
        call=partial(retrying, retries=0),
        every=1,
        stats=MemoryStatsCollector(get_crawler()),
        failures="focused/test/failed",
        background=False,
    )
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)  # the lock's SET is refused
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="focused.store.periodic"):
        while time.monotonic() - started < 4:  # offered as often as the distiller offers it
            job.offer(100, 0)
            time.sleep(0.05)
        assert runs == [] and job.stats.get_value("focused/test/failed") == 3  # at 0, 1, 3 s
        client.config_set("maxmemory", 0)
        wait_for(lambda: job.offer(100, 0), 10)
    assert runs == [1]
    skipped, again = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert skipped == (
        "WARNING",
        f"Test job skipped: Redis refuses writes: {REFUSALS['OOM']}; tried again in 1 s at the "
        "earliest, then less often while it fails",
    )
    assert again == ("INFO", "Test job ran again after 3 failed runs")


@pytest.fixture
def password_redis(tmp_path: Path) -> Iterator[RedisServer]:
    """A redis-server of the test's own that requires the password ``secret``."""
    server = RedisServer(tmp_path / "redis", password="secret")
    server.start()
    try:
        yield server
    finally:
        stop(server.process, 30)


@pytest.mark.redis  # its server
def test_a_missing_password_is_one_line_at_once(password_redis):
    url = password_redis.url
    started = time.monotonic()
    with pytest.raises(FocusedError) as raised:
        connect(url)
    assert time.monotonic() - started < 2  # not retried as an outage
    assert str(raised.value) == (
        f"Redis at {url} requires a password: put it in the URL, "
        "redis://:PASSWORD@host:port/0 (redis://USER:PASSWORD@host:port/0 for an ACL user)"
    )
    wrong = url.replace("//", "//:wrong@")
    with pytest.raises(FocusedError, match=r"^Redis at redis://:\*\*\*@.* refused the pass"):
        connect(wrong)
    assert connect(url.replace("//", "//:secret@")).ping()
    result = focused("status", "--redis-url", url)
    assert result.returncode == 2 and time.monotonic() - started < 30
    assert result.stderr == f"focused: error: {raised.value}\n"


def test_a_store_that_gives_redis_up_ends_its_threads_retries(own_redis):
    client = connect(own_redis.url)
    lost: list = []
    store = CrawlStore(client, "refused", retries=0, on_lost=lost.append)
    worker = store.for_thread()
    worker.retries = 8  # about 16 s of retries
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    with ThreadPoolExecutor(1) as pool:
        retried = pool.submit(worker.retrying, lambda: client.set("k", 1))
        time.sleep(0.5)
        started = time.monotonic()
        with pytest.raises(RedisRefused):
            store.retrying(lambda: client.set("k", 1))
        with pytest.raises(RedisRefused):
            retried.result(timeout=5)
        assert time.monotonic() - started < 2
    assert len(lost) == 1 and worker.lost and store.lost  # reported once, by the crawl's own
    with pytest.raises(RedisRefused):
        worker.retrying(lambda: client.set("k", 1))
    assert len(lost) == 1


def test_a_thread_that_gives_redis_up_leaves_the_crawl_its_own_logged_retries(own_redis):
    client = connect(own_redis.url)
    retried: list = []
    lost: list = []
    store = CrawlStore(
        client, "refused", retries=2, on_retry=lambda n, _: retried.append(n), on_lost=lost.append
    )
    worker = store.for_thread()
    worker.retries = 0
    client.config_set("maxmemory-policy", "noeviction")
    client.config_set("maxmemory", 1)
    with pytest.raises(RedisRefused):
        worker.retrying(lambda: client.set("k", 1))
    assert not store.lost and not lost
    with pytest.raises(RedisRefused):
        store.retrying(lambda: client.set("k", 1))
    assert retried == [1, 2] and len(lost) == 1 and worker.lost


@pytest.mark.cluster
def test_pages_a_master_refuses_come_back_and_the_others_go_on(cluster, crawl_name):
    frontier = RedisFrontier.for_crawl(
        cluster, crawl_name, host_delay=0.0, host_concurrency=10, retries=0
    )
    shards = frontier.store.shards
    hosts = {shards.of_host(f"http://h{i}.test"): f"http://h{i}.test" for i in range(30)}
    assert sorted(hosts) == [0, 1, 2]
    frontier.push_many([Link(f"{host}/p", 0.5) for host in hosts.values()])
    leased = frontier.pop_ready(3).leased
    pipeline = FrontierPipeline(frontier, None, get_crawler().stats, batch=3)  # type: ignore[arg-type]
    outcomes: dict[str, object] = {}
    for lease in leased:
        acked: defer.Deferred = defer.Deferred()
        acked.addBoth(lambda result, url=lease.url: outcomes.__setitem__(url, result))
        shard = shards.of_host(origin(lease.url))
        pipeline.waiting.append((Ack(lease.lease, lease.url, "bad"), acked, shard))
    last = cluster.get_node_from_key(shards.prefixes[2])  # called last
    cluster.config_set("min-replicas-to-write", 1, target_nodes=last)  # it has none: refuses
    try:
        pipeline.flush()
    finally:
        cluster.config_set("min-replicas-to-write", 0, target_nodes=last)
    for shard, host in hosts.items():
        outcome = outcomes[f"{host}/p"]
        if shard == 2:  # not acknowledged, still leased: it comes back
            assert isinstance(outcome, Failure) and outcome.check(DropItem)
        else:  # acknowledged: its item goes on to the feed
            assert isinstance(outcome, Acked) and outcome.order % 3 == shard
    assert frontier.counts()["in_flight"] == 1


def test_a_crawl_without_the_password_stops_at_start_with_exit_2(crawl, password_redis):
    url = crawl.extra_env["FOCUSED_REDIS_URL"] = password_redis.url
    crawl.finish(crawl.start(), 2, 60)
    log = crawl.log()
    assert f"CRITICAL: focused: error: Redis at {url} requires a password: put it in" in log
    assert "Traceback" not in log and "Redis unreachable" not in log
