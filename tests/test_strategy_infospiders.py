"""InfoSpiders (seed 003): agents' energy, reproduction, death, Q-learning and crediting, on a
real Redis, and a real two-process crawl."""

from __future__ import annotations

import base64
import json
from collections import Counter

import numpy as np
import pytest
from scrapy.utils.test import get_crawler

from focused.items import Page, PageLink
from focused.store import keys
from focused.store.frontier.queue import RedisFrontier
from focused.store.frontier.records import fingerprint
from focused.strategies.infospiders import (
    FEATURES,
    MAX_TERMS,
    InfoSpiders,
    link_inputs,
    link_record,
    link_values,
    q_step,
)
from focused.topic.judge import Verdict
from tests.conftest import final_stats
from tests.test_crawl import served_pages, url_key

HERON = ("http://b.test/heron", "grey heron", "the great grey heron is a wading bird")
SWAN = ("http://c.test/swan", "swan", "a swan")


def page(url: str, relevance: float, links=(), depth: int = 0, estimate: float = 0.5):
    """A judged page and its verdict: its (URL, anchor, context) links, each estimated
    ``estimate`` by the judge."""
    item = Page(url, 200, 0.0, depth=depth, links=[PageLink(*link) for link in links])
    scored = [PageLink(u, anchor, context, estimate, estimate) for u, anchor, context in links]
    return item, Verdict(relevance, relevance >= 0.5, None, relevance, scored)


@pytest.fixture
def make(redis_client, crawl_name):
    """InfoSpiders on the test's crawl; each call is another process's strategy."""

    def build(**options) -> InfoSpiders:
        frontier = RedisFrontier.for_crawl(redis_client, crawl_name)
        return InfoSpiders(frontier, get_crawler().stats, **options)

    return build


def energies(strategy: InfoSpiders) -> dict[str, float]:
    key = strategy.frontier.store.prefix + keys.AGENT_ENERGY
    return {a: float(e) for a, e in strategy.frontier.store._client.hgetall(key).items()}


def stored_weights(strategy: InfoSpiders, agent: str) -> np.ndarray:
    key = strategy.frontier.store.prefix + keys.AGENT_WEIGHTS + agent
    return np.array(json.loads(strategy.frontier.store._client.get(key)))


def fetch(strategy: InfoSpiders, judged: tuple[Page, Verdict]) -> list:
    return strategy.links(*judged)


def stat(strategy: InfoSpiders, name: str) -> float:
    return strategy.stats.get_value(f"focused/infospiders/{name}", 0)


def test_a_link_reads_the_words_near_it_weighted_by_proximity():
    x = link_inputs([link_record(HERON[1], HERON[2], 0.6, window=2)])[0]
    near = {j: x[2 + j] for j in np.flatnonzero(x[2:])}
    assert x[0] == 1 and x[1] == pytest.approx(0.6, abs=0.005)
    # grey, heron: 1; great: 1/2 ("the" is a stopword); wade: 1/2, bird: 1/3; beyond: nothing
    assert sorted(near.values(), reverse=True) == pytest.approx([1, 1, 0.5, 0.5, 1 / 3], abs=0.01)
    assert link_inputs([link_record(HERON[1], HERON[2], 0.6, window=1)])[0, 2:].sum() == 3
    long = " ".join(f"word{c}{d}" for c in "abcdefghij" for d in "abc")
    record = link_record("anchor", f"{long} anchor {long}", 1.0, window=30)
    assert len(record) == 1 + 2 * MAX_TERMS  # the nearest terms only
    assert len(f"99999 {base64.b64encode(record).decode()}") < 64  # a listpack hash entry


def test_energy_is_gained_from_relevance_and_spent_per_page(make):
    spiders = make(agents=1, energy=1.0, cost=0.3)
    (agent,) = energies(spiders)
    fetch(spiders, page("http://a.test/1", 0.8))
    assert energies(spiders) == {agent: pytest.approx(1.5)}
    fetch(spiders, page("http://a.test/2", 0.1))
    assert energies(spiders) == {agent: pytest.approx(1.3)}
    assert stat(spiders, "adopted") == 2  # seeds: no agent queued them
    assert stat(spiders, "agents") == 1


