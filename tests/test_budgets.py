"""Budgets at the frontier: registered domains, hosts and domains over budget held, the cap
on a host's queue; on a real Redis (one server, then a cluster)."""

from __future__ import annotations

import itertools
import re
import time

import pytest
import redis

from focused.links.domains import RegisteredDomains
from focused.monitor.metrics import CrawlCollector
from focused.monitor.snapshot import crawl_snapshot, format_status
from focused.settings import defaults
from focused.store import keys
from focused.store.frontier.base import Ack, Budgets, Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.reads import Reader


@pytest.fixture(params=["server", pytest.param("cluster", marks=pytest.mark.cluster)])
def frontier_client(request: pytest.FixtureRequest) -> redis.Redis:
    """Each test on one server, then on a Redis Cluster (sharded frontier)."""
    return request.getfixturevalue("redis_client" if request.param == "server" else "cluster")


@pytest.mark.parametrize(
    ("host", "domain"),
    [
        ("http://a.b.blogspot.com", "b.blogspot.com"),  # the list's private section
        ("http://x.co.uk", "x.co.uk"),
        ("https://www.news.x.co.uk:8443", "x.co.uk"),
        ("http://s9.farm.test", "farm.test"),  # not in the list: the last two labels
        ("http://intranet", "intranet"),
        # An IP literal: its /24 or /64, whoever holds an address most often holds its block.
        ("http://127.0.0.1:8080", "127.0.0.0/24"),
        ("http://198.51.100.77", "198.51.100.0/24"),
        ("http://[::1]", "::/64"),
        ("http://[2a05:d018:0:7::5]:8080", "2a05:d018:0:7::/64"),
        ("http://[::ffff:198.51.100.77]", "198.51.100.0/24"),
        ("http://www.bio.web.test", "web.test"),
    ],
)
def test_registered_domain(host, domain):
    assert RegisteredDomains()(host) == domain


def test_private_suffixes_make_each_site_a_domain_of_its_own():
    domains = RegisteredDomains(["web.test", ".sites.corp"])
    assert domains("http://www.bio.web.test") == "bio.web.test"
    assert domains("http://www.chem.web.test") == "chem.web.test"
    assert domains("http://team1.sites.corp") == "team1.sites.corp"
    assert domains("http://s9.farm.test") == "farm.test"


def test_the_offline_webs_sites_are_domains_of_their_own_by_default():
    """The generated webs' and the Wikispeedia bundle's hundreds of made-up sites: as one domain
    each web would be held after FOCUSED_DOMAIN_MAX_HOSTS hosts."""
    domains = RegisteredDomains(defaults.FOCUSED_PRIVATE_SUFFIXES)
    assert domains("http://www.pikulata.wiki.test") == "pikulata.wiki.test"
    assert domains("http://www.risupaka.wiki.test") == "risupaka.wiki.test"
    assert domains("http://www.bio.web.test") == "bio.web.test"
    assert domains("http://s9.farm.test") == "farm.test"


def on_shard_0(f: RedisFrontier, pattern: str, count: int) -> list[str]:
    """``count`` origins ``pattern.format(i)`` of the first shard: on a cluster a host is held
    until nothing else is queued on its shard (each script reaches one shard)."""
    shards = f.store.shards
    return list(
        itertools.islice(
            (o for i in itertools.count() if shards.of_host(o := pattern.format(i)) == 0), count
        )
    )


def serve(f: RedisFrontier, n: int = 100) -> list[str]:
    """Pop up to n URLs and acknowledge them as pages; their URLs, in pop order. (A host's URLs
    of one score pop in hash order: the tests give each URL a score of its own.)"""
    leased = f.pop_ready(n).leased
    for one in leased:
        f.complete(one.lease, one.url, "page", 0.5, False)
    return [one.url for one in leased]


def test_a_host_over_budget_is_held_while_another_has_urls(frontier):
    f = frontier(budgets=Budgets(host_pages=2), host_concurrency=1)
    big, small = on_shard_0(f, "http://host{}.test", 2)
    f.push_many([Link(f"{big}/{i}", 0.9 - i / 100) for i in range(6)])
    assert serve(f) + serve(f) + serve(f) == [f"{big}/{i}" for i in range(3)]
    f.push_many([Link(f"{small}/{i}", 0.2 - i / 100) for i in range(3)])
    # big has had more than 2 fetches: held, its better URLs wait for small's; then, with
    # nothing else queued, it is served (in the same pop as small's last), and nothing is lost.
    assert [serve(f) for _ in range(5)] == [
        [f"{small}/0"],
        [f"{small}/1"],
        [f"{small}/2", f"{big}/3"],
        [f"{big}/4"],
        [f"{big}/5"],
    ]
    counts = f.counts()
    assert counts["held/host"] == 1 and counts["queued"] == 0


