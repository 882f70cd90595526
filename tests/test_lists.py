"""Seed 004's lists of good hubs and sites: counted by the frontier, written at the end of a
crawl, read back as the next run's seeds."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from focused.cli.main import main
from focused.distill.lists import list_seeds, read_lists, write_lists
from focused.errors import FocusedError, TopicError
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.topic.files import load_topic


def test_the_frontier_counts_what_was_found_through_each_hub_and_site(redis_client, crawl_name):
    f = RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0.0, host_concurrency=100)
    f.push_many([Link("http://hub.test/list", 1.0)])
    (hub,) = f.pop_ready(1).leased
    children = [f"http://site.test/{i}" for i in range(4)] + ["http://other.test/x"]
    f.complete(hub.lease, hub.url, "page", 0.2, False, [Link(u, 0.5) for u in children], "T", 0.4)
    leased = f.pop_ready(10).leased
    for item in leased:  # three relevant pages on site.test, one more elsewhere, all via the hub
        relevant = item.url != "http://site.test/3"
        f.complete(item.lease, item.url, "page", 0.9 if relevant else 0.1, relevant, [], "T")
    lists = read_lists(CrawlStore(redis_client, crawl_name), min_relevant=3)
    assert lists["hubs"] == [{"url": "http://hub.test/list", "hub_score": 0.4, "relevant_found": 4}]
    assert lists["sites"] == [{"site": "http://site.test", "relevant": 3}]
    assert read_lists(CrawlStore(redis_client, crawl_name), min_relevant=5)["hubs"] == []


def test_lists_file_round_trip_and_bad_file(tmp_path: Path):
    lists = {
        "crawl": "birds",
        "hubs": [{"url": "http://a.test/hub", "hub_score": 0.3, "relevant_found": 5}],
        "sites": [{"site": "http://b.test", "relevant": 4}],
        "top_hubs": [{"url": "http://c.test/x", "score": 0.5}, {"url": "http://a.test/hub"}],
    }
    path = write_lists(lists, tmp_path / "lists")
    assert path == tmp_path / "lists" / "birds.json"
    assert list_seeds(path) == ["http://a.test/hub", "http://c.test/x", "http://b.test/"]
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(FocusedError, match="bad.json: not a lists file"):
        list_seeds(bad)


def test_topic_seeds_from(tmp_path: Path):
    base = 'name = "t"\n[relevance]\nmethod = "keywords"\nkeywords = ["bird"]\n'
    topic = tmp_path / "t.toml"
    topic.write_text('seeds_from = "previous"\n' + base)
    assert load_topic(topic).seeds_from == "previous" and load_topic(topic).seeds == []
    topic.write_text('seeds_from = "lists/t.json"\n' + base)
    with pytest.raises(TopicError, match="seeds_from: file not found"):
        load_topic(topic)
    topic.write_text(base)
    with pytest.raises(TopicError, match="seeds: no seed URLs"):
        load_topic(topic)


def test_a_crawl_writes_its_lists_and_the_next_run_starts_from_them(crawl, web, tmp_path):
    stats = crawl.run(FOCUSED_HUB_MIN_SCORE=0.01, FOCUSED_LIST_MIN_RELEVANT=2)
    assert stats["item_scraped_count"] > 100
    # In FOCUSED_HOME, as the models it trained: the working folder has the feed and logs only.
    path = crawl.home / "lists" / f"{crawl.name}.json"
    assert {p.name for p in tmp_path.iterdir()} == {"feed.jsonl", "feed.jsonl.log", "served.jsonl"}
    assert list((crawl.home / "models").glob("*.npz"))
    written = json.loads(path.read_text())
    assert written["hubs"] and written["sites"]
    assert all(hub["relevant_found"] >= 2 and hub["hub_score"] >= 0.01 for hub in written["hubs"])
    # and the distiller's top hubs, as `focused hubs` names them
    assert 0 < len(written["top_hubs"]) <= 10
    seeds = len(list_seeds(path))
    assert f"Wrote {len(written['hubs'])} good hubs" in crawl.log()
    # The next run, afresh (`focused reset`), of a topic without seeds of its own.
    assert main(["reset", crawl.name, "--home", str(crawl.home)]) == 0
    text = re.sub(r"^seeds = \[.*?\]\n", "", (web / "topic.toml").read_text(), flags=re.S | re.M)
    crawl.topic = web / f"topic-{crawl.name}.toml"
    crawl.topic.write_text('seeds_from = "previous"\n' + text)
    assert load_topic(crawl.topic).seeds == []
    stats = crawl.run("again.jsonl")
    assert f"seeds_from: {seeds} hubs and sites from" in crawl.log("again.jsonl")
    assert stats["item_scraped_count"] > 100
    # A run that finds nothing new (the pages known, the web unchanged) keeps those lists.
    again = path.read_text()
    assert main(["reset", crawl.name, "--keep-known", "--home", str(crawl.home)]) == 0
    stats = crawl.run("known.jsonl")
    assert stats.get("focused/pages/relevant", 0) == 0
    assert path.read_text() == again
    assert "Found no good hub or site: kept the lists of an earlier run" in crawl.log("known.jsonl")


def test_hub_score_of_a_page():
    from focused.relevance.keywords import KeywordModel
    from focused.topic.judge import Judge
    from tests.pages import page

    model = KeywordModel(keywords=["cycling"]).fit()
    judge = Judge(model, threshold=0.5, link_score="content", hub_min_score=0.05)
    links = [(f"http://site{i}.test/", f"Site {i}", "") for i in range(10)]
    links.append(("http://hub.test/about", "About us", ""))  # same site: not external
    anchors = " ".join(anchor for _, anchor, _ in links)

    def hub(text: str) -> float | None:
        return judge.hub_score(page(f"{text} {anchors}", links, url="http://hub.test/list"))

    # 10 links to other sites over 20 content words (stopwords and anchors' words left out)
    words = " ".join(f"cycling{i}" for i in range(20))
    assert hub(f"the of and {words}") == pytest.approx(0.5)
    # an article: 10 links over 2,000 words is no hub (the whitespace shortcut)
    assert hub(" ".join(f"word{i}" for i in range(2000))) is None
    # just below the bar, counted exactly: 10 / 201 words
    assert hub(" ".join(f"word{i}" for i in range(201))) is None
    assert hub(" ".join(f"word{i}" for i in range(200))) == 0.05
    assert judge.hub_score(page("x", url="http://a.test/")) is None
    assert judge(page(f"the of and {words} {anchors}", links, url="http://hub.test/list")).hub_score
