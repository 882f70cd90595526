"""Crawl strategies turn a classified page into scored links (the frontier is not involved)."""

from __future__ import annotations

from pathlib import Path

import pytest
from scrapy.settings import Settings

from focused.errors import FocusedError
from focused.strategies.focus import BreadthFirst, HardFocus, SoftFocus
from focused.topic.files import Topic
from focused.topic.plan import CrawlPlan

PAGE = {
    "depth": 2,
    "relevance": 0.8,
    "path_good": False,
    "links": [("http://a.test/1", "cycling", "cycling"), ("http://b.test/2", "football", "")],
    "link_scores": [0.9, 0.1],
}


def scores(links):
    return [(link.url, round(link.score, 3), link.depth) for link in links]


def test_soft_focus_scores_every_link():
    assert scores(SoftFocus("content").links(PAGE)) == [
        ("http://a.test/1", 0.8, 3),
        ("http://b.test/2", 0.8, 3),
    ]
    assert scores(SoftFocus("anchor").links(PAGE)) == [
        ("http://a.test/1", 0.9, 3),
        ("http://b.test/2", 0.1, 3),
    ]
    assert scores(SoftFocus("both").links(PAGE)) == [
        ("http://a.test/1", 0.85, 3),
        ("http://b.test/2", 0.45, 3),
    ]


def test_hard_focus_follows_only_pages_on_a_good_path():
    assert HardFocus("content").links(PAGE) == []
    assert len(HardFocus("content").links({**PAGE, "path_good": True})) == 2


def test_breadth_first_prefers_shallow_links_and_ignores_relevance():
    shallow = BreadthFirst().links({**PAGE, "depth": 0})
    deep = BreadthFirst().links(PAGE)
    assert all(s.score > d.score for s, d in zip(shallow, deep, strict=True))
    assert len({link.score for link in deep}) == 1


def test_unknown_link_score_is_refused():
    with pytest.raises(ValueError, match="link_score"):
        SoftFocus("sideways")


def test_forum_and_blog_links_are_dropped_before_the_frontier():
    from focused.settings import defaults

    page = {
        **PAGE,
        "links": [
            ("http://a.test/cycling", "x", "x"),
            ("http://a.test/forum/t1", "y", "y"),
            ("http://news.blogspot.com/p", "z", "z"),
        ],
        "link_scores": [0.5] * 3,
    }
    strategy = SoftFocus("content", drop_urls=defaults.FOCUSED_DROP_URL_PATTERNS)
    assert [link.url for link in strategy.links(page)] == ["http://a.test/cycling"]
    assert strategy.dropped == 2
    assert len(SoftFocus("content", drop_urls=[]).links(page)) == 3


def test_anchors_are_queued_only_when_something_reads_them_back():
    assert {link.anchor for link in SoftFocus("anchor").links(PAGE)} == {""}
    carried = SoftFocus("anchor", carry_anchors=True).links(PAGE)
    assert [link.anchor for link in carried] == ["cycling", "football"]


def test_settings_pick_the_strategy_and_link_score_over_the_topic():
    topic = Topic(Path("t.toml"), "t", [], "soft", "keywords", link_score="context")
    plan = CrawlPlan.from_settings(Settings(), topic)
    assert (plan.strategy, plan.link_score, plan.hard) == ("soft", "context", False)
    both = Settings({"FOCUSED_LINK_SCORE": "both", "FOCUSED_STRATEGY": "hard"})
    plan = CrawlPlan.from_settings(both, topic)
    assert (plan.strategy, plan.link_score, plan.hard) == ("hard", "both", True)
    # Breadth-first orders links by depth: no anchor (or context) is scored for it.
    plan = CrawlPlan.from_settings(Settings({"FOCUSED_STRATEGY": "breadth-first"}), topic)
    assert (plan.link_score, plan.scores_anchors, plan.reads_context) == ("content", False, False)
    for bad, name in (
        ({"FOCUSED_STRATEGY": "depth-first"}, "FOCUSED_STRATEGY"),
        ({"FOCUSED_LINK_SCORE": "title"}, "FOCUSED_LINK_SCORE"),
    ):
        with pytest.raises(FocusedError, match=name):
            CrawlPlan.from_settings(Settings(bad), topic)


def test_the_topic_files_strategy_decides_what_scores_links():
    """A topic file's breadth-first is the unfocused baseline as FOCUSED_STRATEGY's is: no
    link model, nothing for the distiller to re-boost (it reads ``scores_links``)."""
    baseline = Topic(Path("t.toml"), "t", [], "breadth-first", "keywords")
    learning = Settings({"FOCUSED_LINK_MODEL": True})
    plan = CrawlPlan.from_settings(learning, baseline)
    assert (plan.strategy, plan.scores_links, plan.link_model) == ("breadth-first", False, False)
    plan = CrawlPlan.from_settings(Settings({**learning, "FOCUSED_STRATEGY": "soft"}), baseline)
    assert (plan.strategy, plan.scores_links, plan.link_model) == ("soft", True, True)
    assert not CrawlPlan.from_settings(Settings({"FOCUSED_STRATEGY": "soft"}), baseline).link_model
