"""One crawl across a real Redis Cluster of 3 masters on 127.0.0.1: the frontier sharded by
host, pages handed to other shards through the outbox, and whole crawls by several processes
(one of them SIGKILLed) that fetch every page once, hold per-host politeness, and leave a crawl
that `focused status`, `report`, `hubs` and the distiller read."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import pytest

from focused.lab.webs.bundle import url_key
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.admin import known_count, reset_crawl
from focused.store.client import connect
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Ack, Link
from focused.store.frontier.records import split_url
from focused.store.graph import GraphStore
from focused.store.reads import Reader
from focused.store.shards import crawl_shards
from tests.conftest import Crawl, focused, wait_for
from tests.test_crash import FAST, kill, refetched
from tests.test_crawl import reachable, served_pages
from tests.test_politeness import fetch_times

HOSTS = [f"http://h{i}.test" for i in range(20)]


@pytest.fixture
def frontier_client(cluster):
    """The ``frontier`` fixture's frontiers are on the cluster here."""
    return cluster


def masters_of(client, prefixes) -> set[str]:
    return {client.nodes_manager.get_node_from_slot(client.keyslot(p)).name for p in prefixes}


def test_a_frontier_has_a_shard_per_master_and_hosts_spread_over_them(
    cluster, frontier, crawl_name, redis_cluster
):
    f = frontier()
    shards = f.store.shards
    assert len(shards) == 3 and shards.prefixes[0] == keys.prefix(crawl_name)
    assert len(masters_of(cluster, shards.prefixes)) == 3
    # Every process of the crawl reads the same shards.
    assert crawl_shards(connect(redis_cluster), crawl_name, create=True) == shards
    urls = [f"{host}/p{i}" for host in HOSTS for i in range(3)]
    assert f.push_many([Link(url, 0.5) for url in urls]) == 60
    assert f.push_many([Link(url, 0.9) for url in urls]) == 0  # seen, on every shard
    per_shard = Counter(shards.of_host(host) for host in HOSTS)
    assert sorted(per_shard) == [0, 1, 2]
    for host in HOSTS:
        assert cluster.zcard(f.store.host_key(keys.HOST_QUEUE, host)) == 3
    assert f.counts()["queued"] == 60
    popped = []
    while pop := f.pop_ready(7).leased:
        popped += pop
    assert sorted(lease.url for lease in popped) == sorted(urls)
    assert f.counts()["in_flight"] == 60


def test_pops_draw_from_every_shard_fairly(frontier):
    f = frontier()
    f.push_many([Link(f"{host}/p{i}", 0.5) for host in HOSTS for i in range(10)])
    first = [f.store.shards.of_host(split_url(f.pop_ready(1).leased[0].url)[0]) for _ in range(9)]
    assert Counter(first) == {0: 3, 1: 3, 2: 3}


def test_links_to_other_shards_reach_them_with_their_parent(frontier):
    f = frontier()
    page = "http://h0.test/"
    f.push_many([Link(page, 0.9)])
    [lease] = f.pop_ready(1).leased
    children = [f"{host}/child" for host in HOSTS]
    order, new = f.complete(
        lease.lease, page, "page", 0.8, True, [Link(url, 0.7) for url in children], "birds"
    )
    assert new == 20 and order % 3 == f.store.shards.of_host("http://h0.test")
    leased = []
    while pop := f.pop_ready(20).leased:
        leased += pop
    assert sorted(lease.url for lease in leased) == sorted(children)
    # The parent's record is read from its own shard, whichever shard the child is on.
    assert {(lease.parent, lease.parent_url, lease.parent_relevance) for lease in leased} == {
        (order, page, 0.8)
    }
    assert {lease.parent_category for lease in leased} == {"birds"}
    # The outbox entry goes with the next call to the page's shard, or at the close.
    home = f.store.shards.host_prefix("http://h0.test")
    f.settle()
    assert f.store._client.hlen(home + keys.OUTBOX) == 0


