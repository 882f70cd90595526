"""Politeness against what servers ask and what pages try: Retry-After holds a host in every
process, robots.txt counts against its host's delay, and a redirect chain ends at
REDIRECT_MAX_TIMES however many new URLs it makes up. Real crawls of the project's own server."""

from __future__ import annotations

import itertools
import time
import uuid
from collections import defaultdict
from pathlib import Path

import pytest

from focused.lab.webs.bundle import Bundle, url_key, write_bundle
from focused.lab.webs.hostile import generate_hostile_web
from focused.lab.webs.server import ServedWeb, read_log
from tests.conftest import Crawl, final_stats

TOPIC = """
name = "politeness"
seeds = ["http://www.a.test/", "http://www.c.test/"]
[relevance]
method = "keywords"
keywords = ["swan"]
"""
HTML = {"Content-Type": "text/html; charset=utf-8"}


def page(url: str, body: str, status: int = 200, headers: dict | None = None) -> dict:
    return {"url": url, "status": status, "headers": headers or HTML, "body": body}


def links(*urls: str) -> str:
    return "<title>Swans</title><p>swan</p>" + "".join(f'<a href="{u}">swan</a>' for u in urls)


def politeness_web(folder: Path) -> Path:
    chain = [f"http://www.c.test/chain/{i}" for i in range(12)]
    pages = [
        page("http://www.a.test/", links("/busy", "/p1", "/p2", "http://www.b.test/")),
        page(
            "http://www.a.test/busy",
            "busy",
            429,
            {**HTML, "Retry-After": "60"},
        ),
        *(page(f"http://www.a.test/p{i}", links()) for i in (1, 2)),
        page("http://www.b.test/", links("/q1", "/q2")),
        *(page(f"http://www.b.test/q{i}", links()) for i in (1, 2)),
        page(
            "http://www.c.test/robots.txt",
            "User-agent: *\nDisallow: /private/\n",
            200,
            {"Content-Type": "text/plain"},
        ),
        page("http://www.c.test/", links(chain[0], "/c1")),
        page("http://www.c.test/c1", links()),
        *(page(url, "", 302, {"Location": chain[i + 1]}) for i, url in enumerate(chain[:-1])),
        page(chain[-1], links()),
    ]
    web = write_bundle(folder / "web", pages)
    (web / "topic.toml").write_text(TOPIC)
    return web


def fetch_times(log: Path) -> dict[str, list[tuple[float, str]]]:
    by_host = defaultdict(list)
    for entry in read_log(log):
        by_host[entry["url"].split("/")[2]].append((entry["time"], entry["url"]))
    return {host: sorted(times) for host, times in by_host.items()}


@pytest.mark.crawl
def test_servers_are_left_alone_as_they_ask_and_chains_end(
    tmp_path, redis_home, redis_client, crawl_name
):
    web = politeness_web(tmp_path)
    log = tmp_path / "served.jsonl"
    with ServedWeb(web, log_path=log) as served:
        crawl = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)
        stats = crawl.run(
            FOCUSED_HOST_DELAY=0.5,
            FOCUSED_RETRY_AFTER_MAX=2,
            REDIRECT_MAX_TIMES=3,
            RETRY_TIMES=2,
        )
    times = fetch_times(log)
    a = times["www.a.test"]
    busy = [t for t, url in a if url.endswith("/busy")]
    # Retry-After (cut to FOCUSED_RETRY_AFTER_MAX): the retries wait 2 s, not the host delay,
    # and no other page of the host is fetched meanwhile.
    assert len(busy) == 3 and min(b - a for a, b in itertools.pairwise(busy)) >= 1.9
    for answered in busy[:-1]:
        assert not [t for t, _ in a if answered < t < answered + 1.9]
    assert stats["focused/retry_after/count"] == 3 and stats["focused/retry_after/max_s"] == 2
    # robots.txt counts against the host's delay like any page.
    for host_times in times.values():
        gaps = [b - a for (a, _), (b, _) in itertools.pairwise(host_times)]
        assert min(gaps) >= 0.4, host_times
    # The chain of new URLs ends after REDIRECT_MAX_TIMES redirects, counted as a bad page.
    chain = [url for _, url in times["www.c.test"] if "/chain/" in url]
    assert len(chain) == 4, chain
    assert stats["focused/bad_page/redirects"] == 1
    # The other host was crawled all along.
    assert "http://www.b.test/" in [url for _, url in times["www.b.test"]]


