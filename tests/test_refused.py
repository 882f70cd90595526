"""Redis refusing writes (used memory over ``maxmemory``, a read-only replica, a snapshot it
cannot save) and Redis wanting a password: the crawl stops with one line and exit code 3 and
loses no fetched page; the periodic jobs back off; a missing password is one line at once.

Real servers only: redis-servers of the tests' own, run as ``focused redis serve`` runs them.
"""

from __future__ import annotations

import logging
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import pytest
import redis
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from focused.commands.crawl import EXIT_CODES
from focused.errors import REDIS_REFUSED, FocusedError
from focused.lab.webs.bundle import url_key
from focused.monitor.snapshot import crawl_status
from focused.store.connection import REFUSALS, RedisRefused, connect, refusal, retrying
from focused.store.crawl import CrawlStore
from focused.store.periodic import PeriodicJob
from focused.store.server import server_command
from tests.conftest import focused, free_port, stop, wait_for
from tests.test_crawl import reachable, served_pages
from tests.test_durability import Server, fetched, on_server


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    """A redis-server of the test's own, kept as ``focused redis serve`` keeps its data."""
    server = Server(tmp_path / "redis")
    server.start()
    try:
        yield server
    finally:
        server.kill()


OOM_LINE = (
    "Redis refuses writes: its used memory is over maxmemory (OOM); raise maxmemory or free "
    "memory, then resume the crawl; stopping it"
)


def test_a_crawl_whose_redis_reaches_maxmemory_exits_3_and_loses_nothing(crawl, served, own_server):
    assert EXIT_CODES[REDIS_REFUSED] == 3
    client = connect(own_server.url)
    fast = {"FOCUSED_HOST_DELAY": 0.05, "CONCURRENT_REQUESTS": 4, "FOCUSED_HEARTBEAT_S": 1}
    # The distiller as often as it goes, in its thread: the crawl does not wait for its retries.
    fast |= {"FOCUSED_DISTILL_PAGES": 5, "FOCUSED_DISTILL_INTERVAL": 1}
    process = on_server(crawl, own_server).start("first.jsonl", **fast)
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
    status = crawl_status(client, crawl.name)
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
    ]:
        assert refused(error) == f"Redis refuses writes: {REFUSALS[code]}"
        assert refusal(error) == REFUSALS[code]
    assert refusal(redis.ResponseError("WRONGTYPE Operation against a key")) is None
    with pytest.raises(redis.ResponseError, match="WRONGTYPE"):  # not retried: a bug, raised
        retrying(lambda: (_ for _ in ()).throw(redis.ResponseError("WRONGTYPE x")), retries=3)


@pytest.mark.redis
def test_each_refusal_of_a_real_server_is_retried_then_named(own_server):
    client = connect(own_server.url)
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
    gone = own_server.folder / "gone"  # a snapshot that cannot be written
    gone.mkdir()
    client.config_set("dir", str(gone))
    gone.rmdir()
    client.config_set("save", "3600 1")
    client.config_set("stop-writes-on-bgsave-error", "yes")
    client.bgsave()
    wait_for(lambda: client.info("persistence")["rdb_last_bgsave_status"] == "err", 20)
    assert cause() == f"Redis refuses writes: {REFUSALS['MISCONF']}"
    client.config_set("stop-writes-on-bgsave-error", "no")
    client.config_set("dir", str(own_server.folder))
    assert retrying(lambda: client.set("k", 2), retries=0)  # writes again


@pytest.mark.redis
def test_periodic_jobs_back_off_while_redis_refuses_writes(own_server, caplog):
    client = connect(own_server.url)
    runs: list = []
    job = PeriodicJob(
        "Test job",
        lambda: runs.append(1),
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


@contextmanager
def password_server(folder: Path) -> Iterator[str]:
    """A redis-server of the project's that requires the password ``secret``: its URL without
    the password."""
    port = free_port()
    folder.mkdir()
    command = [*server_command(folder, port, "127.0.0.1"), "--requirepass", "secret"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    try:
        probe = redis.Redis(port=port, password="secret", retry=None)
        wait_for(lambda: answers(probe), 20)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        stop(process, 30)


def answers(probe: redis.Redis) -> bool:
    try:
        return bool(probe.ping())
    except redis.ConnectionError:
        return False


@pytest.mark.redis
def test_a_missing_password_is_one_line_at_once(tmp_path):
    with password_server(tmp_path / "redis") as url:
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


@pytest.mark.redis
def test_a_store_that_gives_redis_up_ends_its_threads_retries(own_server):
    client = connect(own_server.url)
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
