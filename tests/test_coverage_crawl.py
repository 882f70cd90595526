"""The estimate of what is left in real crawls: a crawl that stops by itself once its small topic
is covered, a user's keyword crawl of a larger web that stops once it has found most of its
topic, and the demo, which ends with the notice that its topic looks covered instead of a false
diffusion alarm."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from focused.lab.evaluation.coverage import truth_at
from focused.lab.evaluation.graph import WebGraph
from focused.lab.evaluation.score import served_order
from focused.lab.webs.bundle import TOPICS_FILE, Bundle, url_key
from focused.lab.webs.generate import DEMO_CATEGORY, generate_web
from focused.lab.webs.server import ServedWeb, read_log
from focused.monitor.snapshot import crawl_snapshot
from focused.store.client import connect
from focused.store.coverage import CoverageStore
from focused.store.crawl import CrawlStore
from focused.store.reads import Reader
from tests.conftest import Crawl, focused

pytestmark = pytest.mark.crawl


def on_topic(bundle: Bundle, url: str) -> bool:
    return any(
        c == DEMO_CATEGORY or c.startswith(f"{DEMO_CATEGORY}/") for c in bundle.categories(url)
    )


def test_a_crawl_stops_by_itself_once_its_small_topic_is_covered(
    crawl, served, bundle, redis_client
):
    stats = crawl.run(
        FOCUSED_CLOSE_COVERED=0.9,
        FOCUSED_CLOSE_COVERED_PAGES=30,
        FOCUSED_COVERAGE_PAGES=10,
        CONCURRENT_REQUESTS=4,
    )
    assert "Spider closed (focused_covered)" in crawl.log()
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    assert snapshot["finish_reason"] == "focused_covered"
    # It stopped with pages left to fetch, having found most of its topic's pages.
    assert snapshot["queued"] > 0
    fetched = {url_key(entry["url"]) for entry in read_log(served.log_path)}
    on = {url for url in bundle.pages if on_topic(bundle, url)}
    assert len(fetched & on) >= 0.8 * len(on)
    assert len(fetched) < len(bundle.pages)
    # Its last estimate said so, and every estimate before it is kept.
    history = CoverageStore(CrawlStore(redis_client, crawl.name)).history()
    last = history[-1]
    assert len(history) >= 3 and last["covered_since"] is not None
    assert last["found"] >= 0.9 * (last["found"] + last["high"])
    assert stats["focused/coverage/runs"] >= 1
    assert "diffusion" not in {alarm["name"] for alarm in snapshot["alarms"]}


ASTRONOMY = "Science/Astronomy"
KEYWORDS = ["star", "planet", "galaxy", "telescope", "orbit", "comet", "nebula", "moon"]


@pytest.fixture(scope="module")
def astronomy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A generated web of 3,000 pages and a user's topic of eight astronomy keywords, seeded
    with its Astronomy topic's seeds, that does not learn."""
    web = generate_web(tmp_path_factory.mktemp("astronomy") / "web", n_pages=3000)
    topics = json.loads((web / TOPICS_FILE).read_text())["topics"]
    seeds = next(topic["seeds"] for topic in topics if topic["category"] == ASTRONOMY)
    (web / "astronomy.toml").write_text(
        f'name = "astronomy"\nseeds = {json.dumps(seeds)}\n\n'
        f'[relevance]\nmethod = "keywords"\nkeywords = {json.dumps(KEYWORDS)}\n'
    )
    return web


@pytest.fixture
def astronomy_served(astronomy: Path, tmp_path: Path) -> Iterator[ServedWeb]:
    with ServedWeb(astronomy, log_path=tmp_path / "served.jsonl") as served:
        yield served


def test_a_keyword_crawl_that_has_found_most_of_its_topic_stops(
    astronomy, astronomy_served, redis_home, redis_client, crawl_name, tmp_path
):
    # Its link scores are near 0 for most links, so nearly all of its queue is in the lowest
    # score bucket, which gave relevant pages early on and hardly any later. It has found nine
    # in ten of its topic's pages in reach within 300 pages or so, and runs on to its budget
    # when old pages weigh too much in the calibration.
    crawl = Crawl(
        astronomy / "astronomy.toml", astronomy_served.proxy, redis_home, crawl_name, tmp_path
    )
    budget = 1200
    crawl.run(
        CLOSESPIDER_ITEMCOUNT=budget,
        FOCUSED_LEARN=False,
        FOCUSED_CLOSE_COVERED=0.9,
        FOCUSED_HOST_DELAY=0.5,
        CONCURRENT_REQUESTS=4,
    )
    snapshot = crawl_snapshot(Reader(redis_client), crawl.name)
    assert snapshot["finish_reason"] == "focused_covered", (
        snapshot["finish_reason"],
        snapshot["fetched"],
    )
    order = served_order(read_log(astronomy_served.log_path))
    assert len(order) < budget
    # By the labels, it had found at least nine in ten of the relevant pages in its reach.
    bundle = Bundle.load(astronomy)
    relevant = {
        url_key(url)
        for url in bundle.pages
        if any(c == ASTRONOMY or c.startswith(f"{ASTRONOMY}/") for c in bundle.categories(url))
    }
    truth = truth_at(WebGraph.from_bundle(bundle).links, order, relevant, len(order))
    assert truth.found >= 0.9 * (truth.found + truth.left), truth


def test_the_demo_stops_when_its_topic_is_covered_and_raises_no_false_alarm(tmp_path: Path):
    home = tmp_path / "home"
    done = focused("demo", "--home", str(home))
    assert done.returncode == 0, done.stderr[-3000:]
    out = " ".join(done.stdout.split())  # rich wraps its lines
    assert "focused (soft focus): stopped after" in out and "as its topic looks covered" in out
    snapshot = crawl_snapshot(Reader(connect(home=home)), "demo")
    assert snapshot["finish_reason"] == "focused_covered"
    assert snapshot["fetched"] < 1000
    # The bar, the ending and the header agree with the crawl: it stopped short of its limit.
    done_pages = snapshot["fetched"] + snapshot["failed"]
    assert re.search(rf"^demo\s.*\s{done_pages}/1000\s", done.stdout, flags=re.M), done.stdout
    assert f"focused (soft focus): stopped after {done_pages} pages" in out
    assert "Crawling a web of 3,007 pages" in out
    assert "`focused status demo`" in out  # the command as this test ran it
    # The harvest fell because the topic ran out: a notice, not the diffusion alarm.
    alarms = {alarm["name"]: alarm["level"] for alarm in snapshot["alarms"]}
    assert "diffusion" not in alarms and alarms.get("covered") == "notice"
