"""The Redis frontier on a real Redis: order, politeness, leases and dedup."""

from __future__ import annotations

import inspect
import itertools
import random
import time

import pytest
import redis
from w3lib.url import canonicalize_url

from focused.errors import FocusedError
from focused.links.urls import CANONICAL, BadURL, clean_url
from focused.store import keys
from focused.store.frontier.base import Frontier, Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import split_url, unpack_score
from tests.conftest import free_port


@pytest.fixture(params=["server", pytest.param("cluster", marks=pytest.mark.cluster)])
def frontier_client(request: pytest.FixtureRequest) -> redis.Redis:
    """The ``frontier`` fixture's Redis: each test runs on one server, then on a Redis Cluster
    (its ``cluster`` tier), where the frontier is sharded over the masters."""
    return request.getfixturevalue("redis_client" if request.param == "server" else "cluster")


def urls(pop) -> list[str]:
    return [leased.url for leased in pop.leased]


def one_shard(f: RedisFrontier, *names: str) -> list[str]:
    """An origin ``http://<name><i>.test`` per name, all of the first shard. The frontier's
    order across hosts is a shard's: on a cluster the pops take the shards in turn."""
    shards = f.store.shards
    return [
        next(o for i in itertools.count() if shards.of_host(o := f"http://{name}{i}.test") == 0)
        for name in names
    ]


def fetch_order(f: RedisFrontier, url: str, n: int = 1) -> int:
    """The fetch order of the n-th page fetched from the shard of ``url``'s host: n on one
    server, n·S + j on shard j of S."""
    shards = f.store.shards
    return n * len(shards) + shards.of_host(split_url(url)[0])


def test_pops_by_relevance_then_host_load(frontier):
    f = frontier()
    a, b, c = one_shard(f, "a", "b", "c")
    f.push_many([Link(f"{a}/low", 0.2), Link(f"{b}/high", 0.9), Link(f"{c}/mid", 0.5)])
    assert urls(f.pop_ready(10)) == [f"{b}/high", f"{c}/mid", f"{a}/low"]


def test_equal_relevance_prefers_hosts_crawled_less(frontier):
    f = frontier()
    busy, fresh = one_shard(f, "busy", "fresh")
    f.push_many([Link(f"{busy}/{i}", 0.5) for i in range(3)])
    for leased in f.pop_ready(3).leased:
        f.complete(leased.lease, leased.url, "page", 0.5, False)
    f.push_many([Link(f"{busy}/next", 0.5), Link(f"{fresh}/next", 0.5)])
    assert urls(f.pop_ready(2)) == [f"{fresh}/next", f"{busy}/next"]


def test_retried_urls_come_after_fresh_ones(frontier):
    f = frontier(lease_s=0.2)
    a, b = one_shard(f, "a", "b")
    f.push_many([Link(f"{a}/first", 0.9)])
    assert urls(f.pop_ready(1)) == [f"{a}/first"]
    f.push_many([Link(f"{b}/fresh", 0.1)])
    time.sleep(0.3)  # the lease of /first runs out: it returns with num_tries 1
    pop = f.pop_ready(2)
    assert urls(pop) == [f"{b}/fresh", f"{a}/first"]
    assert [leased.tries for leased in pop.leased] == [0, 1]


def test_dedup_is_by_canonical_url(frontier):
    f = frontier()
    new = f.push_many(
        [
            Link("http://a.test/p?b=2&a=1", 0.5),
            Link("http://a.test/p?a=1&b=2#x", 0.5),
            Link("http://A.TEST/p?a=1&b=2", 0.5),
        ]
    )
    assert new == 1
    assert f.push_many([Link("http://a.test/p?a=1&b=2", 0.9)]) == 0
    assert f.counts()["seen"] == 1


