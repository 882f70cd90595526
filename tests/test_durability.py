"""What survives a kill or a Redis outage: outages counted (the short ones redis-py's retries
hide included), exit code 3 when a crawl stops for Redis, and every acknowledged page in the
feeds, the WARC files and ``focused export`` after crawl processes are killed with SIGKILL.

Real processes only: crawls, ``focused`` commands and redis-servers started, killed and
started again on the same port, with the project's own server command line.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import redis
from scrapy.utils.test import get_crawler
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focused.commands.crawl import EXIT_CODES, REDIS_LOST
from focused.errors import FocusedError
from focused.extensions.feeds import FlushedFileFeedStorage
from focused.extensions.outages import RedisOutages
from focused.settings import defaults
from focused.store import keys
from focused.store.client import connect
from focused.store.frontier.records import page_urls
from focused.store.outages import OUTAGES
from focused.store.retries import retrying
from tests.conftest import final_stats, focused, wait_for


def fetched(client: redis.Redis, crawl: str) -> int:
    return int(client.hget(keys.prefix(crawl) + keys.STATS, "fetched") or 0)


def test_a_dropped_connection_made_again_at_once_is_no_outage(own_redis, caplog):
    client = connect(own_redis.url)
    client.set("x", 1)
    before = OUTAGES.count
    with caplog.at_level(logging.INFO, logger="focused.store.outages"):
        redis.Redis.from_url(own_redis.url).client_kill_filter(_id=client.client_id())
        assert client.get("x") == "1"  # one failed attempt, then a new connection
    assert OUTAGES.count == before and "Redis" not in caplog.text


def test_an_idle_pooled_connection_does_not_end_an_outage(own_redis, caplog):
    idle, other = connect(own_redis.url), connect(own_redis.url)
    for client in (idle, other):
        client.ping()  # its pool keeps the connection, idle
    before = OUTAGES.count
    with caplog.at_level(logging.INFO, logger="focused.store.outages"):
        own_redis.kill()
        with pytest.raises(FocusedError):  # the outage starts
            retrying(lambda: other.get("x"), retries=0)
        # redis-py takes the idle connection (a "success": it has a socket), then finds its
        # server gone.
        with pytest.raises(FocusedError):
            retrying(lambda: idle.get("x"), retries=0)
    assert OUTAGES.count == before + 1
    assert "reachable again" not in caplog.text and caplog.text.count("unreachable") == 1


def test_an_outage_the_retries_ride_out_is_counted_and_logged_once(own_redis, caplog):
    client = connect(own_redis.url)
    client.set("x", 1)
    stats = get_crawler().stats
    extension = RedisOutages(stats)
    extension.spider_opened()
    before = OUTAGES.count
    try:
        with caplog.at_level(logging.INFO, logger="focused.store.outages"):
            own_redis.kill()
            restart = threading.Timer(2.0, own_redis.start)
            restart.start()
            # The frontier's own retries (FOCUSED_REDIS_RETRIES) around redis-py's.
            assert retrying(lambda: client.incr("x"), retries=20) == 2
            restart.join()
    finally:
        extension.spider_closed()
    assert OUTAGES.count == before + 1 and stats.get_value("focused/redis/outages") == 1
    assert 2.0 <= stats.get_value("focused/redis/outage_s") < 15
    lines = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert [level for level, _ in lines] == ["WARNING", "INFO"], lines
    assert lines[0][1].startswith("Redis unreachable (") and lines[0][1].endswith("; retrying")
    seconds = float(re.fullmatch(r"Redis reachable again after ([\d.]+) s", lines[1][1])[1])
    assert abs(seconds - stats.get_value("focused/redis/outage_s")) < 0.1


def test_a_crawl_rides_out_a_five_second_outage_and_counts_it(crawl, own_redis):
    client = connect(own_redis.url)
    crawl.extra_env["FOCUSED_REDIS_URL"] = own_redis.url
    process = crawl.start(CLOSESPIDER_ITEMCOUNT=40, FOCUSED_HOST_DELAY=0.2, CONCURRENT_REQUESTS=2)
    try:
        wait_for(lambda: fetched(client, crawl.name) >= 10)
        own_redis.kill()  # its append-only log keeps what it acknowledged
        time.sleep(5)
        own_redis.start()
        assert process.wait(240) == 0, crawl.log()[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
    log = crawl.log()
    stats = final_stats(log)
    assert stats["focused/redis/outages"] == 1 and 4 <= stats["focused/redis/outage_s"] < 30
    assert log.count("Redis unreachable (") == 1 and log.count("Redis reachable again") == 1
    assert "focused_redis_lost" not in log
    # Every item of the limit acknowledged: fetched, or failed (robots.txt forbids some).
    failed = int(client.hget(keys.prefix(crawl.name) + keys.STATS, "failed") or 0)
    assert fetched(client, crawl.name) + failed == stats["item_scraped_count"] == 40


def test_a_crawl_that_loses_redis_exits_3(crawl, own_redis):
    assert EXIT_CODES[REDIS_LOST] == 3
    client = connect(own_redis.url)
    crawl.extra_env["FOCUSED_REDIS_URL"] = own_redis.url
    process = crawl.start(FOCUSED_REDIS_RETRIES=2, FOCUSED_HOST_DELAY=0.2, CONCURRENT_REQUESTS=2)
    try:
        wait_for(lambda: fetched(client, crawl.name) >= 5)
        own_redis.kill()
        assert process.wait(120) == 3
    finally:
        if process.poll() is None:
            process.kill()
    log = crawl.log()
    assert "Spider closed (focused_redis_lost)" in log and "Traceback" not in log
    stats = final_stats(log)
    assert stats["focused/redis/outages"] == 1 and stats["focused/redis/outage_s"] > 1


def test_a_redis_that_never_answers_is_one_line_within_seconds(silent_redis):
    started = time.monotonic()
    with pytest.raises(FocusedError) as raised:
        connect(silent_redis)
    assert time.monotonic() - started < 8  # one attempt: 5 s for the reply
    assert str(raised.value) == f"cannot reach {silent_redis}: Timeout reading from socket"
    result = focused("status", "--redis-url", silent_redis)
    assert result.returncode == 2 and time.monotonic() - started < 30
    assert result.stderr == f"focused: error: {raised.value}\n"


def test_tls_to_a_plain_redis_is_one_line_within_seconds(own_redis):
    url = own_redis.url.replace("redis://", "rediss://")
    started = time.monotonic()
    with pytest.raises(FocusedError, match=f"^cannot reach {url}: "):
        connect(url)
    assert time.monotonic() - started < 8


def test_a_crawl_whose_redis_never_answers_stops_at_start_with_exit_2(crawl, silent_redis):
    crawl.extra_env["FOCUSED_REDIS_URL"] = silent_redis
    started = time.monotonic()
    crawl.finish(crawl.start(), 2, 60)
    assert time.monotonic() - started < 30  # 335 s with a 30 s timeout retried by redis-py
    log = crawl.log()
    assert f"CRITICAL: focused: error: cannot reach {silent_redis}: Timeout" in log
    assert "Traceback" not in log


def test_a_crawl_whose_redis_stops_answering_logs_it_at_once_and_exits_3(crawl, own_redis):
    client = connect(own_redis.url)
    crawl.extra_env["FOCUSED_REDIS_URL"] = own_redis.url
    process = crawl.start(FOCUSED_HOST_DELAY=0.2, CONCURRENT_REQUESTS=2)
    try:
        wait_for(lambda: fetched(client, crawl.name) >= 5)
        own_redis.pause()
        paused = time.monotonic()
        wait_for(lambda: "Redis unreachable (" in crawl.log(), timeout=20)
        noticed = time.monotonic() - paused
        assert process.wait(120) == 3, crawl.log()[-3000:]
        stopped = time.monotonic() - paused
    finally:
        own_redis.resume()
        if process.poll() is None:
            process.kill()
    assert noticed < 12 and stopped < 90, (noticed, stopped)
    log = crawl.log()
    assert "Spider closed (focused_redis_lost)" in log and "Traceback" not in log
    assert log.count("Redis unreachable (Timeout") == 1


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_signal_stops_a_crawl_whose_redis_stopped_answering(crawl, own_redis, number):
    client = connect(own_redis.url)
    crawl.extra_env["FOCUSED_REDIS_URL"] = own_redis.url
    process = crawl.start(FOCUSED_HOST_DELAY=0.2, CONCURRENT_REQUESTS=2)
    try:
        wait_for(lambda: fetched(client, crawl.name) >= 5)
        own_redis.pause()
        wait_for(lambda: "Redis unreachable (" in crawl.log(), timeout=20)
        process.send_signal(number)
        signalled = time.monotonic()
        code = process.wait(60)
        stopped = time.monotonic() - signalled
    finally:
        own_redis.resume()
        if process.poll() is None:
            process.kill()
    log = crawl.log()
    assert stopped < 20 and code == 3, (stopped, code, log[-3000:])
    lost = re.search(
        r"ERROR: Redis connection lost and not back after (\d) of 8 retries, the "
        r"process asked to stop: .*; stopping the crawl$",
        log,
        re.MULTILINE,
    )
    assert lost and int(lost[1]) < 3, log[-3000:]
    assert "Traceback" not in log


@pytest.mark.crawl
def test_the_projects_crawl_command_documents_its_exit_codes(tmp_path):
    # scrapy.cmdline finds the command through the project's COMMANDS_MODULE, as scrapyd's
    # runner does (it runs scrapy.cmdline.execute with the project's settings).
    result = subprocess.run(
        [sys.executable, "-m", "scrapy", "crawl", "-h"],
        capture_output=True,
        text=True,
        env={**os.environ, "SCRAPY_SETTINGS_MODULE": "focused.settings"},
        cwd=tmp_path,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert "Exit code 3 when the crawl stopped" in " ".join(result.stdout.split())


def read_feed(path: Path) -> list[dict]:
    """A feed's items; a last line cut short by the kill (at most one) is left out."""
    lines = path.read_text().splitlines() if path.exists() else []
    items = []
    for number, line in enumerate(lines):
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            assert number == len(lines) - 1, f"{path}: line {number + 1} is not JSON"
    return items