def test_a_held_host_waits_while_another_host_waits_out_its_delay(frontier):
    f = frontier(budgets=Budgets(host_pages=2), host_delay=0.2, host_concurrency=1)
    big, small = on_shard_0(f, "http://host{}.test", 2)
    f.push_many([Link(f"{big}/{i}", 0.9 - i / 100) for i in range(4)])
    served: list[str] = []
    while len(served) < 3:
        served += serve(f)
        time.sleep(0.02)
    f.push_many([Link(f"{small}/{i}", 0.2 - i / 100) for i in range(3)])
    while len(served) < 7:
        served += serve(f)
        time.sleep(0.02)
    # big has had 3 fetches, more than 2: its last URL waits until small has none left, though
    # small waits out its delay between fetches.
    assert served[3:] == [*(f"{small}/{i}" for i in range(3)), f"{big}/3"]


def test_a_single_site_crawl_is_never_slowed(frontier):
    f = frontier(budgets=Budgets(host_pages=1, domain_pages=1, domain_hosts=1))
    f.push_many([Link(f"http://only.test/{i}", 0.5) for i in range(20)])
    assert sum(len(serve(f, 5)) for _ in range(4)) == 20


def test_the_host_count_budget_holds_the_fourth_farm_host(redis_client, crawl_name):
    # On one server: a cluster splits the host-count budget between its shards.
    f = RedisFrontier.for_crawl(
        redis_client,
        crawl_name,
        host_delay=0,
        host_concurrency=1,
        budgets=Budgets(domain_hosts=3),
    )
    f.push_many([Link(f"http://s{i}.farm.test/", 0.9 - i / 100) for i in range(1, 6)])
    f.push_many([Link("http://good.test/a", 0.2), Link("http://good.test/b", 0.1)])
    first = serve(f, 10)
    farm = [f"http://s{i}.farm.test/" for i in range(1, 6)]
    assert sorted(first) == ["http://good.test/a", *farm[:3]]
    # The held farm hosts come once good.test has nothing queued.
    assert serve(f, 10) == ["http://good.test/b", *farm[3:]]
    assert f.counts()["held/hosts"] == 2
    assert redis_client.hget(f.store.key(keys.DOMAIN, "farm.test"), "h") == "5"


def test_a_platform_is_a_private_suffix_and_not_the_users_own():
    domains = RegisteredDomains(["web.test"])
    assert domains.platform("http://s1.netlify.app") == "netlify.app"
    assert domains.platform("https://a.b.github.io") == "github.io"
    assert domains.platform("http://www.bio.web.test") is None
    assert domains.platform("http://www.bbc.co.uk") is None
    assert domains.platform("http://github.io") is None


def test_the_host_count_budget_of_a_platform_holds_the_fourth_farm_host(redis_client, crawl_name):
    """A farm on netlify.app: each host a registered domain of its own, all under one private
    suffix of the Public Suffix List, whose hosts are counted together."""
    f = RedisFrontier.for_crawl(
        redis_client,
        crawl_name,
        host_delay=0,
        host_concurrency=1,
        budgets=Budgets(domain_hosts=3, suffix_hosts=3),
    )
    farm = [f"http://s{i}.netlify.app/" for i in range(1, 6)]
    f.push_many([Link(url, 0.9 - i / 100) for i, url in enumerate(farm)])
    f.push_many([Link("http://good.test/a", 0.2), Link("http://good.test/b", 0.1)])
    assert sorted(serve(f, 10)) == ["http://good.test/a", *farm[:3]]
    assert serve(f, 10) == ["http://good.test/b", *farm[3:]]
    assert f.counts()["held/hosts"] == 2
    assert redis_client.hget(f.store.key(keys.PRIVATE_SUFFIX, "netlify.app"), "h") == "5"


PLATFORMS = ("netlify.app", "github.io", "pages.dev")


def farm_links(url: str) -> list[Link]:
    """The links of a farm page: ``sN`` links to five new hosts, ``s(5N+1)`` to ``s(5N+5)``,
    each under the next of PLATFORMS in turn (every host a registered domain of its own, each
    platform under its own budget); no link to its own host."""
    n = int(url.split("//s", 1)[1].split(".", 1)[0])
    return [Link(f"http://s{m}.{PLATFORMS[m % 3]}/", 0.9) for m in range(5 * n + 1, 5 * n + 6)]