def test_host_delay_holds_a_host_but_not_the_others(frontier):
    f = frontier(host_delay=0.5)
    slow, other = one_shard(f, "slow", "other")
    f.push_many([Link(f"{slow}/1", 0.9), Link(f"{slow}/2", 0.9), Link(f"{other}/1", 0.1)])
    first = f.pop_ready(10)
    # One URL per host: one of slow's, and other's although it scores lower.
    popped = urls(first)
    assert len(popped) == 2 and popped[1] == f"{other}/1"
    assert popped[0].startswith(f"{slow}/")
    second = f.pop_ready(10)
    assert second.leased == [] and second.queued == 1
    assert 0.3 < second.wake_in <= 0.5
    time.sleep(second.wake_in + 0.05)
    assert len(f.pop_ready(10).leased) == 1


def test_host_concurrency_caps_leases_until_acknowledged(frontier):
    f = frontier(host_concurrency=2)
    f.push_many([Link(f"http://a.test/{i}", 0.5) for i in range(5)])
    pop = f.pop_ready(10)
    assert len(pop.leased) == 2 and pop.in_flight == 2
    assert f.pop_ready(10).leased == []
    f.complete(pop.leased[0].lease, pop.leased[0].url, "page", 0.5, False)
    assert len(f.pop_ready(10).leased) == 1


def test_complete_acknowledges_and_pushes_children(frontier):
    f = frontier()
    f.push_many([Link("http://a.test/parent", 1.0)])
    parent = f.pop_ready(1).leased[0]
    order, new = f.complete(
        parent.lease,
        parent.url,
        "page",
        0.8,
        True,
        [Link("http://b.test/child", 0.8, depth=1), Link("http://a.test/parent", 0.8, depth=1)],
    )
    assert (order, new) == (fetch_order(f, parent.url), 1)
    child = f.pop_ready(1).leased[0]
    assert (child.url, child.depth, child.parent_url) == (
        "http://b.test/child",
        1,
        "http://a.test/parent",
    )
    assert child.score == pytest.approx(0.8, abs=1e-4)
    counts = f.counts()
    assert (counts["fetched"], counts["relevant"], counts["queued"], counts["in_flight"]) == (
        1,
        1,
        0,
        1,
    )


def test_expired_lease_returns_and_is_failed_after_max_tries(frontier):
    f = frontier(lease_s=0.1, max_tries=2)
    f.push_many([Link("http://a.test/flaky", 0.5)])
    assert f.pop_ready(1).leased[0].tries == 0
    time.sleep(0.15)
    assert f.pop_ready(1).leased[0].tries == 1
    time.sleep(0.15)
    pop = f.pop_ready(1)
    assert pop.leased == [] and pop.queued == 0 and pop.in_flight == 0
    assert f.counts()["failed"] == 1


def test_late_ack_removes_the_requeued_copy(frontier):
    f = frontier(lease_s=0.1)
    f.push_many([Link("http://a.test/slow", 0.5), Link("http://b.test/x", 0.1)])
    slow = f.pop_ready(1).leased[0]
    time.sleep(0.15)
    f.push_many([Link("http://c.test/y", 0.1)])  # any write; the next pop requeues /slow
    f.complete(slow.lease, slow.url, "page", 0.5, False)
    assert "http://a.test/slow" not in urls(f.pop_ready(10))


def test_release_returns_leases_untouched(frontier):
    f = frontier()
    f.push_many([Link("http://a.test/1", 0.5)])
    leased = f.pop_ready(1).leased
    assert f.release([leased[0].lease]) == 1
    again = f.pop_ready(1).leased[0]
    assert (again.url, again.tries) == ("http://a.test/1", 0)


def test_retry_requeues_one_try_later_until_max_tries(frontier):
    f = frontier(max_tries=2)
    a, b = one_shard(f, "a", "b")
    f.push_many([Link(f"{a}/flaky", 0.9), Link(f"{b}/fresh", 0.1)])
    flaky = f.pop_ready(1).leased[0]
    assert f.release([flaky.lease], retry=True) == 1
    pop = f.pop_ready(2)
    assert urls(pop) == [f"{b}/fresh", f"{a}/flaky"]
    assert pop.leased[1].tries == 1
    assert f.release([pop.leased[1].lease], retry=True) == 0  # its second try failed too
    counts = f.counts()
    assert (counts["failed"], counts["queued"]) == (1, 0)