def test_an_agent_above_the_threshold_splits_with_half_its_energy_and_mutated_weights(make):
    spiders = make(agents=1, max_agents=2, energy=1.0, cost=0.3, reproduce=2.0, mutation=0.1)
    (parent,) = energies(spiders)
    fetch(spiders, page("http://a.test/1", 1.0))
    assert stat(spiders, "births") == 0
    fetch(spiders, page("http://a.test/2", 1.0))  # 1.7 + 0.7 = 2.4 > 2: split
    (child,) = set(energies(spiders)) - {parent}
    assert energies(spiders) == {parent: pytest.approx(1.2), child: pytest.approx(1.2)}
    assert stat(spiders, "births") == 1 and stat(spiders, "agents") == 2
    # The child is a copy of its parent plus seeded noise of the mutation's size.
    noise = stored_weights(spiders, child) - stored_weights(spiders, parent)
    expected = np.random.default_rng([0, int(child)]).normal(0, 0.1, 2 + FEATURES)
    assert np.allclose(noise, expected) and 0.05 < noise.std() < 0.2
    assert np.allclose(spiders.weights[child], stored_weights(spiders, child))
    # At the population's maximum an agent keeps the threshold and does not split.
    for n in range(3, 7):
        fetch(spiders, page(f"http://a.test/{n}", 1.0))
    assert len(energies(spiders)) == 2 and max(energies(spiders).values()) == 2.0
    assert stat(spiders, "births") == 1


def test_an_agent_at_zero_dies_but_the_last_one_is_reseeded(make):
    spiders = make(agents=2, energy=0.5, cost=0.5)
    first = energies(spiders)
    fetch(spiders, page("http://a.test/1", 0.0))  # credited agent: 0.5 - 0.5 = 0: dies
    (alive,) = energies(spiders)
    (dead,) = set(first) - {alive}
    assert stat(spiders, "deaths") == 1 and stat(spiders, "agents") == 1
    assert not spiders.frontier.store._client.exists(
        spiders.frontier.store.key(keys.AGENT_WEIGHTS, dead)
    )
    fetch(spiders, page("http://a.test/2", 0.0))  # the last one: reseeded, not dead
    assert energies(spiders) == {alive: 0.5}
    assert stat(spiders, "reseeds") == 1 and stat(spiders, "deaths") == 1
    events = spiders.frontier.store._client.hgetall(spiders.frontier.store.key(keys.AGENT_EVENTS))
    assert events == {"deaths": "1", "reseeds": "1"}


def test_q_step_moves_a_value_toward_its_target():
    w = np.zeros(2 + FEATURES)
    x = link_inputs([link_record(*HERON[1:], 0.5, window=5)])[0]
    for target in (0.9, 0.1):
        before = float(link_values(w, x[None, :])[0])
        after = float(link_values(w + q_step(w, x, target, 0.1), x[None, :])[0])
        assert abs(after - target) < abs(before - target)
        assert (after - before) * (target - before) > 0


