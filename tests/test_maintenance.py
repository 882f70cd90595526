"""Maintenance mode (seed 000): known pages queued again, best first, through the frontier;
unchanged ones are not classified again."""

from __future__ import annotations

import pytest
from scrapy.utils.test import get_crawler

from focused.distill.job import distill_locked
from focused.items import Page
from focused.lab.webs.server import read_log
from focused.schedulers.revisits import revisit_round
from focused.store import keys
from focused.store.frontier.base import Leased, Link
from focused.store.frontier.queue import RedisFrontier
from tests.test_duplicates import checker


@pytest.fixture
def frontier(redis_client, crawl_name) -> RedisFrontier:
    return RedisFrontier.for_crawl(
        redis_client, crawl_name, host_delay=0.0, host_concurrency=100, revisits=True
    )


def fetch_all(frontier: RedisFrontier, relevance: dict[str, float]) -> None:
    """Pop everything queued and acknowledge it as a page of the given R (relevant >= 0.5)."""
    while pop := frontier.pop_ready(100).leased:
        for item in pop:
            r = relevance.get(item.url, 0.1)
            links = [Link(url, 0.5) for url in relevance if url not in (item.url,)]
            frontier.complete(item.lease, item.url, "page", r, r >= 0.5, links, "T")


PAGES = {"http://a.test/1": 0.9, "http://b.test/2": 0.7, "http://c.test/3": 0.95}


def test_relevant_pages_are_revisited_best_first_once_a_cycle(frontier):
    frontier.push_many([Link("http://seed.test/", 1.0)])
    fetch_all(frontier, {"http://seed.test/": 0.2, **PAGES})
    fetched = frontier.counts()["fetched"]
    assert revisit_round(frontier, "relevance", 2) == 2
    first = frontier.pop_ready(10).leased
    assert [(item.url, item.revisit, item.depth) for item in first] == [
        ("http://c.test/3", True, 0),
        ("http://a.test/1", True, 0),
    ]
    for item in first:  # a revisit that changed: classified again, counted as fetched
        frontier.complete(item.lease, item.url, "page", 0.9, True, [], "T")
    assert frontier.counts()["fetched"] == fetched + 2
    # The rest of this cycle, then a new cycle, again best first; the seed is not relevant.
    assert revisit_round(frontier, "relevance", 2) == 1
    assert [item.url for item in frontier.pop_ready(10).leased] == ["http://b.test/2"]
    assert revisit_round(frontier, "relevance", 1) == 1
    assert [item.url for item in frontier.pop_ready(10).leased] == ["http://c.test/3"]
    assert frontier.counts()["revisits"] == 4


def test_a_page_already_queued_is_not_queued_twice(frontier):
    frontier.push_many([Link("http://a.test/1", 0.5)])
    assert frontier.requeue(["http://b.test/x"]) == 1
    assert frontier.requeue(["http://b.test/x"]) == 0


def test_hubs_are_revisited_from_the_distillers_last_run(frontier):
    frontier.push_many([Link("http://seed.test/", 1.0)])
    fetch_all(frontier, {"http://seed.test/": 0.2, **PAGES})
    result = distill_locked(frontier, top_hubs=0)
    assert result is not None
    assert revisit_round(frontier, "hub", 1) == 1
    (item,) = frontier.pop_ready(10).leased
    assert item.revisit and item.url == result.hubs[0][0]
    assert frontier.store._client.zcard(frontier.store.prefix + keys.HUBS) == len(result.hubs) - 1


def page(url: str, text: str, revisit: bool) -> Page:
    """A fetched page; a revisit is one the frontier leased as a known page fetched again."""
    leased = Leased(url, "lease", 0, 0, "", 0, 1.0, revisit=revisit)
    return Page(url, 200, 0.0, title="", text=text, leased=leased)


def test_a_revisit_that_changed_is_classified_again(frontier):
    stats = get_crawler().stats
    check = checker(frontier, stats)
    assert check(page("http://a.test/1", "Swans nest.", False)).bad is None
    assert check(page("http://a.test/1", "Swans nest.", True)).bad == "unchanged"
    assert check(page("http://a.test/1", "Swans fly.", True)).bad is None
    assert stats.get_value("focused/revisit/unchanged") == 1
    assert stats.get_value("focused/revisit/changed") == 1
    assert stats.get_value("focused/pages/duplicate") is None


def test_a_crawl_in_maintenance_mode_revisits_a_share_of_its_fetches(crawl, served):
    stats = crawl.run(FOCUSED_REVISIT_SHARE=0.2, FOCUSED_REVISIT_EVERY=40, FOCUSED_HOST_DELAY=0.2)
    queued = stats["focused/revisit/queued"]
    assert queued >= 8 and "Maintenance: queued 8 known pages again" in crawl.log()
    # The served web does not change: every revisit came back unchanged, was acknowledged and
    # not classified again, and the server saw those URLs twice.
    assert stats["focused/revisit/unchanged"] == queued
    served_urls = [e["url"] for e in read_log(served.log_path) if not e["url"].endswith("txt")]
    twice = len(served_urls) - len(set(served_urls))
    assert twice >= queued
    assert "Spider closed (finished)" in crawl.log()
