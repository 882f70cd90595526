"""A learning topic does not grow into its neighbour: a crawl of astronomy keywords through a
generated web whose Science category holds geology beside it, on a real Redis, learning on,
well past the point where the topic's own pages run out."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from focused.lab.webs.bundle import Bundle
from focused.lab.webs.generate import generate_web
from focused.lab.webs.server import ServedWeb
from tests.conftest import Crawl

pytestmark = pytest.mark.crawl

TOPIC, NEIGHBOUR = "Science/Astronomy", "Science/Geology"
KEYWORDS = ["star", "planet", "galaxy", "telescope", "orbit", "comet", "nebula", "moon"]
WEB_PAGES, PAGES = 1500, 1000  # the web holds about 110 astronomy pages
# Refits at 40, 80, 160, 320 pages or later: a refit starts when its turn is seen and takes
# seconds, during which the crawl goes on, so a fast machine makes fewer; by the third the
# sample holds more pages off the topic than a refit keeps as negatives.
MAX_NEIGHBOUR = 0.05  # of the pages called relevant once the topic's own have run out


@pytest.fixture(scope="module")
def science(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("science") / "web"
    generate_web(folder, n_pages=WEB_PAGES, n_hosts=50, seed=0)
    topics = json.loads((folder / "topics.json").read_text())["topics"]
    seeds = next(topic["seeds"] for topic in topics if topic["category"] == TOPIC)
    (folder / "astronomy.toml").write_text(
        f"name = 'astronomy'\nseeds = {json.dumps(seeds)}\nstrategy = 'soft'\n\n"
        f"[relevance]\nmethod = 'keywords'\nkeywords = {json.dumps(KEYWORDS)}\n"
    )
    return folder


@pytest.fixture
def served_science(science: Path, tmp_path: Path) -> Iterator[ServedWeb]:
    with ServedWeb(science, log_path=tmp_path / "served.jsonl") as served:
        yield served


def test_a_learning_topic_does_not_call_its_neighbour_relevant_once_its_pages_run_out(
    science: Path,
    served_science: ServedWeb,
    redis_home: Path,
    redis_client: redis.Redis,
    crawl_name: str,
    tmp_path: Path,
) -> None:
    topic = science / "astronomy.toml"
    crawl = Crawl(topic, served_science.proxy, redis_home, crawl_name, tmp_path)
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=PAGES, FOCUSED_LEARN=True, FOCUSED_LEARN_PAGES=40)
    assert stats["focused/learn/refits"] >= 3
    bundle = Bundle.load(science)
    feed = sorted((item for item in crawl.feed() if not item["bad"]), key=lambda i: i["order"])
    category = {item["url"]: (bundle.categories(item["url"]) or [""])[0] for item in feed}
    on_topic = [item["order"] for item in feed if category[item["url"]] == TOPIC]
    assert len(feed) >= PAGES * 0.9 and len(on_topic) >= 80
    # The topic's own pages have run out once the crawl has fetched 90 % of those it finds.
    run_out = on_topic[int(0.9 * len(on_topic)) - 1]
    later = [category[i["url"]] for i in feed if i["relevant"] and i["order"] > run_out]
    neighbour, off_topic = later.count(NEIGHBOUR), sum(c != TOPIC for c in later)
    assert feed[-1]["order"] > 2 * run_out  # a long crawl past them
    assert neighbour <= MAX_NEIGHBOUR * max(len(later), 1), (
        f"{neighbour} of the {len(later)} pages called relevant after {run_out} pages are its"
        f" neighbour's ({off_topic} not on the topic)"
    )
    relevant = [category[i["url"]] for i in feed if i["relevant"]]
    assert relevant.count(NEIGHBOUR) <= MAX_NEIGHBOUR * len(relevant)
