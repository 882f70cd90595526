"""Best-N-first (seed 003's BFS-N): the frontier's cap on a real Redis, whole batches in the
scheduler, and real crawls that share it."""

from __future__ import annotations

import random
import re
import threading

import pytest
import scrapy
from scrapy.statscollectors import MemoryStatsCollector
from scrapy.utils.test import get_crawler

from focused.items import META, Page, PageLink
from focused.monitor.snapshot import crawl_status
from focused.schedulers.scheduler import BATCH_POLL_S, FrontierScheduler
from focused.store import keys
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import unpack_score
from focused.store.reads import Reader
from focused.strategies.bestn import BestNFirst
from focused.strategies.registry import strategy_class
from focused.topic.judge import Verdict
from tests.conftest import final_stats, focused


def queued(f: RedisFrontier) -> dict[str, int]:
    """URL -> packed order of everything queued, host by host."""
    return {url: packed for host in f.queued_hosts() for _, packed, url in f.host_queue(host)}


def scheduled(f: RedisFrontier) -> set[str]:
    client = f.store._client
    return set(client.zrange(f.store.prefix + keys.READY, 0, -1)) | set(
        client.zrange(f.store.prefix + keys.WAIT, 0, -1)
    )


def test_drop_worst_keeps_exactly_the_best_and_counts_the_rest(frontier):
    f = frontier()
    rnd = random.Random(3)
    f.push_many([Link(f"http://h{rnd.randrange(7)}.test/{i}", i / 100) for i in range(60)])
    # Two good URLs failed once: one try behind, they are the worst whatever their score.
    retried = f.pop_ready(2).leased
    f.release([leased.lease for leased in retried], retry=True)
    before = queued(f)
    worst_first = sorted(before, key=lambda url: -before[url])
    assert {unpack_score(before[url])[0] for url in worst_first[:2]} == {1}

    assert f.drop_worst(20) == 40
    assert set(queued(f)) == set(worst_first[40:])
    counts = f.counts()
    assert (counts["queued"], counts["dropped/buffer"]) == (20, 40)
    assert f.drop_worst(20) == 0  # at the cap: nothing more
    assert f.drop_worst(25) == 0
    # The frontier still pops best first from what is left.
    popped = [leased.url for leased in f.pop_ready(100).leased]
    assert popped == sorted(worst_first[40:], key=lambda url: before[url])


def test_drop_worst_finds_hosts_ready_waiting_and_with_full_slots(frontier):
    f = frontier(host_delay=30.0, host_concurrency=1)
    f.push_many(
        [
            Link("http://good.test/1", 0.9),
            Link("http://good.test/2", 0.8),
            Link("http://waits.test/1", 0.7),
            Link("http://waits.test/2", 0.1),
            Link("http://full.test/1", 0.95),
            Link("http://full.test/2", 0.2),
            Link("http://poor.test/1", 0.3),
        ]
    )
    popped = {leased.url: leased.lease for leased in f.pop_ready(10).leased}
    assert len(popped) == 4  # one per host
    for url in ("http://good.test/1", "http://waits.test/1"):
        f.complete(popped[url], url, "page", 0.5, False)
    f.push_many([Link("http://ready.test/1", 0.85)])
    # good.test and waits.test wait out their delay; full.test's one slot is taken, so it is
    # in neither set; ready.test is ready.
    assert scheduled(f) == {"http://good.test", "http://waits.test", "http://ready.test"}
    assert f.drop_worst(2) == 2
    assert set(queued(f)) == {"http://good.test/2", "http://ready.test/1"}
    # The hosts the trim emptied left 'ready' and 'wait'; the others kept their place.
    assert scheduled(f) == {"http://good.test", "http://ready.test"}
    assert f.store._client.zscore(f.store.prefix + keys.WAIT, "http://good.test") is not None
    assert f.counts()["queued"] == 2


def test_dropped_urls_are_never_queued_again(frontier):
    f = frontier()
    f.push_many([Link("http://a.test/good", 0.9), Link("http://a.test/bad", 0.1)])
    assert f.drop_worst(1) == 1
    assert f.push_many([Link("http://a.test/bad", 1.0), Link("http://a.test/new", 0.5)]) == 1
    assert set(queued(f)) == {"http://a.test/good", "http://a.test/new"}


def test_processes_trimming_at_once_never_go_below_the_cap(frontier):
    f = frontier()
    f.push_many([Link(f"http://h{i % 9}.test/{i}", (i % 50) / 50) for i in range(300)])
    processes = [frontier() for _ in range(4)]
    dropped: list[int] = []
    start = threading.Barrier(len(processes))

    def trim(p: RedisFrontier) -> None:
        start.wait()
        dropped.append(p.drop_worst(100))

    threads = [threading.Thread(target=trim, args=(p,)) for p in processes]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(dropped) == 200 and sorted(dropped)[:-1] == [0, 0, 0]
    assert len(queued(f)) == f.counts()["queued"] == 100


def scheduler(f: RedisFrontier, batch: int, whole_batches: bool, woken: list[float]):
    s = FrontierScheduler(
        f,
        stats=MemoryStatsCollector(get_crawler()),
        batch=batch,
        whole_batches=whole_batches,
        wake=woken.append,
    )
    s.open(scrapy.Spider(name="t"))
    return s


