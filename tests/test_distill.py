"""The distiller on a real Redis: the crawl graph, server-weighted HITS, re-boost, the lock."""

from __future__ import annotations

import itertools
import json
import re
import time

import numpy as np
import pytest

from focused.cli.main import main
from focused.distill.hits import weighted_hits
from focused.distill.job import distill_locked
from focused.monitor.snapshot import crawl_status
from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import Link
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import split_url, unpack_score
from focused.store.graph import GraphStore
from focused.store.reads import Reader


@pytest.fixture
def frontier(redis_client, crawl_name) -> RedisFrontier:
    return RedisFrontier.for_crawl(redis_client, crawl_name, host_delay=0.0, host_concurrency=100)


def crawl(frontier: RedisFrontier, pages: dict[str, tuple[float, list[str]]]) -> None:
    """Fetch ``pages`` (URL -> R, out-links) in order through the frontier."""
    frontier.push_many([Link(url, 1.0 - i / 1000) for i, url in enumerate(pages)])
    leased = {}
    while len(leased) < len(pages):
        pop = frontier.pop_ready(100)
        assert pop.leased, "a page to crawl was not queued"
        leased.update({item.url: item for item in pop.leased if item.url in pages})
    for url, (r, links) in pages.items():
        frontier.complete(
            leased[url].lease, url, "page", r, r >= 0.5, [Link(t, 0.1) for t in links], "T"
        )


# A small web: two hubs on hub.test link to authorities on other servers; a hub on
# other.test links to one of them; each page on its own server unless named alike.
WEB = {
    "http://hub.test/a": (0.9, ["http://x.test/1", "http://y.test/2", "http://z.test/new"]),
    "http://hub.test/b": (0.6, ["http://x.test/1", "http://hub.test/a"]),
    "http://other.test/c": (0.3, ["http://x.test/1", "http://w.test/old"]),
    "http://x.test/1": (0.95, []),
    "http://y.test/2": (0.8, ["http://x.test/1"]),
    "http://low.test/d": (0.1, ["http://q.test/never"]),
}


def reference_hits(authority_share: float) -> tuple[dict[str, float], dict[str, float]]:
    """Seed 000 §3.2 written out edge by edge, to check the sparse implementation."""
    r = {url: page[0] for url, page in WEB.items()}
    server = {url: split_url(url)[0] for url in r}
    edges = {
        (u, v) for u, (_, links) in WEB.items() for v in links if split_url(u)[0] != split_url(v)[0]
    }
    ranked = sorted(r.values(), reverse=True)
    rho = ranked[int(np.ceil(authority_share * len(r))) - 1]
    auth_ok = {v for v in r if r[v] >= rho}

    def h0(u, v):
        return sum(1 for (x, y) in edges if y == v and server.get(x) == server[u])

    def a0(u, v):
        return sum(1 for (x, y) in edges if x == u and split_url(y)[0] == split_url(v)[0])

    e = [(u, v) for (u, v) in edges if v in auth_ok]
    hub = {u: 1.0 for u, _ in e}
    auth: dict[str, float] = {}
    for _ in range(200):
        auth = {v: 0.0 for v in auth_ok}
        for u, v in e:
            auth[v] += r[u] / h0(u, v) * hub.get(u, 0.0)
        total = sum(auth.values())
        auth = {v: a / total for v, a in auth.items()}
        hub = {u: 0.0 for u in r}
        for u, v in e:
            hub[u] += r[u] / a0(u, v) * auth[v]
        total = sum(hub.values())
        hub = {u: h / total for u, h in hub.items()}
    return hub, auth


def test_the_graph_keeps_only_links_between_servers(frontier):
    crawl(frontier, WEB)
    graph = GraphStore(frontier.store).read()
    assert graph.pages == len(WEB)
    index = {url: i for i, url in enumerate(graph.urls)}
    pairs = {(graph.urls[s], int(d)) for s, d in zip(graph.src, graph.dst, strict=True)}
    # hub.test/b -> hub.test/a is within one server: not stored
    assert (("http://hub.test/b", index["http://hub.test/a"])) not in pairs
    # a link to a fetched page points at that page's node, whichever was fetched first
    assert ("http://y.test/2", index["http://x.test/1"]) in pairs
    assert ("http://hub.test/a", index["http://y.test/2"]) in pairs
    # links to pages not fetched are distinct nodes past the pages
    unfetched = {d for _, d in pairs if d >= graph.pages}
    assert len(unfetched) == len(graph.targets) == 3  # z.test/new, w.test/old, q.test/never
    assert len(graph.src) == 8