def test_failed_and_bad_kinds_are_counted(frontier):
    f = frontier()
    f.push_many([Link("http://a.test/gone", 0.5), Link("http://b.test/png", 0.5)])
    gone, png = f.pop_ready(2).leased
    assert f.complete(gone.lease, gone.url, "failed") == (0, 0)
    order, _ = f.complete(png.lease, png.url, "bad")
    assert order == fetch_order(f, png.url)
    counts = f.counts()
    assert (counts["failed"], counts["bad"], counts["fetched"]) == (1, 1, 1)
    assert len(f) == 0


def test_split_url_keys_queues_by_origin():
    origin, rest = split_url("http://Www.A.test:8080/p/q?x=1#frag")
    assert (origin, rest) == ("http://www.a.test:8080", "/p/q?x=1")
    assert split_url("https://a.test") == ("https://a.test", "/")


def test_packed_score_round_trips():
    from focused.store.frontier.records import pack

    tries, score = unpack_score(pack(0.731, 2, 12345))
    assert tries == 2 and score == pytest.approx(0.731, abs=1e-4)


def test_a_lease_that_runs_out_keeps_the_urls_anchor_and_parent(frontier):
    f = frontier(lease_s=0.1)
    f.push_many([Link("http://p.test/1", 1.0)])
    (parent,) = f.pop_ready(1).leased
    f.complete(
        parent.lease, parent.url, "page", 0.7, True, [Link("http://a.test/x", 0.5, 1, "an anchor")]
    )
    first = f.pop_ready(1).leased[0]
    time.sleep(0.15)
    again = f.pop_ready(1).leased[0]
    assert (again.url, again.tries, again.anchor, again.parent_url, again.depth) == (
        first.url,
        1,
        "an anchor",
        "http://p.test/1",
        1,
    )
    assert again.parent_relevance == 0.7


def test_a_default_port_and_the_host_case_make_no_other_host(frontier):
    f = frontier(host_concurrency=1)
    assert split_url("http://Host:80/a") == split_url("http://host/a") == ("http://host", "/a")
    assert split_url("https://Host:443/") == ("https://host", "/")
    assert split_url("http://host:8080/a") == ("http://host:8080", "/a")
    assert f.push_many([Link("http://Host:80/a", 0.5), Link("http://host/a", 0.5)]) == 1
    f.push_many([Link("http://HOST:80/b", 0.9), Link("http://host/c", 0.8)])
    # One host, one fetch at a time: the second URL waits for the first's acknowledgement.
    pop = f.pop_ready(3)
    assert urls(pop) == ["http://host/b"]
    f.complete(pop.leased[0].lease, "http://host/b", "page", 0.5, False)
    assert urls(f.pop_ready(3)) == ["http://host/c"]


def script_calls(client) -> int:
    return int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))


# One server only: it counts the script calls one server saw.
@pytest.mark.parametrize("frontier_client", ["server"], indirect=True)
def test_a_process_sends_a_link_once_and_others_still_dedup(frontier, redis_client):
    one, two = frontier(), frontier()
    links = [Link(f"http://a.test/{i}", 0.5) for i in range(5)]
    assert one.push_many(links) == 5
    before = script_calls(redis_client)
    assert one.push_many(links) == 0  # all known to this process: no call at all
    assert script_calls(redis_client) == before
    # Another process has its own cache: Redis's seen set stops the duplicates.
    assert two.push_many([*links, Link("http://a.test/new", 0.5)]) == 1
    assert one.counts()["seen"] == 6
    # A page's links that the process sent before are left out, the crawl graph keeps them.
    (leased,) = one.pop_ready(1).leased
    order, new = one.complete(
        leased.lease, leased.url, "page", 0.5, True, [*links, Link("http://b.test/x", 0.5)]
    )
    assert new == 1 and one.counts()["seen"] == 7
    # the page's fingerprint and its one link to another server
    graph = one.store.shards.record_key(keys.GRAPH, order)
    assert redis_client.hstrlen(graph, order) == 8 + 12