def warc_urls(path: Path) -> list[str]:
    """Target URIs of the response and revisit records of a WARC file, read with warcio up to
    the end or to a last record cut short by a kill."""
    urls = []
    with path.open("rb") as f:
        try:
            for record in ArchiveIterator(f):
                record.content_stream().read()
                if record.rec_type in ("response", "revisit"):
                    urls.append(record.rec_headers.get_header("WARC-Target-URI"))
        except ArchiveLoadFailed:
            pass  # a partial last record: those before it are whole
    return urls


def test_killed_crawls_lose_no_acknowledged_page(crawl, redis_client, redis_home, tmp_path):
    """Each process is killed with SIGKILL after a few acknowledged pages: its feed and its
    WARC file hold every page it acknowledged but those of its last acknowledgement batch, and
    ``focused export`` all of them, in fetch order, with the feed's values."""
    warc = tmp_path / "warc"
    settings = {
        "FOCUSED_HOST_DELAY": 0.3,
        "CONCURRENT_REQUESTS": 2,
        "FOCUSED_LEASE_S": 10,
        "FOCUSED_WARC": "all",
        "FOCUSED_WARC_DIR": str(warc),
    }
    done = 0
    for kill in range(3):
        feed = f"feed-{kill}.jsonl"
        process = crawl.start(feed, **settings)
        try:
            wait_for(lambda done=done: fetched(redis_client, crawl.name) >= done + 6, 120)
        finally:
            process.send_signal(signal.SIGKILL)
            process.wait()
        now = fetched(redis_client, crawl.name)
        acknowledged = page_urls(redis_client, crawl.name, range(done + 1, now + 1))
        assert len(acknowledged) == now - done >= 6
        in_feed = {item["url"] for item in read_feed(tmp_path / feed)}
        # Pages are acknowledged a batch at a time, then written: a kill right after a batch's
        # acknowledgement leaves at most that batch out of the feed and the WARC file.
        last_batch = set(acknowledged[-defaults.FOCUSED_ACK_BATCH :])
        assert set(acknowledged) - in_feed <= last_batch, (kill, set(acknowledged) - in_feed)
        # Its WARC file was never closed; none was started if it was killed before its first
        # page was written (right after its first acknowledgement).
        opened = list(warc.glob(f"*-{process.pid}~*.warc.gz.open"))
        assert len(opened) <= 1 and not list(warc.glob(f"*-{process.pid}~*.warc.gz"))
        in_warc = set(warc_urls(opened[0])) if opened else set()
        assert set(acknowledged) - in_warc <= last_batch, (kill, set(acknowledged) - in_warc)
        done = now

    result = focused("export", crawl.name, "--home", str(redis_home), "-o", str(tmp_path / "x"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.endswith(f"wrote {done} pages of crawl {crawl.name!r} to {tmp_path}/x\n")
    exported = read_feed(tmp_path / "x")
    assert [item["order"] for item in exported] == list(range(1, done + 1))
    orders = range(1, done + 1)
    assert [item["url"] for item in exported] == page_urls(redis_client, crawl.name, orders)
    feeds = [read_feed(tmp_path / f"feed-{kill}.jsonl") for kill in range(3)]
    fed = {item["order"]: item for feed in feeds for item in feed}
    # Each kill left at most its last batch out of the feeds (checked above, kill by kill).
    assert len(fed) >= done - 3 * defaults.FOCUSED_ACK_BATCH
    assert any("relevance" in item for item in exported)
    for item in exported:  # the feed's names and values, where Redis has them
        if item["order"] in fed:
            assert item.items() <= fed[item["order"]].items(), (item, fed[item["order"]])
    check_parquet_export(crawl, redis_home, warc, tmp_path, done, fed)


def check_parquet_export(crawl, redis_home, warc: Path, tmp_path: Path, done: int, fed) -> None:
    """The data set of the killed crawls has a row per acknowledged page, the WARC files'
    ``.open`` files read up to their last whole record; a row's WARC offset is its page's
    record."""
    out = tmp_path / "pages.parquet"
    options = ["--format", "parquet", "-o", str(out), "--warc-dir", str(warc)]
    result = focused("export", crawl.name, "--home", str(redis_home), *options)
    assert result.returncode == 0, result.stderr
    rows = pq.read_table(out).to_pylist()
    assert sorted(row["order"] for row in rows) == list(range(1, done + 1))
    described = [row for row in rows if row["title"] is not None]
    assert len(described) >= done - 3 * defaults.FOCUSED_ACK_BATCH
    for row in described:
        if row["order"] in fed:
            assert row["url"] == fed[row["order"]]["url"]
            assert row["relevance"] == fed[row["order"]]["relevance"]
        assert row["warc_file"] is not None  # FOCUSED_WARC=all
        with (warc / row["warc_file"]).open("rb") as stream:
            stream.seek(row["warc_offset"])
            record = next(iter(ArchiveIterator(stream)))
        assert record.rec_headers.get_header("WARC-Target-URI") == row["url"]


@pytest.mark.crawl
def test_export_of_an_unknown_crawl_is_one_line(redis_client, redis_home, tmp_path):
    out = tmp_path / "x"
    result = focused("export", "no-such-crawl", "--home", str(redis_home), "-o", str(out))
    assert result.returncode == 2
    error = "focused: error: no crawl named 'no-such-crawl' in this Redis ("
    assert result.stderr.splitlines()[-1].startswith(error)
    assert not out.exists()


def test_an_appended_feed_loses_a_killed_writers_partial_line(tmp_path, caplog):
    path = tmp_path / "feed.jsonl"
    path.write_bytes(b'{"url": "a"}\n{"url": "b"}\n{"url": "c", "ti')
    storage = FlushedFileFeedStorage(str(path), feed_options={"format": "jsonlines"})
    with caplog.at_level(logging.WARNING), storage.open(None) as out:
        out.write(b'{"url": "d"}\n')
        # Written through at once: another reader sees it before the file is closed.
        assert path.read_bytes().endswith(b'{"url": "b"}\n{"url": "d"}\n')
    assert "dropped its 16 bytes" in caplog.text
    # A whole last line, or another format, is left as it is.
    for content, feed_format in ((b'{"url": "a"}\n', "jsonlines"), (b"a,b\nc,", "csv")):
        path.write_bytes(content)
        FlushedFileFeedStorage(str(path), feed_options={"format": feed_format}).open(None).close()
        assert path.read_bytes() == content
