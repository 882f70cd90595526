"""The frontier's pushes and pops where a batch meets itself, on a real Redis: a link given
twice in one batch, a page of thousands of links, a host's head changed by a push after pops,
a host's URLs popped in order among another's, a trimmed queue, owned leases and their
parents' records."""

from __future__ import annotations

import pytest

from focused.store import keys
from focused.store.frontier.base import Ack, Budgets, Link
from tests.test_frontier import one_shard, urls

pytestmark = pytest.mark.redis


def test_a_link_given_twice_in_one_push_is_queued_once(frontier):
    f = frontier(seen_buckets=1)  # one bucket: the batch's members are checked together
    a, b = one_shard(f, "a", "b")
    links = [Link(f"{a}/x", 0.5), Link(f"{b}/y", 0.5), Link(f"{a}/x", 0.9), Link(f"{a}/z", 0.1)]
    assert f.push_many(links) == 3
    assert f.counts()["queued"] == 3 and f.counts()["seen"] == 3
    assert f.push_many([Link(f"{a}/x", 0.5), Link(f"{a}/new", 0.5)]) == 1
    assert sorted(urls(f.pop_ready(10))) == sorted([f"{a}/x", f"{b}/y", f"{a}/z", f"{a}/new"])


def test_a_page_with_more_links_than_one_command_takes(frontier):
    f = frontier(seen_buckets=1, host_concurrency=10_000)
    (a,) = one_shard(f, "a")
    assert f.push_many([Link(f"{a}/{i}", 0.5) for i in range(2500)]) == 2500
    assert f.push_many([Link(f"{a}/{i}", 0.5) for i in range(2400, 2600)]) == 100
    assert len(f.pop_ready(3000).leased) == 2600


def test_a_push_after_pops_moves_the_hosts_head(frontier):
    f = frontier(host_concurrency=2)
    a, b = one_shard(f, "a", "b")
    f.push_many([Link(f"{a}/{i}", 0.5) for i in range(4)] + [Link(f"{b}/1", 0.4)])
    first = f.pop_ready(2)
    assert urls(first)[0].startswith(a) and urls(first)[1].startswith(a)
    f.complete_many([Ack(leased.lease, leased.url, "page", 0.5, False) for leased in first.leased])
    f.push_many([Link(f"{a}/best", 0.95)])  # a's head is now a URL pushed after its pops
    assert urls(f.pop_ready(1)) == [f"{a}/best"]


def test_a_pop_takes_a_hosts_urls_in_order_with_the_others(frontier):
    f = frontier(host_concurrency=10)
    a, b = one_shard(f, "a", "b")
    f.push_many(
        [Link(f"{a}/{i}", score) for i, score in enumerate([0.9, 0.8, 0.5, 0.2])]
        + [Link(f"{b}/{i}", score) for i, score in enumerate([0.7, 0.6])]
    )
    assert urls(f.pop_ready(5)) == [f"{a}/0", f"{a}/1", f"{b}/0", f"{b}/1", f"{a}/2"]
    assert urls(f.pop_ready(5)) == [f"{a}/3"]
    assert f.pop_ready(5).in_flight == 6


def test_a_trimmed_queue_keeps_its_best_urls_and_its_place(frontier):
    f = frontier(budgets=Budgets(host_queued=2), host_concurrency=1)
    a, b = one_shard(f, "a", "b")
    f.push_many([Link(f"{a}/{i}", 0.1 * i) for i in range(1, 5)] + [Link(f"{b}/1", 0.35)])
    assert f.counts()["dropped/host_queue"] == 2
    assert urls(f.pop_ready(10)) == [f"{a}/4", f"{b}/1"]
    f.push_many([Link(f"{a}/9", 0.9), Link(f"{a}/0", 0.01)])  # trims the worst again
    popped = f.pop_ready(10)
    assert popped.leased == [] and popped.queued == 2  # a's slot is taken


def test_a_pops_leases_are_owned_and_carry_their_parents_records(frontier):
    f = frontier(host_concurrency=10)
    (a,) = one_shard(f, "a")
    f.push_many([Link(f"{a}/root", 0.9)])
    (root,) = f.pop_ready(1).leased
    children = [Link(f"{a}/c{i}", 0.5) for i in range(3)]
    (acked,) = f.complete_many([Ack(root.lease, root.url, "page", 0.7, True, children)])
    f.owner = "p1"
    popped = f.pop_ready(10).leased
    assert len(popped) == 3 and {leased.parent for leased in popped} == {acked.order}
    assert {leased.parent_url for leased in popped} == {root.url}
    assert {leased.parent_relevance for leased in popped} == {0.7}
    owned = f.store.key(keys.OWNED + "p1", shard=f.store.shards.of_host(a))
    assert f.store._client.scard(owned) == 3