def test_a_batch_of_pages_on_every_shard_is_one_call_a_shard_and_its_links_reach_all(
    frontier, monkeypatch
):
    f = frontier()
    pages = [f"{host}/" for host in HOSTS[:6]]
    f.push_many([Link(url, 0.9) for url in pages])
    leases = {leased.url: leased.lease for leased in f.pop_ready(10).leased}
    calls = Counter()
    call = f._call
    monkeypatch.setattr(
        f, "_call", lambda s, a, j=0: calls.update([(s is f._push, j)]) or call(s, a, j)
    )
    acks = [
        Ack(leases[url], url, "page", 0.8, True, [Link(f"{h}/from{i}", 0.7) for h in HOSTS])
        for i, url in enumerate(pages)
    ]
    done = f.complete_many(acks)
    homes = {f.store.shards.of_host(split_url(url)[0]) for url in pages}
    # One acknowledgement per home shard, the first shard's checking the batch's duplicates;
    # links ride with the acknowledgements of shards called after their pages', and the rest
    # go in one push per shard at the end: 5 calls on 3 shards, not one per page and shard.
    assert sum(n for (push, _), n in calls.items() if not push) == len(homes) == 3
    assert sum(n for (push, _), n in calls.items() if push) <= len(homes) - 1
    assert sum(d.new for d in done) == len(pages) * len(HOSTS)
    leased = []
    while pop := f.pop_ready(50).leased:
        leased += pop
    parents = {d.order: url for d, url in zip(done, pages, strict=True)}
    assert len(leased) == len(pages) * len(HOSTS)
    assert all(lease.url.endswith(f"/from{pages.index(parents[lease.parent])}") for lease in leased)
    assert all(lease.parent_url == parents[lease.parent] for lease in leased)


def test_a_process_killed_before_its_links_reach_other_shards_loses_none(frontier, monkeypatch):
    dying = frontier()
    dying.owner = "gone-1"  # a process whose heartbeat record has expired
    page = "http://h0.test/"
    dying.push_many([Link(page, 0.9)])
    [lease] = dying.pop_ready(1).leased
    children = [f"{host}/child" for host in HOSTS]
    foreign = [c for c in children if dying.store.shards.of_host(split_url(c)[0]) != 0]

    def killed(*args, **kwargs):
        raise SystemExit("killed")

    monkeypatch.setattr(dying, "_push_shards", killed)
    with pytest.raises(SystemExit):
        dying.complete(lease.lease, page, "page", 0.8, True, [Link(u, 0.7) for u in children])
    monkeypatch.undo()
    other = frontier()
    assert other.counts()["queued"] == len(children) - len(foreign)
    assert other.redeliver() == 1
    assert other.counts()["queued"] == len(children)
    assert other.redeliver() == 0
    leased = []
    while pop := other.pop_ready(20).leased:
        leased += pop
    assert sorted(lease.url for lease in leased) == sorted(children)
    assert {lease.parent_url for lease in leased} == {page}


def test_outbox_entries_of_live_processes_are_left_to_them(frontier):
    live = frontier()
    page = "http://h0.test/"
    live.push_many([Link(page, 0.9)])
    [lease] = live.pop_ready(1).leased
    live.complete(lease.lease, page, "page", 0.8, True, [Link(f"{h}/c", 0.7) for h in HOSTS])
    # Its entry is delivered and waits for its next call there: no one delivers it again.
    assert frontier().redeliver() == 0
    assert live.redeliver() == 0


def on_shards(shards, count: int) -> list[str]:
    """``count`` hosts of HOSTS, each on a shard of its own."""
    firsts = {}
    for host in HOSTS:
        firsts.setdefault(shards.of_host(host), host)
    return [firsts[j] for j in sorted(firsts)][:count]