def test_a_farm_spread_over_platforms_is_held_by_its_shape(redis_client, crawl_name):
    """Pages that link to no page of their own host and to new hosts only, host after host:
    past the first farm page's hosts, FOCUSED_FARM_MAX_HOSTS hosts of the chain are fetched
    while other hosts have URLs; a host a page that does not spread links to is not held."""
    f = RedisFrontier.for_crawl(
        redis_client, crawl_name, host_delay=0, host_concurrency=1, budgets=Budgets(farm_hosts=3)
    )
    good = [Link(f"http://good.test/{i}", 0.5 - i / 1000) for i in range(100)]
    f.push_many([Link("http://s0.netlify.app/", 0.9), *good])
    # good.test/0 links to its own host and to a farm host, which leaves the lineage (and, here,
    # links nowhere).
    kept = "http://s27.pages.dev/"
    links = {"http://good.test/0": [Link("http://good.test/x", 0.1), Link(kept, 0.9)], kept: []}
    fetched: list[str] = []
    while len(fetched) < 60:
        leased = f.pop_ready(10).leased
        for one in leased:
            if one.url in links or ".test/" in one.url:
                page_links = links.get(one.url, [])
            else:
                page_links = farm_links(one.url)
            f.complete(one.lease, one.url, "page", 0.5, False, page_links)
        fetched += [one.url for one in leased]
    farm = {url for url in fetched if ".test/" not in url}
    # s0, the five hosts it links to (its chain's first: not counted), three more, and s27.
    assert len(farm) == 1 + 5 + 3 + 1, sorted(farm)
    assert kept in farm
    assert f.counts()["held/hosts"] >= 20
    assert redis_client.hget(f.store.key(keys.LINEAGE, "s0.netlify.app"), "h") == "3"


def lineages(f: RedisFrontier, *hosts: str) -> dict[str, str | None]:
    """Each host's lineage (its hash's ``f`` field), None for none."""
    return {host: f.store._client.hget(f.store.host_key(keys.HOST, host), "f") for host in hosts}


def spread_two_pages(f: RedisFrontier) -> None:
    """Acknowledge s0 and t0 in one call, each linking to no page of its own host: s0 to three
    new hosts (it spreads), t0 to one of those and one more new host (it spreads too, by its
    one host new to the crawl that s0 did not link to)."""
    f.push_many([Link("http://s0.netlify.app/", 0.9), Link("http://t0.github.io/", 0.9)])
    leased = {one.url: one.lease for one in f.pop_ready(2).leased}
    links = {
        "http://s0.netlify.app/": ["http://a1.test/", "http://a2.test/", "http://x.test/"],
        "http://t0.github.io/": ["http://x.test/", "http://b1.test/"],
    }
    f.complete_many(
        [
            Ack(leased[url], url, "page", 0.5, False, [Link(to, 0.5) for to in links[url]])
            for url in links
        ]
    )


def test_a_host_is_new_to_one_page_of_a_call_and_a_page_that_does_not_spread_takes_it_out(
    redis_client, crawl_name
):
    f = RedisFrontier.for_crawl(redis_client, crawl_name, budgets=Budgets(farm_hosts=3))
    spread_two_pages(f)
    hosts = ("http://a1.test", "http://a2.test", "http://x.test", "http://b1.test")
    assert lineages(f, *hosts) == {
        "http://a1.test": "+s0.netlify.app",
        "http://a2.test": "+s0.netlify.app",
        "http://x.test": "+s0.netlify.app",
        "http://b1.test": "+t0.github.io",
    }
    assert lineages(f, "http://s0.netlify.app", "http://t0.github.io") == dict.fromkeys(
        ("http://s0.netlify.app", "http://t0.github.io")
    )
    # Links pushed from no page (or from a page that does not spread) take their hosts out of
    # any lineage; a new one is in none.
    f.push_many([Link("http://a1.test/more", 0.5), Link("http://c1.test/", 0.5)])
    assert lineages(f, "http://a1.test", "http://a2.test", "http://c1.test") == {
        "http://a1.test": None,
        "http://a2.test": "+s0.netlify.app",
        "http://c1.test": None,
    }
    # A host fetched from keeps its lineage until a page that does not spread links to it:
    # x's page spreads its lineage to two new hosts; a2's own page, linking to a2, takes a2 out.
    leased = {one.url: one.lease for one in f.pop_ready(10).leased}
    links = {
        "http://x.test/": ["http://e1.test/", "http://e2.test/"],
        "http://a2.test/": ["http://a2.test/next", "http://d1.test/"],
    }
    f.complete_many(
        [
            Ack(lease, url, "page", 0.5, False, [Link(to, 0.5) for to in links.get(url, [])])
            for url, lease in leased.items()
        ]
    )
    assert {"http://x.test/", "http://a2.test/"} <= set(leased)
    assert lineages(f, "http://x.test", "http://e1.test", "http://e2.test", "http://a2.test") == {
        "http://x.test": "+s0.netlify.app",
        "http://e1.test": "s0.netlify.app",
        "http://e2.test": "s0.netlify.app",
        "http://a2.test": None,
    }


