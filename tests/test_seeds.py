"""What users of scrapy-redis know: seeds pushed into a crawl through its Redis list (its
``redis_key``), running or not, and its Redis settings."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pytest
import redis
from scrapy.http import HtmlResponse

from focused.commands.crawl import EXIT_CODES
from focused.errors import NO_SEED
from focused.extensions.seeds import SEEDS_JUDGED
from focused.lab.webs.bundle import Bundle, url_key
from focused.lab.webs.server import read_log
from focused.links.extract import extract_links
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.client import connect
from focused.store.crawl import CrawlStore
from focused.store.reads import Reader
from focused.store.seeds import PushedSeeds, push_seeds
from focused.topic.files import load_topic
from tests.conftest import focused, redis_serve, wait_for


def far_pages(web, hops: int = 2) -> list[str]:
    """HTML pages more than ``hops`` links away from the topic's seeds."""
    bundle = Bundle.load(web)
    near = set(load_topic(web / "topic.toml").seeds)
    frontier = set(near)
    for _ in range(hops):
        found = set()
        for url in frontier:
            page = bundle.page(url)
            if page and page.status == 200 and b"<html" in page.body[:200].lower():
                response = HtmlResponse(url, body=page.body, encoding="utf-8")
                found |= {link for link, *_ in extract_links(response)}
        frontier = found - near
        near |= found
    near_keys = {url_key(url) for url in near}
    return [
        page.url
        for page in bundle.pages.values()
        if page.status == 200
        and url_key(page.url) not in near_keys
        and "/private/" not in page.url
        and b"<html" in page.body[:200].lower()
    ]


def test_seeds_pushed_before_and_during_a_crawl_are_fetched_once(
    crawl, served, web, redis_home, redis_client
):
    far = far_pages(web)
    assert len(far) >= 3
    home = ["--home", str(redis_home)]
    # Before the crawl starts: waiting in the list, moved into the frontier at its start.
    result = focused("seed", crawl.name, far[0], *home)
    assert result.returncode == 0, result.stderr
    assert f"pushed 1 URL to {keys.prefix(crawl.name)}start_urls" in result.stdout
    process = crawl.start(DEPTH_LIMIT=1, FOCUSED_HOST_DELAY=0.3, CONCURRENT_REQUESTS=2)
    try:
        wait_for(lambda: crawl_status(Reader(redis_client), crawl.name).get("fetched", 0) >= 5, 120)

        # While it runs: a new page, and one it fetched already (deduplicated by the frontier).
        def fetched() -> list[str]:  # the server writes its log every second; robots.txt is
            # fetched by Scrapy's middleware, not through the frontier, so it is not a page
            return [
                e["url"]
                for e in read_log(served.log_path)
                if e["status"] == 200 and not e["url"].endswith("/robots.txt")
            ]

        wait_for(lambda: bool(fetched()))
        known = fetched()[-1]
        result = focused("seed", crawl.name, far[1], known, *home)
        assert result.returncode == 0, result.stderr
        assert process.wait(240) == 0
    finally:
        if process.poll() is None:
            process.kill()
    served_urls = Counter(url_key(e["url"]) for e in read_log(served.log_path))
    assert served_urls[url_key(far[0])] == 1 and served_urls[url_key(far[1])] == 1
    assert served_urls[url_key(known)] == 1
    assert url_key(far[2]) not in served_urls  # beyond DEPTH_LIMIT, never pushed
    feed = {item["url"]: item for item in crawl.feed()}
    assert feed[far[1]]["depth"] == 0 and feed[far[1]]["parent"] is None
    assert redis_client.llen(keys.prefix(crawl.name) + keys.START_URLS) == 0
    assert "Moved 1 pushed seeds into the frontier, 1 new to the crawl" in crawl.log()


@pytest.mark.crawl
def test_seed_refuses_urls_that_are_not_http_and_pushes_nothing(crawl_name, redis_home):
    result = focused(
        "seed", crawl_name, "http://a.test/x", "ftp://b.test/y", "--home", str(redis_home)
    )
    assert result.returncode == 2
    assert (
        result.stderr
        == "focused: error: not an http(s) URL: 'ftp://b.test/y' (nothing was pushed)\n"
    )


def test_a_crawl_finds_its_redis_by_scrapy_redis_settings(crawl, tmp_path):
    """REDIS_HOST / REDIS_PORT / REDIS_DB (scrapy-redis's settings, read by its connection
    helper) name the Redis when FOCUSED_REDIS_URL does not."""
    with redis_serve(tmp_path / "server") as url:
        host, port = url.removeprefix("redis://").removesuffix("/0").split(":")
        crawl.run(CLOSESPIDER_ITEMCOUNT=5, REDIS_HOST=host, REDIS_PORT=port, REDIS_DB=3)
        server = redis.Redis(host=host, port=int(port), db=3, decode_responses=True)
        assert int(server.hget(keys.prefix(crawl.name) + keys.STATS, "fetched")) >= 5
    assert not crawl_status(Reader(connect(home=crawl.home)), crawl.name)  # not the embedded Redis