def test_the_scheduler_pops_n_at_a_time_and_waits_for_the_whole_batch(frontier):
    f = frontier()
    f.push_many([Link(f"http://h{i}.test/", 1 - i / 20) for i in range(10)])
    woken: list[float] = []
    s = scheduler(f, 4, True, woken)
    first = [s.next_request() for _ in range(4)]
    assert [r.url for r in first] == [f"http://h{i}.test/" for i in range(4)]
    assert s.next_request() is None  # all handed out, none acknowledged
    assert woken[-1] == BATCH_POLL_S
    for request in first[:3]:
        lease = request.meta[META].lease
        f.complete(lease, request.url, "page", 0.5, False)
    assert s.next_request() is None  # one still out
    f.release([first[3].meta[META].lease])  # released (a clean stop) counts as done
    second = [s.next_request() for _ in range(4)]
    assert [r.url for r in second] == [f"http://h{i}.test/" for i in (3, 4, 5, 6)]
    assert s.stats.get_value("focused/frontier/pops") == 2
    # Without whole batches the scheduler refills as soon as its buffer is empty.
    refills = scheduler(frontier(), 2, False, [])
    assert [refills.next_request() is not None for _ in range(3)] == [True] * 3


def test_a_lease_that_never_comes_back_ends_its_batch_when_it_runs_out(frontier):
    f = frontier(lease_s=0.3)
    f.push_many([Link("http://a.test/", 0.9), Link("http://b.test/", 0.5)])
    s = scheduler(f, 1, True, [])
    assert s.next_request().url == "http://a.test/"
    assert s.next_request() is None and f.holding() == 1
    threading.Event().wait(0.4)  # its item was lost on the way: no ack ever comes
    assert f.holding() == 0
    assert s.next_request() is not None


def judged(links: list[tuple[str, float]]) -> tuple[Page, Verdict]:
    """A seed page of R 0.5 and its verdict: its links with the judge's estimates."""
    page = Page("http://p.test/", 200, 0.0, depth=0, links=[PageLink(url) for url, _ in links])
    scored = [PageLink(url, "", "", estimate, estimate) for url, estimate in links]
    return page, Verdict(0.5, True, None, 0.5, scored)


def test_best_n_first_scores_as_soft_focus_and_trims_the_frontier(frontier):
    f = frontier()
    stats = MemoryStatsCollector(get_crawler())
    strategy = BestNFirst(f, max_buffer=8, stats=stats)
    links = strategy.links(*judged([(f"http://h{i % 3}.test/{i}", i / 12) for i in range(12)]))
    assert [round(link.score, 3) for link in links] == [round(i / 12, 3) for i in range(12)]
    assert [link.depth for link in links] == [1] * 12
    f.push_many(links)  # as the frontier pipeline does with the page's acknowledgement
    assert f.counts()["queued"] == 12  # the trim comes with the next page
    strategy.links(*judged([("http://h9.test/x", 1.0)]))
    assert set(queued(f)) == {f"http://h{i % 3}.test/{i}" for i in range(4, 12)}
    assert stats.get_value("focused/best_n_first/dropped") == 4
    f.push_many([Link("http://h9.test/x", 1.0)])
    strategy.close()  # the last page's links are trimmed at close
    assert f.counts()["queued"] == 8
    assert stats.get_value("focused/best_n_first/dropped") == 5
    assert stats.get_value("focused/best_n_first/trims") == 2


def test_best_n_first_is_registered_and_asks_for_whole_batches():
    assert strategy_class("best-n-first") is BestNFirst
    assert BestNFirst.batch_setting == "FOCUSED_BEST_N"
    assert strategy_class("soft").batch_setting == ""
    with pytest.raises(ValueError, match="FOCUSED_MAX_BUFFER"):
        BestNFirst(None, max_buffer=0)  # type: ignore[arg-type]


def test_two_processes_crawl_best_n_first_with_a_small_buffer(
    crawl, web, tmp_path, redis_client, redis_home
):
    topic = tmp_path / "bestn.toml"
    text = (
        (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "best-n-first"')
    )
    topic.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    crawl.topic = topic
    settings = {"FOCUSED_MAX_BUFFER": 15, "FOCUSED_BEST_N": 5, "CONCURRENT_REQUESTS": 4}
    one = crawl.start("one.jsonl", **settings)
    two = crawl.start("two.jsonl", **settings)
    assert one.wait(240) == 0 and two.wait(240) == 0
    assert crawl.feed("one.jsonl") and crawl.feed("two.jsonl")  # both did part of the work
    urls = [item["url"] for feed in ("one.jsonl", "two.jsonl") for item in crawl.feed(feed)]
    assert len(urls) == len(set(urls))
    dropped = [
        final_stats(crawl.log(feed)).get("focused/best_n_first/dropped", 0)
        for feed in ("one.jsonl", "two.jsonl")
    ]
    status = crawl_status(Reader(redis_client), crawl.name)
    assert status["dropped_buffer"] == sum(dropped) > 0
    assert (status["queued"], status["in_flight"]) == (0, 0)
    # Far from the whole web: the capped frontier dropped most links for good.
    assert status["seen"] == status["fetched"] + status["dropped_buffer"] + status["failed"]
    shown = focused("status", crawl.name, "--home", str(redis_home))
    assert re.search(
        rf"^dropped \(frontier full\) +{status['dropped_buffer']}$", shown.stdout, re.M
    )