def test_weighted_hits_matches_the_paper_edge_by_edge(frontier):
    crawl(frontier, WEB)
    graph = GraphStore(frontier.store).read()
    scores = weighted_hits(graph, authority_share=0.5, tol=1e-14, max_iter=200)
    hub, auth = reference_hits(0.5)
    for i, url in enumerate(graph.urls):
        assert scores.hub[i] == pytest.approx(hub.get(url, 0.0), abs=1e-9)
        assert scores.authority[i] == pytest.approx(auth.get(url, 0.0), abs=1e-9)
    assert scores.authorities == 3  # R >= 0.8: x.test/1, hub.test/a, y.test/2
    assert scores.rho == 0.8
    # The two pages of hub.test that link to x.test/1 share one vote; hub.test/a links to two
    # authorities and is the best hub.
    assert graph.urls[int(np.argmax(scores.hub))] == "http://hub.test/a"
    assert graph.urls[int(np.argmax(scores.authority))] == "http://x.test/1"


def test_reboost_raises_the_top_hubs_queued_neighbours(frontier):
    crawl(frontier, WEB)
    result = distill_locked(frontier, authority_share=0.5, top_hubs=1, boost=1.0)
    assert result is not None
    # The best hub hub.test/a links to one page not fetched: z.test/new, queued at 0.1
    assert result.hubs[0][0] == "http://hub.test/a"
    assert (result.neglected, result.reboosted) == (1, 1)
    assert frontier.counts()["reboosted"] == 1
    first = frontier.pop_ready(1).leased[0]
    assert (first.url, first.score) == ("http://z.test/new", 1.0)
    # Neighbours of hubs outside the top one stay where they were
    rest = {item.url: item.score for item in frontier.pop_ready(10).leased}
    assert rest["http://w.test/old"] == pytest.approx(0.1, abs=1e-4)
    # A run records itself for the crawl's processes and `focused status`
    record = frontier.store._client.hgetall(frontier.store.prefix + keys.DISTILL)
    assert record["runs"] == "1" and record["reboosted"] == "1"
    assert record["fetched"] == str(len(WEB))


def test_reboost_keeps_tries_and_never_lowers(frontier):
    crawl(frontier, WEB)
    key = frontier.store.prefix + keys.HOST_QUEUE + "http://z.test"
    ((member, packed),) = frontier.store._client.zrange(key, 0, -1, withscores=True)
    tried = int(packed) + 2 * (1 << 48)  # as if tried twice
    frontier.store._client.zadd(key, {member: tried})
    assert frontier.raise_to(0.7, [("http://z.test", member, tried)]) == 1
    tries, score = unpack_score(int(frontier.store._client.zscore(key, member)))
    assert (tries, score) == (2, pytest.approx(0.7, abs=1e-4))
    assert frontier.raise_to(0.2, [("http://z.test", member, tried)]) == 0  # never lowered
    assert frontier.raise_to(0.9, [("http://z.test", "0 0 gone", tried)]) == 0  # not queued


def test_one_process_distils_at_a_time_and_a_dead_holder_lets_go(frontier):
    crawl(frontier, WEB)
    frontier.store._client.set(frontier.store.prefix + keys.DISTILL_LOCK, "someone else", px=300)
    assert distill_locked(frontier, lock_s=5) is None
    time.sleep(0.4)  # the holder died: its lock expires
    result = distill_locked(frontier, lock_s=5)
    assert result is not None and result.pages == len(WEB)
    assert not frontier.store._client.exists(frontier.store.prefix + keys.DISTILL_LOCK)  # released