def test_the_cache_forgets_links_a_failed_call_did_not_store(frontier, crawl_name):
    f = frontier(seen_cache=3, retries=0)
    assert f.push_many([Link(f"http://a.test/{i}", 0.5) for i in range(3)]) == 3
    assert f.push_many([Link("http://a.test/3", 0.5)]) == 1
    assert len(f.known) == 0  # more than seen_cache: emptied, and Redis still dedups
    assert f.push_many([Link("http://a.test/3", 0.5)]) == 0
    dead = RedisFrontier.for_crawl(
        redis.Redis(port=free_port()), crawl_name, retries=0
    )  # no server
    with pytest.raises(FocusedError):
        dead.push_many([Link("http://a.test/lost", 0.5)])
    assert not dead.known


def test_urls_canonical_as_they_are_skip_canonicalisation():
    rnd = random.Random(7)
    chars = "AZaz09-._~!$&'()*+,;=:@/%?#"
    checked = 0
    for _ in range(20_000):
        raw = "http://www.h.test/" + "".join(rnd.choice(chars) for _ in range(rnd.randrange(25)))
        try:
            url = clean_url(raw, 0)
        except BadURL:
            continue
        if CANONICAL.fullmatch(url):
            checked += 1
            assert canonicalize_url(url) == url
    assert checked > 1000
    assert not CANONICAL.fullmatch("http://a.test/p;x")  # w3lib drops an empty parameter
    assert not CANONICAL.fullmatch("http://a.test/./p")  # and resolves dot segments


def mismatches(protocol: type, obj: object) -> list[str]:
    """How ``obj`` falls short of ``protocol``: a declared attribute it lacks, a method it lacks
    or whose signature differs (every parameter of the protocol's, in its place, with its
    kind, default and annotation; any more with a default; the same return annotation)."""
    found = [f"no attribute {name}" for name in protocol.__annotations__ if not hasattr(obj, name)]
    for name, declared in vars(protocol).items():
        if not inspect.isfunction(declared) or not declared.__qualname__.startswith(
            protocol.__qualname__ + "."
        ):
            continue  # what typing adds to every Protocol
        method = getattr(type(obj), name, None)
        if not callable(method):
            found.append(f"no method {name}")
            continue
        want, have = inspect.signature(declared), inspect.signature(method)
        positional = [p.name for p in want.parameters.values() if p.kind <= p.POSITIONAL_OR_KEYWORD]
        extra = [p for n, p in have.parameters.items() if n not in want.parameters]
        if (
            list(have.parameters)[: len(positional)] != positional
            or any(have.parameters.get(n) != p for n, p in want.parameters.items())
            or any(
                p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                for p in extra
            )
            or have.return_annotation != want.return_annotation
        ):
            found.append(f"{name}{have} is not {name}{want}")
    return found


def test_the_redis_frontier_is_a_frontier():
    # never connects: nothing here calls Redis
    f = RedisFrontier.for_crawl(redis.Redis(), "contract")
    assert mismatches(Frontier, f) == []

    class Narrower(RedisFrontier):
        def release(self, leases, retry=False):  # retry no longer keyword-only, no annotations
            return 0

    narrower = Narrower.for_crawl(redis.Redis(), "contract")
    del narrower.owner
    assert mismatches(Frontier, narrower) == [
        "no attribute owner",
        "release(self, leases, retry=False) is not "
        "release(self, leases: 'Iterable[str]', *, retry: 'bool' = False) -> 'int'",
    ]