def test_one_text_on_hosts_of_two_shards_is_a_duplicate_the_second_time(frontier, cluster):
    f = frontier()
    one, two, three = (f"{host}/" for host in on_shards(f.store.shards, 3))
    f.push_many([Link(url, 0.9) for url in (one, two, three)])
    leases = {leased.url: leased.lease for leased in f.pop_ready(10).leased}

    def ack(url: str, checksum: str) -> Ack:
        return Ack(
            leases[url], url, "page", 0.8, True, [Link(f"{url}from", 0.7)], "", None, checksum
        )

    [first] = f.complete_many([ack(one, "same-text")])
    # In one batch, the first in the batch's order is the original, whichever shard is called
    # first; another text on another shard is none.
    second, third = frontier().complete_many([ack(two, "other-text"), ack(three, "same-text")])
    assert (first.duplicate, second.duplicate, third.duplicate) == ("", "", "text")
    assert first.new == second.new == 1 and third.new == 0  # a duplicate's links are not queued
    # Each text is recorded on its checksum's shard only, whatever its page's host.
    shards = f.store.shards
    for text in ("same-text", "other-text"):
        home = shards.of_text(text)
        assert [cluster.hexists(f.store.key(keys.CHECKSUMS, shard=j), text) for j in range(3)] == [
            j == home for j in range(3)
        ]


def test_a_process_killed_between_the_check_of_a_text_and_its_verdict_loses_nothing(
    frontier, monkeypatch
):
    dying = frontier()
    page, copy = (f"{host}/" for host in on_shards(dying.store.shards, 2))
    dying.push_many([Link(page, 0.9), Link(copy, 0.9)])
    leases = {leased.url: leased.lease for leased in dying.pop_ready(10).leased}
    children = [Link(f"{host}/child", 0.7) for host in HOSTS]

    def ack(url: str) -> Ack:
        return Ack(leases[url], url, "page", 0.8, True, children, "", None, "one-text")

    def killed(*args, **kwargs):
        raise SystemExit("killed")

    monkeypatch.setattr(dying, "_call", killed)  # the texts are recorded, nothing acknowledged
    with pytest.raises(SystemExit):
        dying.complete_many([ack(page)])
    monkeypatch.undo()
    other = frontier()
    assert other.counts()["queued"] == 0
    # The page fetched again is no duplicate of itself: its links are queued; a copy is one.
    [again] = other.complete_many([ack(page)])
    [copied] = other.complete_many([ack(copy)])
    assert (again.duplicate, copied.duplicate) == ("", "text")
    assert again.new == len(HOSTS) and copied.new == 0
    assert other.counts()["queued"] == len(HOSTS)


def test_a_revisit_on_a_cluster_is_unchanged_only_after_its_text_was_acknowledged(
    frontier, monkeypatch
):
    f = frontier()
    page, copy = (f"{host}/" for host in on_shards(f.store.shards, 2))

    def fetch(url: str, text: str, revisit: bool, by=f) -> str:
        if revisit:
            by.requeue([url])
        else:
            by.push_many([Link(url, 0.9)])
        [leased] = by.pop_ready(1).leased
        ack = Ack(leased.lease, url, "page", 0.5, False, [], "", None, text, "", revisit)
        return by.complete_many([ack])[0].duplicate

    assert fetch(page, "first", False) == ""
    assert fetch(page, "first", True) == "unchanged"
    # A revisit killed between the two parts of its check recorded nothing: fetched again,
    # it is changed, not unchanged (its links are queued); its new text is recorded then.
    dying = frontier()
    dying.requeue([page])
    [leased] = f.pop_ready(1).leased

    def killed(*args, **kwargs):
        raise SystemExit("killed")

    monkeypatch.setattr(dying, "_call", killed)
    ack = Ack(leased.lease, page, "page", 0.5, False, [], "", None, "second", "", True)
    with pytest.raises(SystemExit):
        dying.complete_many([ack])
    monkeypatch.undo()
    assert f.complete_many([ack])[0].duplicate == ""
    assert fetch(copy, "second", False) == "text"


def test_a_crawl_process_after_a_reset_keeping_known_pages_finds_them_on_every_shard(
    frontier, cluster, crawl_name
):
    pages = [f"{host}/" for host in HOSTS[:9]]

    def run() -> list[str]:  # a crawl process (its epoch) fetching the pages, texts unchanged
        f = frontier(epoch=True)
        f.push_many([Link(url, 0.9) for url in pages])
        leases = {leased.url: leased.lease for leased in f.pop_ready(20).leased}
        acks = [
            Ack(leases[url], url, "page", 0.5, False, [], "", None, f"text-{i}")
            for i, url in enumerate(pages)
        ]
        return [done.duplicate for done in f.complete_many(acks)]

    assert run() == [""] * len(pages)
    reset_crawl(cluster, crawl_name, keep_known=True)
    assert known_count(cluster, crawl_name) == len(pages)
    assert run() == ["known"] * len(pages)


