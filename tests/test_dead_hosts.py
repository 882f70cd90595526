"""Dead links cost their fetches: a host's 404s lower its place in the frontier
(FOCUSED_DEAD_HOST_PRIOR) and hold it once they are most of its fetches
(FOCUSED_DEAD_HOST_HOLD); on a real Redis."""

from __future__ import annotations

from focused.items import Page
from focused.store.frontier.base import Ack, Link
from focused.store.frontier.queue import RedisFrontier


def fetch(f: RedisFrontier, dead: set[str], n: int = 1) -> list[str]:
    """Pop up to n URLs and acknowledge them: a 404 for those in ``dead``, else a page; their
    URLs, in pop order."""
    leased = f.pop_ready(n).leased
    f.complete_many(
        [
            Ack(one.lease, one.url, "bad", dead=True)
            if one.url in dead
            else Ack(one.lease, one.url, "page", 0.5)
            for one in leased
        ]
    )
    return [one.url for one in leased]


def test_a_404_or_a_failed_lookup_is_dead_another_bad_page_is_not():
    def ack(status: int | None, bad: str) -> Ack:
        return Ack.of(Page("http://a.test/", status, 0.0, bad=bad))

    assert ack(404, "http_404").dead and ack(410, "http_410").dead and ack(None, "dns").dead
    assert not ack(500, "http_500").dead and not ack(200, "not_html").dead
    assert not ack(None, "timeout").dead


def test_a_host_of_dead_links_goes_behind_a_live_one(frontier):
    f = frontier(dead_prior=2.0, host_concurrency=1)
    f.push_many([Link(f"http://dead.test/{i}", 0.9 - i / 100) for i in range(4)])
    f.push_many([Link(f"http://live.test/{i}", 0.5 - i / 100) for i in range(2)])
    dead = {f"http://dead.test/{i}" for i in range(4)}
    assert fetch(f, dead) + fetch(f, dead) == ["http://dead.test/0", "http://dead.test/1"]
    # The crawl's live share is (0 + 1) / (2 + 1) = 1/3; dead.test's (0 + 2 / 3) / (2 + 2)
    # = 1/6: its best URL, .88, counts .15, behind live.test's .5.
    assert fetch(f, dead) == ["http://live.test/0"]
    assert f.counts()["dead"] == 2
    # live.test's live share is now (1 + 2 * .5) / (1 + 2) = 2/3 (the crawl's: 2/4): .49 * 2/3
    # = .33 still beats dead.test's .88 * (2 * .5) / 4 = .22.
    assert fetch(f, dead) == ["http://live.test/1"]
    assert fetch(f, dead) == ["http://dead.test/2"]


def test_without_the_prior_the_scores_alone_place_the_hosts(frontier):
    f = frontier(host_concurrency=1)
    f.push_many([Link(f"http://dead.test/{i}", 0.9 - i / 100) for i in range(3)])
    f.push_many([Link("http://live.test/0", 0.5)])
    dead = {f"http://dead.test/{i}" for i in range(3)}
    assert [fetch(f, dead)[0] for _ in range(4)] == [*sorted(dead), "http://live.test/0"]


def test_a_web_without_dead_links_is_crawled_as_without_the_prior(frontier_client, crawl_name):
    """Every host's live share is 1 while no fetch was dead: the same order, ties and all."""
    orders = []
    for prior in (0.0, 2.0):
        f = RedisFrontier.for_crawl(
            frontier_client,
            f"{crawl_name}-{prior:.0f}",
            host_delay=0.0,
            host_concurrency=1,
            dead_prior=prior,
            dead_hold=0.5,
        )
        f.push_many([Link(f"http://h{i % 3}.test/{i}", 0.3 + i % 4 / 10) for i in range(12)])
        orders.append([url for _ in range(12) for url in fetch(f, set())])
    assert orders[0] == orders[1] and len(set(orders[0])) == 12


def test_a_host_of_mostly_dead_fetches_is_held_while_another_has_urls(frontier):
    f = frontier(dead_prior=1.0, dead_hold=0.4, dead_after=2, host_concurrency=1)
    f.push_many([Link(f"http://dead.test/{i}", 0.9 - i / 100) for i in range(4)])
    dead = {f"http://dead.test/{i}" for i in range(4)}
    assert fetch(f, dead) + fetch(f, dead) == ["http://dead.test/0", "http://dead.test/1"]
    f.push_many([Link(f"http://live.test/{i}", 0.01 - i / 1000) for i in range(3)])
    # dead.test: 2 fetches, live share (0 + 1 * p) / 3 for the crawl's p, 1/3 then at most
    # 4/6 here: under .4, held, though its URLs score better; served again once live.test has
    # nothing queued.
    assert [fetch(f, dead) for _ in range(4)] == [
        ["http://live.test/0"],
        ["http://live.test/1"],
        ["http://live.test/2"],
        ["http://dead.test/2"],
    ]
    assert f.counts()["held/dead"] == 1