def test_without_the_farm_budget_no_host_has_a_lineage(redis_client, crawl_name):
    f = RedisFrontier.for_crawl(redis_client, crawl_name, budgets=Budgets(domain_hosts=15))
    spread_two_pages(f)
    hosts = ("http://a1.test", "http://a2.test", "http://x.test", "http://b1.test")
    assert lineages(f, *hosts) == dict.fromkeys(hosts)
    assert f.store._client.hget(f.store.host_key(keys.HOST, "http://x.test"), "d") == "x.test"
    assert not f.store._client.keys(f.store.key(keys.LINEAGE, "*"))


def test_a_domain_over_its_page_budget_is_held(frontier):
    f = frontier(
        budgets=Budgets(domain_pages=2, private_suffixes=("web.test",)), host_concurrency=1
    )
    *big, small = on_shard_0(f, "http://s{}.big.web.test", 2) + on_shard_0(
        f, "http://www{}.small.web.test", 1
    )
    f.push_many([Link(f"{host}/{i}", 0.9 - i / 100) for host in big for i in range(3)])
    f.push_many([Link(f"{small}/{i}", 0.2 - i / 100) for i in range(3)])
    serve(f)
    serve(f)  # big.web.test has had 4 fetches: over
    third = serve(f)
    assert third[0] == f"{small}/2"
    assert sorted(third[1:]) == sorted(f"{host}/2" for host in big)
    assert f.counts()["held/domain"] == 2


def test_a_hosts_queue_is_capped_dropping_its_worst(frontier):
    f = frontier(budgets=Budgets(host_queued=10))
    links = [Link(f"http://one.test/{i}", i / 100) for i in range(50)]
    assert f.push_many(links[:30]) == 30
    assert f.push_many(links[30:]) == 20
    counts = f.counts()
    assert counts["queued"] == 10 and counts["dropped/host_queue"] == 40
    assert sorted(int(u.rsplit("/", 1)[1]) for u in serve(f)) == list(range(40, 50))
    assert f.push_many(links) == 0  # the dropped stay seen


def test_hosts_queued_before_their_domain_went_over_are_held_when_popped(frontier):
    f = frontier(budgets=Budgets(domain_hosts=1))
    f.push_many([Link(f"{o}/", 0.9) for o in on_shard_0(f, "http://s{}.farm.test", 4)])
    f.push_many([Link(f"{o}/", 0.1) for o in on_shard_0(f, "http://good{}.test", 1)])
    # All four were put in 'ready' before any was fetched; the pop holds three.
    pop = f.pop_ready(2)
    assert len([one for one in pop.leased if "farm" in one.url]) == 1


def test_status_shows_what_the_defences_took(frontier, crawl_name):
    f = frontier(budgets=Budgets(domain_hosts=1, host_queued=5), host_concurrency=1)
    farm = on_shard_0(f, "http://s{}.farm.test", 3)
    f.push_many([Link(f"{o}/{i}", 0.9 - i / 100) for o in farm for i in range(8)])
    f.push_many([Link(f"{o}/", 0.1) for o in on_shard_0(f, "http://good{}.test", 1)])
    f.pop_ready(10)
    client = f.store._client
    client.hset(
        f.store.key(keys.SCRAPY_STATS),
        mapping={
            "focused/links/out_of_scope/hops": 7,
            "focused/links/out_of_scope/path_repeats": 2,
            "focused/links/capped": 40,
        },
    )
    snapshot = crawl_snapshot(Reader(client), crawl_name)
    assert snapshot["hosts_held"] == 2
    assert snapshot["held"] == {"host": 0, "domain": 0, "hosts": 2}
    assert snapshot["dropped_host_queue"] == 9
    assert snapshot["out_of_scope"] == {"hops": 7, "path_repeats": 2}
    assert snapshot["links_capped"] == 40
    lines = format_status(snapshot).splitlines()
    assert any(
        re.fullmatch(
            r"hosts held now +2 \(put on hold by budget: host 0, domain 0, hosts 2\)", line
        )
        for line in lines
    )
    assert any(re.fullmatch(r"dropped \(host queue full\) +9", line) for line in lines)
    assert any(line.endswith("hops 7, path_repeats 2 / 40") for line in lines)
    # The exporter serves the same figures.
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in CrawlCollector(Reader(client)).collect()
        for sample in family.samples
    }
    crawl = ("crawl", crawl_name)
    assert samples["focused_frontier_hosts", (crawl, ("state", "held"))] == 2
    assert samples["focused_hosts_held_total", (("budget", "hosts"), crawl)] == 2
    assert samples["focused_urls_dropped_host_queue_total", (crawl,)] == 9
    assert samples["focused_links_out_of_scope_total", (crawl, ("rule", "hops"))] == 7
    assert samples["focused_links_capped_total", (crawl,)] == 40