SHARED = "focused/robotstxt/shared"
ROBOTS_TOPIC = """
name = "robots"
seeds = ["http://www.a.test/", "http://www.b.test/", "http://www.c.test/"]
[relevance]
method = "keywords"
keywords = ["swan"]
"""


@pytest.mark.crawl
def test_two_processes_fetch_each_robots_txt_once(tmp_path, redis_home, redis_client, crawl_name):
    hosts = ["www.a.test", "www.b.test", "www.c.test"]
    pages = []
    for host in hosts:
        pages.append(page(f"http://{host}/", links(*(f"/p{i}" for i in range(16)))))
        pages += [page(f"http://{host}/p{i}", links()) for i in range(16)]
        pages.append(
            page(
                f"http://{host}/robots.txt",
                "User-agent: *\nDisallow: /p7\n",
                200,
                {"Content-Type": "text/plain"},
            )
        )
    web = write_bundle(tmp_path / "web", pages)
    (web / "topic.toml").write_text(ROBOTS_TOPIC)
    log = tmp_path / "served.jsonl"
    with ServedWeb(web, log_path=log) as served:
        crawl = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)
        both = [crawl.start(f"feed{n}.jsonl", FOCUSED_HOST_DELAY=0.3) for n in (1, 2)]
        for process in both:
            assert process.wait(120) == 0
    fetched = [entry["url"] for entry in read_log(log)]
    feeds = [crawl.feed(f"feed{n}.jsonl") for n in (1, 2)]
    both_fetched_from = [h for h in hosts if all(any(h in i["url"] for i in f) for f in feeds)]
    shared = sum(final_stats(crawl.log(f"feed{n}.jsonl")).get(SHARED, 0) for n in (1, 2))
    # Both processes fetched pages of a host (or more), yet each robots.txt was fetched once:
    # the process that came second read it from Redis, and obeyed it.
    assert both_fetched_from
    for host in hosts:
        assert fetched.count(f"http://{host}/robots.txt") == 1
        assert f"http://{host}/p7" not in fetched
    assert shared >= len(both_fetched_from)


SLOW_TOPIC = """
name = "slow"
seeds = ["http://www.a.test/slow", "http://www.b.test/", "http://www.c.test/"]
[relevance]
method = "keywords"
keywords = ["swan"]
"""
SLOW_TIMEOUT = 3.0
SLOW_AFTER_S = 1.5
SLOW_BACKOFF_S = 4.0


def stalled(log: Path) -> list[float]:
    """When the stalling page was asked for, by the server's log."""
    return sorted(e["time"] for e in read_log(log) if e["url"] == "http://www.b.test/stall")


@pytest.mark.crawl
def test_slow_bodies_are_stopped_and_slow_hosts_backed_off(
    tmp_path, redis_home, redis_client, crawl_name
):
    body = links()
    pages = [
        # A byte a second of a declared 100,000: stopped at the minimum rate, not retried.
        {
            **page("http://www.a.test/slow", body),
            "behaviour": {"name": "slow", "interval": 1.0, "size": 100_000},
        },
        # A byte, then nothing for 5 s: a timeout, after which the host is left alone.
        page("http://www.b.test/", links("/stall", "/after")),
        {**page("http://www.b.test/stall", body), "behaviour": {"name": "slow", "interval": 5.0}},
        page("http://www.b.test/after", links()),
        page("http://www.c.test/", links("/c1")),
        page("http://www.c.test/c1", links()),
    ]
    web = write_bundle(tmp_path / "web", pages)
    (web / "topic.toml").write_text(SLOW_TOPIC)
    log = tmp_path / "served.jsonl"
    with ServedWeb(web, log_path=log) as served:
        crawl = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)
        stats = crawl.run(
            timeout=120,
            FOCUSED_HOST_DELAY=0.5,
            DOWNLOAD_TIMEOUT=SLOW_TIMEOUT,
            RETRY_TIMES=1,
            FOCUSED_MIN_DOWNLOAD_RATE=1000,
            FOCUSED_MIN_RATE_AFTER_S=SLOW_AFTER_S,
            FOCUSED_SLOW_HOST_BACKOFF_S=SLOW_BACKOFF_S,
        )
        # The server logs a stalled answer when its next byte finds the client gone.
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and len(stalled(log)) < 2:
            time.sleep(0.5)
    feed = {item["url"]: item for item in crawl.feed()}
    times = fetch_times(log)
    # The slow body was stopped before its timeout, once: a bad page of its own reason.
    assert feed["http://www.a.test/slow"]["bad"] == "too_slow"
    assert [url for _, url in times["www.a.test"]].count("http://www.a.test/slow") == 1
    assert stats["focused/bad_page/too_slow"] == 1 and stats["focused/slow/stopped"] == 1
    # After its timeout the host was left alone: its next fetch (the retry, or its other
    # page) came only after the back-off, not after the host delay.
    b = times["www.b.test"]
    stalls = stalled(log)
    assert len(stalls) == 2 and feed["http://www.b.test/stall"]["bad"] == "timeout"
    after_first = [t for t, _ in b if t > stalls[0]]
    assert after_first[0] - stalls[0] >= SLOW_TIMEOUT + SLOW_BACKOFF_S - 0.5, b
    assert stats["focused/slow/backed_off"] >= 2
    # The other hosts were crawled all the same.
    assert "http://www.c.test/c1" in feed


