"""The online link model: what it learns, how processes share it through Redis, and a crawl
that learns as it goes (real Redis, real HTTP); the link policy's sibling credit on a real
frontier."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from focused.relevance.linkmodel import LinkContext, OnlineLinkModel
from focused.store import keys
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.strategies.learning import SharedLinkModel, decode, encode


def link(
    anchor: str, estimate: float = 0.5, url: str = "", category: str = "Sports"
) -> LinkContext:
    return LinkContext(
        url or f"http://a.test/{anchor.replace(' ', '_')}", anchor, estimate, 0.9, category
    )


def examples(n: int) -> tuple[list[LinkContext], list[int]]:
    """Links named after birds lead to relevant pages, links named after cars do not."""
    birds = ["heron", "kingfisher", "warbler", "swallow", "falcon"]
    cars = ["sedan", "hatchback", "roadster", "coupe", "minivan"]
    links, labels = [], []
    for i in range(n):
        links += [link(f"{birds[i % 5]} {i}"), link(f"{cars[i % 5]} {i}")]
        labels += [1, 0]
    return links, labels


def test_before_learning_the_estimate_is_the_priority():
    model = OnlineLinkModel()
    links = [link("heron", 0.8), link("sedan", 0.3)]
    assert model.weight == 0.0
    assert model.predict(links).tolist() == [0.8, 0.3]
    model.partial_fit(*examples(1)[:1], [1, 1])  # one outcome only: still nothing to trust
    assert model.weight == 0.0


def test_it_learns_which_links_lead_to_relevant_pages():
    model = OnlineLinkModel(warmup=20).partial_fit(*examples(40))
    assert model.n_examples_ == 80 and 0.7 < model.weight < 1
    # Same estimate, unseen numbers in the anchors: the learned words decide.
    heron, sedan = model.predict([link("heron 999"), link("sedan 999")])
    assert heron > 0.5 > sedan


def test_processes_share_one_model_through_the_training_log(redis_client, crawl_name):
    frontier = RedisFrontier.for_crawl(redis_client, crawl_name)
    shared = [SharedLinkModel(frontier.store, OnlineLinkModel()) for _ in range(2)]
    links, labels = examples(30)
    for i, (one, label) in enumerate(zip(links, labels, strict=True)):
        shared[i % 2].observe(one, bool(label))  # each process sees half the pages
    for model in shared:
        model.sync()
    assert redis_client.llen(keys.prefix(crawl_name) + keys.LINK_LOG) == 60
    # A process that starts late replays the log and has the same model.
    late = SharedLinkModel(frontier.store, OnlineLinkModel())
    assert late.sync() == 60
    shared[0].sync(), shared[1].sync()
    coefs = [m.model.classifier_.coef_ for m in (*shared, late)]
    assert all(np.array_equal(coefs[0], c) for c in coefs[1:])
    assert late.predict([link("falcon 7")])[0] > late.predict([link("coupe 7")])[0]


def test_training_log_entries_round_trip():
    one = LinkContext("http://a.test/x?q=1", "a  tab\tanchor", 0.25, 0.75, "Science/Birds")
    again, label = decode(encode(one, True))
    assert label == 1 and again.anchor == "a tab anchor" and again.url == one.url
    assert (again.estimate, again.parent_relevance, again.parent_category) == (
        0.25,
        0.75,
        "Science/Birds",
    )


def test_anchors_travel_with_queued_urls_and_parents_carry_their_r(redis_client, crawl_name):
    frontier = RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0)
    frontier.push_many([Link("http://a.test/parent", 1.0)])
    parent = frontier.pop_ready(1).leased[0]
    assert parent.parent_relevance is None and parent.anchor == ""
    child = Link("http://b.test/child", 0.8, 1, "the  heron\tof the lake")
    frontier.complete(parent.lease, parent.url, "page", 0.75, True, [child], "Science/Birds")
    leased = frontier.pop_ready(1).leased[0]
    assert (leased.url, leased.anchor) == ("http://b.test/child", "the heron of the lake")
    assert (leased.parent_url, leased.parent_relevance, leased.parent_category) == (
        "http://a.test/parent",
        0.75,
        "Science/Birds",
    )


def test_a_crawl_learns_its_links_as_it_goes(crawl, redis_client):
    stats = crawl.run(CLOSESPIDER_ITEMCOUNT=60, FOCUSED_LINK_MODEL=True, FOCUSED_LINK_MODEL_SYNC=5)
    log = redis_client.lrange(keys.prefix(crawl.name) + keys.LINK_LOG, 0, -1)
    entries = [decode(entry) for entry in log]
    # One entry per classified page reached through a link (not the seeds), with its anchor.
    assert 30 <= len(entries) <= stats["focused/pages/fetched"]
    assert sum(bool(one.anchor) for one, _ in entries) >= len(entries) * 0.9
    assert {label for _, label in entries} == {0, 1}
    feed = {item["url"] for item in crawl.feed()}
    assert {one.url for one, _ in entries} <= feed


def test_sibling_credit_raises_the_queued_links_of_a_parent_that_yields(redis_client, crawl_name):
    from focused.items import Page
    from focused.store.frontier.base import Leased
    from focused.strategies.policy import LinkPolicy
    from focused.topic.judge import Verdict

    frontier = RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0)
    frontier.push_many([Link("http://a.test/courses", 1.0)])
    index = frontier.pop_ready(1).leased[0]
    courses = [Link(f"http://a.test/cs{n}/", 0.01, 1) for n in range(100, 106)]
    order, new = frontier.complete(index.lease, index.url, "page", 0.1, False, courses)
    assert new == 6
    policy = LinkPolicy(frontier=frontier, sibling_credit=1.0)
    verdict = Verdict(0.9, True, "course", 0.9)

    def judged(url: str, parent: int, relevant: bool) -> None:
        page = Page(url, 200, 0.0, depth=1)
        page.leased = Leased(url, "l", 1, parent, "http://a.test/courses", 0, 0.01)
        policy.learn(page, replace(verdict, relevant=relevant))

    for n in range(18):  # the crawl's other pages (of a parent 99), one relevant
        judged(f"http://b.test/{n}", 99, n == 0)
    judged("http://a.test/cs100/", order, True)
    assert policy.raised == 0  # one relevant sibling is not yet a list of them
    # 2 / (2 + 2) = 0.5, over twice the crawl's share, 2 * (3 + 1) / (20 + 2) = 0.36
    judged("http://a.test/cs101/", order, True)
    assert policy.raised == 6  # every link of the index still queued (all six, in the test)
    assert {round(score, 3) for _, score in frontier_scores(frontier)} == {0.5}


def frontier_scores(frontier: RedisFrontier) -> list[tuple[str, float]]:
    from focused.store.frontier.records import unpack_score

    return [
        (url, unpack_score(packed)[1]) for _, packed, url in frontier.host_queue("http://a.test")
    ]