def test_hubs_command_prints_and_writes_nothing(frontier, redis_home, capsys):
    crawl(frontier, WEB)
    before = frontier.store._client.hgetall(frontier.store.prefix + keys.STATS)
    assert main(["hubs", frontier.store.crawl, "--home", str(redis_home), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["hubs"][0]["url"] == "http://hub.test/a"
    assert out["authorities"][0]["url"] == "http://x.test/1"
    assert frontier.store._client.hgetall(frontier.store.prefix + keys.STATS) == before
    assert main(["hubs", frontier.store.crawl, "--home", str(redis_home)]) == 0
    assert "http://hub.test/a" in capsys.readouterr().out


def test_distill_command_reboosts(frontier, redis_home, capsys):
    crawl(frontier, WEB)
    assert main(["distill", frontier.store.crawl, "--home", str(redis_home), "--hubs", "1"]) == 0
    assert "re-boosted 1" in capsys.readouterr().out
    assert main(["hubs", "no-such-crawl", "--home", str(redis_home)]) == 2
    assert "no crawl named 'no-such-crawl'" in capsys.readouterr().err


def test_a_crawl_distils_as_it_goes(crawl, redis_client):
    stats = crawl.run(FOCUSED_DISTILL_PAGES=40, FOCUSED_HOST_DELAY=0.2, FOCUSED_DISTILL_HUBS=10)
    runs = stats["focused/distiller/runs"]
    assert runs >= 1 and "Distilled" in crawl.log()
    record = redis_client.hgetall(keys.prefix(crawl.name) + keys.DISTILL)
    assert int(record["runs"]) == runs and int(record["fetched"]) >= 40
    # Each run came after 40 more fetched pages, the first too (the interval rule counts from
    # the crawl's start, and is ten minutes). The log counts classified pages: a bad page or
    # two in between is fetched, not classified.
    distilled = [int(n) for n in re.findall(r"Distilled (\d+) pages", crawl.log())]
    assert distilled[0] >= 35 and all(b - a >= 35 for a, b in itertools.pairwise(distilled))
    # The crawl kept its graph: the hubs of the synthetic web's topic can be read back.
    graph = GraphStore(CrawlStore(redis_client, crawl.name)).read()
    assert graph.pages > 100 and len(graph.src) > graph.pages
    reboosted = stats["focused/distiller/reboosted"]
    assert reboosted >= 1
    assert reboosted == int(redis_client.hget(keys.prefix(crawl.name) + keys.STATS, "reboosted"))
    # `focused status` shows the last run
    status = crawl_status(Reader(redis_client), crawl.name)
    assert status["distilled_at"] == int(record["fetched"]) and status["top_hub"]
    assert status["reboosted"] == reboosted


def test_by_default_a_crawl_distils_without_reboosting(crawl, redis_client):
    stats = crawl.run(FOCUSED_DISTILL_PAGES=40, FOCUSED_HOST_DELAY=0.2)
    assert stats["focused/distiller/runs"] >= 1
    assert stats.get("focused/distiller/reboosted", 0) == 0
    assert "re-boosted 0 of 0" in crawl.log()


def test_a_breadth_first_topic_file_runs_no_distiller(crawl, web, tmp_path, redis_client):
    """The strategy a topic file names decides as FOCUSED_STRATEGY would (the crawl's plan):
    the unfocused baseline's queue is never re-boosted."""
    topic = tmp_path / "breadth-first.toml"
    text = (
        (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "breadth-first"')
    )
    topic.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    assert 'strategy = "breadth-first"' in topic.read_text()
    crawl.topic = topic
    # Settings under which a focused crawl distils and re-boosts (test_a_crawl_distils_as_it_goes)
    stats = crawl.run(FOCUSED_DISTILL_PAGES=40, FOCUSED_HOST_DELAY=0.2, FOCUSED_DISTILL_HUBS=10)
    assert redis_client.hget(keys.prefix(crawl.name) + keys.META, "focus") == "breadth-first"
    assert stats["item_scraped_count"] > 80  # enough pages for two runs
    assert not [name for name in stats if name.startswith("focused/distiller/")]
    assert not redis_client.hget(keys.prefix(crawl.name) + keys.STATS, "reboosted")
    assert not redis_client.exists(keys.prefix(crawl.name) + keys.DISTILL)
    log = crawl.log()
    assert "Enabled extensions:" in log and "focused.extensions.distiller.Distiller" not in log
    assert "Distilled" not in log