# A generated web of 600 pages on 20 hosts, with and without 40 hosts trickling 1,100 bytes a
# second (just above FOCUSED_MIN_DOWNLOAD_RATE; half of them declaring their 100,000 bytes, half
# chunked), linked from the seeds as relevant-looking pages, so fetched first.
TRICKLE_WEB = {"n_pages": 600, "n_hosts": 20, "seed": 0, "hostile": False}
TRICKLING = 40
TRICKLE_RATE = 1100
KEPT = 0.8  # of the other hosts' throughput


def plain_fetch_times(web: Path, log: Path) -> list[float]:
    """Seconds from the crawl's first request to each fetch of the web's own pages."""
    plain = {key for key, page in Bundle.load(web).pages.items() if page.behaviour is None}
    served = read_log(log)
    start = min(entry["time"] for entry in served)
    return sorted(
        entry["time"] - start
        for entry in served
        if entry["status"] == 200 and url_key(entry["url"]) in plain
    )


@pytest.mark.crawl
def test_hosts_trickling_just_above_the_minimum_rate_leave_the_others_their_throughput(
    tmp_path, redis_home, redis_client
):
    """The web's own pages fetched by the time a crawl without the trickling hosts had all of
    its own: at least KEPT as many with them (the hosts backed off, their slots capped)."""
    times: dict[int, list[float]] = {}
    stats: dict[int, dict] = {}
    for trickling in (0, TRICKLING):
        web = generate_hostile_web(
            tmp_path / f"web-{trickling}",
            slow_hosts=trickling,
            slow_rate=TRICKLE_RATE,
            **TRICKLE_WEB,  # type: ignore[arg-type]
        )
        log = tmp_path / f"served-{trickling}.jsonl"
        workdir = tmp_path / f"crawl-{trickling}"
        workdir.mkdir()
        # The crawl with them runs 10 s past the time the one without took: its figures are
        # taken at that time, and the trickling hosts' stops come in their first seconds (what
        # is left of them then waits out their backoff, a minute).
        limit = times[0][-1] + 10 if times else 150
        with ServedWeb(web, log_path=log) as served:
            run = Crawl(
                web / "topic.toml", served.proxy, redis_home, f"trickle-{uuid.uuid4().hex}", workdir
            )
            stats[trickling] = run.run(
                timeout=300, FOCUSED_HOST_DELAY=0.25, CLOSESPIDER_TIMEOUT=limit
            )
        times[trickling] = plain_fetch_times(web, log)
    bound = times[0][-1]
    kept = sum(t <= bound for t in times[TRICKLING])
    figures = (
        f"without them {len(times[0])} of the web's pages in {bound:.1f} s; with them {kept} by"
        f" then ({len(times[TRICKLING])} in all, the last at {times[TRICKLING][-1]:.1f} s)"
    )
    print(figures)
    assert kept >= KEPT * len(times[0]), figures
    slow = stats[TRICKLING]
    assert slow["focused/slow/stopped"] >= TRICKLING // 2, slow  # those that declare a size
    assert slow["focused/slow/capped"] >= 1, slow  # chunked: past the slow downloads' share
