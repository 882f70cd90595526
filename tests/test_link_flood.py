"""A page of a hundred thousand links, crawled by two processes on one Redis: its links are
capped and scored in slices, so the process that fetched it goes on fetching and beating, the
other never takes its leases back, neither grows past a few hundred MB, and the memory the page
took goes back to the system after it."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import redis

from focused.lab.crawlproc import memory_until_done
from focused.lab.webs.bundle import url_key
from focused.lab.webs.generate import generate_web
from focused.lab.webs.hostile import link_flood
from focused.lab.webs.server import ServedWeb
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.reads import Reader
from tests.conftest import Crawl, final_stats
from tests.test_crawl import served_pages

pytestmark = pytest.mark.crawl

LINKS = 100_000
RSS_LIMIT = 600 * 2**20
# Default settings but a short host delay. A process is taken for dead after three missed beats
# of FOCUSED_HEARTBEAT_S (5 s); the one that reads the page must not stop fetching for two
# (it stopped for 30 s when it scored and glossed every anchor at once).
SETTINGS = {"FOCUSED_HOST_DELAY": 0.05}
MAX_GAP_S = 2 * 5.0
# What the page may leave in its process's memory (about 20 MB; 115 MB when glibc kept it).
MEMORY_LEFT = 60 * 2**20


def test_a_page_of_a_hundred_thousand_links_is_fetched_once_by_two_processes(
    tmp_path: Path, redis_home: Path, redis_client: redis.Redis, crawl_name: str
):
    flood = link_flood(LINKS)
    web = generate_web(
        tmp_path / "web",
        n_pages=300,
        n_hosts=20,
        seed=1,
        extra_pages=flood.records,
        seed_links=[(flood.url, "Every cycling link")],
    )
    with ServedWeb(web, log_path=tmp_path / "served.jsonl") as served:
        crawl = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)
        processes = [crawl.start(f"{n}.jsonl", **SETTINGS) for n in (1, 2)]
        try:
            peaks, last = memory_until_done(processes)
        finally:
            for process in processes:
                if process.poll() is None:
                    process.kill()
    assert [process.wait() for process in processes] == [0, 0], crawl.log("1.jsonl")[-3000:]
    pages = served_pages(tmp_path / "served.jsonl")
    assert sum(entry["url"] == flood.url for entry in pages) == 1
    fetched = Counter(url_key(entry["url"]) for entry in pages if entry["status"] < 500)
    assert max(fetched.values()) == 1  # no URL fetched twice
    counts = redis_client.hgetall(keys.prefix(crawl.name) + keys.STATS)
    assert int(counts.get("lease_reclaimed", 0)) == 0  # no live process taken for dead
    assert crawl_status(Reader(redis_client), crawl.name)["in_flight"] == 0
    assert max(peaks) < RSS_LIMIT, f"{max(peaks) / 2**20:.0f} MB"
    # The process that had the page took the best 1,000 of its links and counted the rest;
    # it went on fetching meanwhile.
    stats = [final_stats(crawl.log(f"{n}.jsonl")) for n in (1, 2)]
    assert sum(s.get("focused/links/capped", 0) for s in stats) == LINKS - 1000
    times = sorted(entry["time"] for entry in pages)
    assert max(b - a for a, b in zip(times, times[1:], strict=False)) < MAX_GAP_S
    # Its memory went back to the system after the page: it ended about as big as the other.
    reader = max((0, 1), key=lambda n: stats[n].get("focused/links/capped", 0))
    assert stats[reader]["focused/memory/given_back"] >= 1
    assert last[reader] - last[1 - reader] < MEMORY_LEFT, [f"{rss / 2**20:.0f} MB" for rss in last]
