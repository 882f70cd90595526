"""Crawl strategies turn a judged page into scored links (the frontier is not involved); the
judge makes each link's estimate, and the link policy drops, blends and strips what any
strategy gives."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from scrapy.settings import Settings
from scrapy.utils.test import get_crawler

from focused.errors import FocusedError, TopicError
from focused.items import Page, PageLink
from focused.pipelines.frontier import FrontierPipeline
from focused.relevance.linkmodel import LinkContext
from focused.store.frontier.base import Leased
from focused.store.frontier.records import pack
from focused.strategies.focus import BreadthFirst, HardFocus, SoftFocus
from focused.strategies.policy import LinkPolicy
from focused.topic.files import Topic, load_topic_text
from focused.topic.judge import Judge, Verdict, link_estimate
from focused.topic.plan import CrawlPlan

PARENT = 0.8
LINKS = [
    PageLink("http://a.test/1", "cycling", "cycling"),
    PageLink("http://b.test/2", "football", ""),
]
ANCHOR_R = [0.9, 0.1]


def judged(
    link_score: str = "content",
    *,
    depth: int = 2,
    path_good: bool | None = False,
    links: list[PageLink] = LINKS,
    anchor_r: list[float] = ANCHOR_R,
) -> tuple[Page, Verdict]:
    """A page of R 0.8 and the judge's verdict on it under ``link_score``: its links' anchors
    of R ``anchor_r`` (not scored under ``content``) and their estimates."""
    page = Page("http://p.test/", 200, 0.0, depth=depth, links=list(links))
    anchors = [None if link_score == "content" else a for a in anchor_r]
    scored = [
        PageLink(k.url, k.anchor, k.context, a, link_estimate(link_score, PARENT, a))
        for k, a in zip(links, anchors, strict=True)
    ]
    return page, Verdict(PARENT, True, None, PARENT, scored, path_good=path_good)


def scores(links):
    return [(link.url, round(link.score, 3), link.depth) for link in links]


def test_a_links_estimate_follows_the_link_score():
    assert link_estimate("content", 0.8, 0.9) == 0.8
    assert link_estimate("anchor", 0.8, 0.9) == 0.9
    assert link_estimate("both", 0.8, 0.9) == pytest.approx(0.85)
    assert link_estimate("context", 0.8, 0.3) == 0.3
    for link_score in ("anchor", "both", "context"):  # an anchor not scored: the parent's R
        assert link_estimate(link_score, 0.8, None) == 0.8


class Model:
    """A topic model that knows the R of a few texts (0 for the others)."""

    def __init__(self, known: dict[str, float]):
        self.known = known

    def score_pages(self, texts):
        return np.array([self.known.get(t, 0.0) for t in texts]), ["Sport"] * len(texts)


def test_the_judge_estimates_each_link_as_the_link_score_says():
    model = Model({"\ncycling news": 0.8, "cycling": 0.9, "football": 0.1, "cycling fans": 0.4})
    links = [
        PageLink("http://a.test/1", "cycling", "cycling fans"),
        PageLink("http://b.test/2", "football", ""),
    ]
    page = Page("http://p.test/", 200, 0.0, title="", text="cycling news", links=links)
    estimates, anchors = {}, {}
    for link_score in ("content", "anchor", "both", "context"):
        judge = Judge(model, threshold=0.5, link_score=link_score)  # type: ignore[arg-type]
        verdict = judge(page)
        assert (verdict.relevance, verdict.relevant, verdict.category) == (0.8, True, "Sport")
        estimates[link_score] = [round(link.estimate, 3) for link in verdict.links]
        anchors[link_score] = [
            None if link.anchor_relevance is None else round(link.anchor_relevance, 3)
            for link in verdict.links
        ]
    # The anchors' R: none scored under content; under context, with the anchor's context.
    assert anchors == {
        "content": [None, None],
        "anchor": [0.9, 0.1],
        "both": [0.9, 0.1],
        "context": [round((0.9 * 0.4) ** 0.5, 3), 0.0],
    }
    assert estimates == {
        "content": [0.8, 0.8],
        "anchor": [0.9, 0.1],
        "both": [0.85, 0.45],
        # the geometric mean of the anchor's R and its context's
        "context": [round((0.9 * 0.4) ** 0.5, 3), 0.0],
    }
    # Reached by "cycling" from a page of R 0.6: what the link model learns from.
    page.leased = Leased(page.url, "lease", 1, 1, "http://q.test/", 0, 0.6, "cycling", 0.6)
    arrivals = {}
    for link_score in ("content", "anchor", "both"):
        verdict = Judge(model, threshold=0.5, link_score=link_score)(page)  # type: ignore[arg-type]
        arrivals[link_score] = (verdict.arrival, round(verdict.arrival_estimate or 0, 3))
    assert arrivals == {"content": (None, 0.6), "anchor": (0.9, 0.9), "both": (0.9, 0.75)}


def test_soft_focus_scores_every_link():
    assert scores(SoftFocus().links(*judged("content"))) == [
        ("http://a.test/1", 0.8, 3),
        ("http://b.test/2", 0.8, 3),
    ]
    assert scores(SoftFocus().links(*judged("anchor"))) == [
        ("http://a.test/1", 0.9, 3),
        ("http://b.test/2", 0.1, 3),
    ]
    assert scores(SoftFocus().links(*judged("both"))) == [
        ("http://a.test/1", 0.85, 3),
        ("http://b.test/2", 0.45, 3),
    ]


def test_hard_focus_follows_only_pages_on_a_good_path():
    assert HardFocus().links(*judged("content")) == []
    assert len(HardFocus().links(*judged("content", path_good=True))) == 2


def test_breadth_first_prefers_shallow_links_and_ignores_relevance():
    shallow = BreadthFirst().links(*judged("anchor", depth=0))
    deep = BreadthFirst().links(*judged("anchor"))
    assert all(s.score > d.score for s, d in zip(shallow, deep, strict=True))
    assert len({link.score for link in deep}) == 1


def test_unknown_link_score_is_refused(tmp_path):
    topic = 'name = "t"\nseeds = ["http://a.test/"]\n[relevance]\nmethod = "keywords"\n'
    topic += 'keywords = ["bicycle"]\nlink_score = "sideways"\n'
    with pytest.raises(TopicError, match="link_score"):
        load_topic_text(topic, tmp_path / "t.toml")
    with pytest.raises(FocusedError, match="FOCUSED_LINK_SCORE"):
        CrawlPlan.from_settings(
            Settings({"FOCUSED_LINK_SCORE": "sideways"}),
            Topic(Path("t.toml"), "t", [], "soft", "keywords"),
        )


FORUMS = [
    PageLink("http://a.test/cycling", "x", "x"),
    PageLink("http://a.test/forum/t1", "y", "y"),
    PageLink("http://news.blogspot.com/p", "z", "z"),
]


def test_forum_and_blog_links_are_dropped_before_the_frontier():
    from focused.settings import defaults

    page, verdict = judged("content", links=FORUMS, anchor_r=[0.5] * 3)
    policy = LinkPolicy(drop_urls=defaults.FOCUSED_DROP_URL_PATTERNS)
    kept = SoftFocus().links(page, policy.admitted(verdict))
    assert [link.url for link in kept] == ["http://a.test/cycling"]
    assert policy.dropped == 2
    assert LinkPolicy(drop_urls=[]).admitted(verdict) is verdict


def leased(page: Page) -> Page:
    """The page as popped from the frontier (under a lease)."""
    page.leased = Leased(page.url, "lease", page.depth, 1, "http://seed.test/", 0, 0.5)
    return page


@pytest.mark.parametrize("strategy", [SoftFocus(), HardFocus(), BreadthFirst()])
def test_the_frontier_pipeline_applies_the_link_policy_around_any_strategy(strategy):
    from focused.settings import defaults

    page, verdict = judged("anchor", links=FORUMS, anchor_r=[0.5] * 3, path_good=True)
    leased(page).judged(verdict)
    policy = LinkPolicy(drop_urls=defaults.FOCUSED_DROP_URL_PATTERNS)
    pipeline = FrontierPipeline(
        None,  # type: ignore[arg-type]  # an acknowledgement is made without the frontier
        strategy,
        get_crawler().stats,
        policy,
        duplicates=False,
    )
    ack = pipeline.ack_of(page)
    assert (ack.kind, ack.lease, ack.relevance) == ("page", "lease", PARENT)
    assert [(link.url, link.anchor) for link in ack.links] == [("http://a.test/cycling", "")]
    assert policy.dropped == 2


class Learner:
    """The online link model, as the link policy sees it: what it is told and asked."""

    def __init__(self):
        self.observed: list[tuple[LinkContext, bool]] = []
        self.asked: list[LinkContext] = []

    def observe(self, link: LinkContext, relevant: bool) -> None:
        self.observed.append((link, relevant))

    def predict(self, links: list[LinkContext]) -> list[float]:
        self.asked += links
        return [round(1 - link.estimate, 3) for link in links]


def test_the_link_model_learns_from_each_arrival_and_blends_every_priority():
    learner = Learner()
    policy = LinkPolicy(learner=learner)  # type: ignore[arg-type]
    assert policy.carry_anchors  # the model reads the anchors of the links it learns from
    page, verdict = judged("anchor")
    verdict = replace(verdict, category="Sport", arrival=0.9, arrival_estimate=0.9)
    page.leased = Leased(page.url, "lease", 2, 1, "http://q.test/", 0, 0.6, "tour", 0.6, "Sport")
    policy.learn(page, verdict)
    assert learner.observed == [(LinkContext(page.url, "tour", 0.9, 0.6, "Sport"), True)]
    # A seed, or a page whose parent was not judged: no link to learn from.
    policy.learn(replace(page, leased=None), verdict)
    policy.learn(page, replace(verdict, arrival_estimate=None))
    assert len(learner.observed) == 1
    links = policy.apply(SoftFocus().links(page, verdict), verdict)
    assert learner.asked == [
        LinkContext("http://a.test/1", "cycling", 0.9, PARENT, "Sport"),
        LinkContext("http://b.test/2", "football", 0.1, PARENT, "Sport"),
    ]
    assert [(k.url, k.score, k.depth, k.anchor) for k in links] == [
        ("http://a.test/1", 0.1, 3, "cycling"),
        ("http://b.test/2", 0.9, 3, "football"),
    ]
    # the blend stays under the strategy's ceiling (a genetic generation's band above it)
    capped = policy.apply(SoftFocus().links(page, verdict), verdict, ceiling=0.5)
    assert [k.score for k in capped] == [0.1, 0.5]


class Siblings:
    """The frontier as sibling credit sees it: host queues to read, URLs to raise."""

    def __init__(self, queues: dict[str, list[tuple[str, int, str]]]):
        self.queues = queues
        self.raised: list[tuple[float, list[tuple[str, str, int]]]] = []

    def host_queues(self, origins):
        return [self.queues.get(origin, []) for origin in origins]

    def raise_to(self, score, queued):
        self.raised.append((score, list(queued)))
        return len(self.raised[-1][1])


def test_a_relevant_page_raises_its_queued_siblings_to_the_parents_yield():
    queue = [  # (member, packed, URL), best first: depth, parent's fetch order, path
        ("3 7 cs105/", pack(0.9, 0, 1), "http://p.test/cs105/"),  # above the credit already
        ("3 7 cs102/", pack(0.1, 0, 2), "http://p.test/cs102/"),
        ("3 8 other/", pack(0.1, 0, 3), "http://p.test/other/"),
        ("3 7 cs103/", pack(0.1, 0, 4), "http://p.test/cs103/"),
    ]
    for n in range(6, 10):
        queue.append((f"3 7 cs10{n}/", pack(0.05, 0, n), f"http://p.test/cs10{n}/"))
    frontier = Siblings({"http://p.test": queue})
    policy = LinkPolicy(frontier=frontier, sibling_credit=1.0)  # type: ignore[arg-type]
    page, verdict = judged("anchor")

    def fetched(path: str, relevant: bool, parent: int = 7) -> None:
        child = Page(f"http://p.test/{path}", 200, 0.0, depth=3)
        child.leased = Leased(child.url, "l", 3, parent, "http://p.test/c", 0, 0.3, "", 0.1)
        policy.learn(child, replace(verdict, relevant=relevant))

    for n in range(30):  # a home page's links, two relevant: no more than the crawl's share
        fetched(f"nav{n}", n in (0, 1), parent=5)
    fetched("cs100/", False)
    fetched("cs101/", True)
    assert frontier.raised == []  # one relevant link of a page is not yet a list of them
    # 2 relevant of 3: 2 / (3 + 2) = 0.4, over twice the crawl's 2 * (4 + 1) / (33 + 2)
    fetched("cs104/", True)
    siblings = [
        ("http://p.test", m, p) for m, p, _ in queue if m[:4] == "3 7 " and p != queue[0][1]
    ]
    assert frontier.raised == [(pytest.approx(0.4), siblings)]  # those below 0.4
    assert policy.raised == 6


def test_anchors_are_queued_only_when_something_reads_them_back():
    page, verdict = judged("anchor")
    links = SoftFocus().links(page, verdict)
    assert {link.anchor for link in LinkPolicy().apply(links, verdict)} == {""}
    carried = LinkPolicy(carry_anchors=True).apply(links, verdict)
    assert [link.anchor for link in carried] == ["cycling", "football"]
    # the scores stay what the strategy gave
    assert [link.score for link in LinkPolicy().apply(links, verdict)] == [0.9, 0.1]


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