def test_a_page_teaches_the_agent_that_queued_it_reward_plus_discounted_best_link(make):
    spiders = make(agents=3, learning_rate=0.5, discount=0.5)
    links = fetch(spiders, page("http://a.test/", 0.5, [HERON, SWAN]))
    client, prefix = spiders.frontier.store._client, spiders.frontier.store.prefix
    records = {}
    for link in links:
        bucket, field = spiders.state.record_at(fingerprint(link.url))
        records[link.url] = client.hget(f"{prefix}{keys.QUEUED_BY}{bucket}", field)
    owners = {r.split(" ")[0] for r in records.values()}
    assert len(owners) == 1  # both queued by the agent credited with their page
    (owner,) = owners
    x = link_inputs([base64.b64decode(records[HERON[0]].split(" ")[1])])
    w = spiders.weights[owner].copy()
    before = float(link_values(w, x)[0])
    assert dict((link.url, link.score) for link in links)[HERON[0]] == pytest.approx(before)
    out = [("http://d.test/egret", "egret", "an egret")]
    best = float(link_values(w, link_inputs([link_record("egret", "an egret", 1.0, 5)]))[0])
    others = {a: e for a, e in energies(spiders).items() if a != owner}
    fetch(spiders, page(HERON[0], 1.0, out, estimate=1.0))
    target = 0.5 * 1.0 + 0.5 * best
    after = float(link_values(spiders.weights[owner], x)[0])
    assert abs(after - target) < abs(before - target) and after > before
    # Credited to its queuing agent: only its energy moved; the record is marked fetched.
    assert {a: e for a, e in energies(spiders).items() if a != owner} == others
    assert stat(spiders, "adopted") == 1  # the seed only
    bucket, field = spiders.state.record_at(fingerprint(HERON[0]))
    assert client.hget(f"{prefix}{keys.QUEUED_BY}{bucket}", field) == "-"
    # A later link to the fetched page leaves no record; the first agent's record stays.
    fetch(spiders, page("http://e.test/", 0.5, [HERON, SWAN]))
    assert client.hget(f"{prefix}{keys.QUEUED_BY}{bucket}", field) == "-"
    bucket, field = spiders.state.record_at(fingerprint(SWAN[0]))
    assert client.hget(f"{prefix}{keys.QUEUED_BY}{bucket}", field) == records[SWAN[0]]


def test_processes_share_the_population_and_add_up_their_weight_changes(make):
    one = make(agents=4, sync_every=1000)
    two = make(agents=4, sync_every=1000)  # starts late: loads, creates nothing
    assert energies(one).keys() == energies(two).keys() and len(energies(one)) == 4
    assert two.populate() == 0
    agent = min(energies(one), key=int)
    base = stored_weights(one, agent)
    delta_one, delta_two = np.zeros_like(base), np.zeros_like(base)
    delta_one[1], delta_two[1], delta_two[5] = 0.25, 0.5, -1.0
    one._change(agent, delta_one)
    two._change(agent, delta_two)
    one.sync()
    two.close()
    assert np.allclose(stored_weights(one, agent), base + delta_one + delta_two)
    one.sync()
    assert np.allclose(one.weights[agent], two.weights[agent])


def test_infospiders_crawl_with_two_processes(crawl, served, web, tmp_path, redis_client):
    topic = tmp_path / "infospiders.toml"
    text = (web / "topic.toml").read_text().replace('strategy = "soft"', 'strategy = "infospiders"')
    topic.write_text(text.replace('taxonomy = "taxonomy"', f'taxonomy = "{web / "taxonomy"}"'))
    assert 'strategy = "infospiders"' in topic.read_text()
    crawl.topic = topic
    settings = {"CONCURRENT_REQUESTS": 4, "FOCUSED_INFOSPIDERS_SYNC": 5}
    one = crawl.start("one.jsonl", **settings)
    two = crawl.start("two.jsonl", **settings)
    assert one.wait(240) == 0 and two.wait(240) == 0, crawl.log("one.jsonl")[-3000:]
    assert crawl.feed("one.jsonl") and crawl.feed("two.jsonl")
    fetched = Counter(url_key(e["url"]) for e in served_pages(served.log_path) if e["status"] < 500)
    assert max(fetched.values()) == 1
    stats = [final_stats(crawl.log(feed)) for feed in ("one.jsonl", "two.jsonl")]
    prefix = keys.prefix(crawl.name)
    events = redis_client.hgetall(prefix + keys.AGENT_EVENTS)
    alive = redis_client.hlen(prefix + keys.AGENT_ENERGY)
    assert all(s["focused/infospiders/agents"] >= 1 for s in stats)
    assert all("focused/infospiders/energy" in s for s in stats)
    births = sum(s.get("focused/infospiders/births", 0) for s in stats)
    deaths = sum(s.get("focused/infospiders/deaths", 0) for s in stats)
    assert births >= 1 and deaths >= 1
    assert (int(events.get("births", 0)), int(events.get("deaths", 0))) == (births, deaths)
    assert alive == 8 + births - deaths