def test_a_crawl_whose_seeds_all_fail_says_so_with_its_exit_code(crawl, web):
    """Not "finished" with exit 0; and a run again (the seeds now seen) says how to go on."""
    seeds = load_topic(web / "topic.toml").seeds
    missing = [f"{seed.rstrip('/')}/no-such-page-{n}" for n, seed in enumerate(seeds[:2])]
    text = re.sub(r"^seeds = \[.*?\]\n", "", (web / "topic.toml").read_text(), flags=re.S | re.M)
    crawl.topic = web / f"topic-{crawl.name}.toml"  # its taxonomy beside it
    crawl.topic.write_text(f"seeds = {json.dumps(missing)}\n{text}")
    hint = f"`focused reset {crawl.name}` tries them again (after a fix), `focused seed"
    assert crawl.start().wait(120) == 5, crawl.log()[-3000:]
    assert EXIT_CODES[NO_SEED] == 5
    assert f"ERROR: no seed could be fetched: http_404 2; {hint}" in crawl.log()
    assert "'finish_reason': 'focused_no_seed'" in crawl.log()
    assert crawl.start("again.jsonl").wait(120) == 5
    assert "no seed could be fetched: an earlier run of this crawl tried them" in crawl.log(
        "again.jsonl"
    )
    # A crawl of no seed at all (none in the file, no lists of a previous run) says so too.
    crawl.topic.write_text(f'seeds_from = "previous"\n{text}')
    crawl.name, name = f"{crawl.name}-none", crawl.name
    assert crawl.start("none.jsonl").wait(120) == 5
    assert "no seed could be fetched: none given;" in crawl.log("none.jsonl")
    crawl.name = name
    crawl.topic.write_text(f"seeds = {json.dumps(missing)}\n{text}")
    # The way on that the line gives: a seed pushed into the crawl.
    result = focused("seed", crawl.name, seeds[0], "--home", str(crawl.home))
    assert result.returncode == 0, result.stderr
    stats = crawl.run("pushed.jsonl", CLOSESPIDER_ITEMCOUNT=3)
    assert stats["item_scraped_count"] >= 3 and "no seed could be" not in crawl.log("pushed.jsonl")


def test_a_mover_paused_past_its_lease_trims_no_seed_pushed_since(
    redis_client, redis_home, crawl_name
):
    """The seed mover's own calls (PushedSeeds.move, as SeedFeeder makes them) in a process
    stopped between reading the seeds and trimming them, past its lease: another process moves
    the same seeds and new ones are pushed; the stopped one, let go on, trims none of them."""
    store = CrawlStore(redis_client, crawl_name)
    first = [f"http://first.test/{i}" for i in range(3)]
    push_seeds(store, first)
    mover = textwrap.dedent(f"""
        import sys
        from focused.store.client import connect
        from focused.store.crawl import CrawlStore
        from focused.store.lock import LockLost
        from focused.store.seeds import PushedSeeds

        def push(urls):  # stopped here (SIGSTOP), between reading and trimming
            print(len(urls), flush=True)
            sys.stdin.readline()
            return len(urls)

        seeds = PushedSeeds(CrawlStore(connect(home={str(redis_home)!r}), {crawl_name!r}))
        try:
            seeds.move(1000, 1.0, push)
            print("trimmed", flush=True)
        except LockLost:
            print("refused", flush=True)
    """)
    process = subprocess.Popen(
        [sys.executable, "-c", mover], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert process.stdin is not None and process.stdout is not None
    try:
        assert process.stdout.readline().strip() == "3"
        process.send_signal(signal.SIGSTOP)
        lock = store.key(keys.START_URLS_LOCK)
        wait_for(lambda: not redis_client.exists(lock), 5)  # its lease ran out
        moved = PushedSeeds(store).move(1000, 5, len)  # another process moves them
        assert moved is not None and moved.urls == first
        pushed = [f"http://pushed-since.test/{i}" for i in range(3)]
        push_seeds(store, pushed)
        process.send_signal(signal.SIGCONT)
        process.stdin.write("go on\n")
        process.stdin.flush()
        assert process.stdout.readline().strip() == "refused"
        assert process.wait(30) == 0
    finally:
        process.kill()
        process.wait(30)
    assert redis_client.lrange(store.key(keys.START_URLS), 0, -1) == pushed  # none lost


def test_a_topic_that_no_seed_matches_says_so_once(crawl, web, tmp_path):
    """Keywords in French, German and Chinese on an English web: every seed's R near 0."""
    text = (web / "topic.toml").read_text()
    crawl.topic = tmp_path / "foreign.toml"
    crawl.topic.write_text(
        text[: text.index("[relevance]")] + '[relevance]\nmethod = "keywords"\n'
        'keywords = ["vélo", "cyclisme", "Fahrrad", "Radsport", "自行车"]\n'
    )
    crawl.run(CLOSESPIDER_ITEMCOUNT=60)
    warnings = re.findall(r"WARNING: No seed looks relevant: .*", crawl.log())
    assert len(warnings) == 1, crawl.log()[-3000:]
    assert re.fullmatch(
        rf"WARNING: No seed looks relevant: the best of the first {SEEDS_JUDGED} seed pages has"
        r" R 0\.\d{4}, under the threshold 0\.5; do the topic's words match these pages \(their"
        r" language\)\?",
        warnings[0],
    )
    # The web's own topic: its seeds are relevant.
    crawl.topic, crawl.name = web / "topic.toml", f"{crawl.name}-own"
    crawl.run("own.jsonl", CLOSESPIDER_ITEMCOUNT=60)
    assert "No seed looks relevant" not in crawl.log("own.jsonl")