def cluster_crawl(crawl: Crawl, url: str) -> Crawl:
    crawl.extra_env["FOCUSED_REDIS_URL"] = url
    return crawl


def test_three_processes_crawl_one_web_across_three_masters(crawl, served, redis_cluster, cluster):
    crawl = cluster_crawl(crawl, redis_cluster)
    delay = 0.3
    # The killed process may hold the distiller's lock: the others take it over within its lease.
    settings = {
        **FAST,
        "FOCUSED_HOST_DELAY": delay,
        "FOCUSED_DISTILL_PAGES": 60,
        "FOCUSED_DISTILL_LOCK_S": 2,
    }
    processes = [crawl.start(f"p{i}.jsonl", **settings) for i in range(3)]
    fetched = lambda: crawl_status(Reader(cluster), crawl.name).get("fetched", 0)  # noqa: E731
    wait_for(lambda: fetched() >= 60, 180)
    in_flight = kill(processes[0], cluster, crawl)
    for i, process in enumerate(processes[1:], 1):
        assert process.wait(300) == 0, crawl.log(f"p{i}.jsonl")[-3000:]
    status = crawl_status(Reader(cluster), crawl.name)
    assert (status["queued"], status["in_flight"]) == (0, 0)
    # Nothing lost, nothing fetched twice but what the killed process had in flight.
    entries = served_pages(served.log_path)
    assert reachable(crawl.topic.parent) <= {url_key(entry["url"]) for entry in entries}
    assert refetched(served.log_path) <= in_flight
    assert status["fetched"] >= len(reachable(crawl.topic.parent))
    # Politeness on Redis's clock, across processes and shards: one host, one fetch at a time,
    # the delay between (less the time a request takes from its pop to the server).
    for host, times in fetch_times(served.log_path).items():
        gaps = [b - a for (a, _), (b, _) in itertools.pairwise(times)]
        assert not gaps or min(gaps) >= delay * 0.8, (host, min(gaps))
    # The pages are on every shard, and every reader adds them up.
    shards = crawl_shards(cluster, crawl.name)
    per_shard = [int(cluster.hget(p + keys.STATS, "fetched") or 0) for p in shards.prefixes]
    assert all(per_shard) and sum(per_shard) == status["fetched"]
    graph = GraphStore(CrawlStore(cluster, crawl.name)).read()
    assert graph.pages > 100 and len(graph.src) > graph.pages
    env = crawl.env()
    shown = focused("status", crawl.name, "--json", env=env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["fetched"] == status["fetched"]
    report = focused("report", crawl.name, "--json", env=env, cwd=crawl.workdir)
    assert report.returncode == 0, report.stderr
    assert sum(json.loads(report.stdout)["census"].values()) == status["classified"]
    hubs = focused("hubs", crawl.name, "--json", env=env)
    assert hubs.returncode == 0, hubs.stderr
    assert json.loads(hubs.stdout)["hubs"]
    assert int(cluster.hget(keys.prefix(crawl.name) + keys.DISTILL, "runs") or 0) >= 1
    assert "Traceback" not in crawl.log("p1.jsonl") + crawl.log("p2.jsonl")


def test_reset_deletes_every_shard_of_a_crawl(cluster, frontier, crawl_name, tmp_path):
    f = frontier()
    f.push_many([Link(f"{host}/p", 0.5) for host in HOSTS])
    url = ",".join(f"{n.host}:{n.port}" for n in cluster.get_primaries())
    result = focused("reset", crawl_name, "--redis-url", f"redis+cluster://{url}", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    left = [k for p in keys.crawl_patterns(crawl_name) for k in cluster.scan_iter(match=p)]
    assert left == []
