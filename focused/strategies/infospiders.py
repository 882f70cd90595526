"""Srinivasan et al. 2005's InfoSpiders: a population of adaptive agents crawling one shared
frontier.

Each agent has a link scorer, a one-layer net learned online by Q-learning, and an energy.
The paper's agents each walk their own frontier; here they share the crawl's one frontier
(its store is the same for every strategy), and each queued link remembers the agent that
queued it, so the page it leads to is that agent's:

- **Scorer.** A link's inputs are a bias, the topic's estimate of the link (``link_score``:
  R of the parent page, of the anchor, ...) and the words of its anchor and of up to
  ``window`` words on each side of it (the spider's ``links[i][2]``), stemmed, each weighted
  by its proximity to the link (1 for an anchor word, 1/(1 + k) for the k-th word away;
  summed per word), hashed into FEATURES inputs, as the paper's keyword counts weighted by
  distance to the link. The agent's value of the link is ``v = sigmoid(w · x)`` in [0, 1]:
  Q-learning's value scaled by (1 - discount), so it is also the link's frontier score
  (``blend`` of it, the rest the topic's estimate).
- **Q-learning.** When a page is fetched, the agent that queued the link to it moves its value
  of that link (from the inputs stored with it) toward ``(1 - γ)·R + γ·max v(out-links)``:
  reward R, the page's relevance, plus the discounted value of the page's best out-link under
  the same agent (the paper's target, scaled as ``v``). The step is ``rate·(target - v)·x``
  (the gradient of the cross-entropy, which needs no sigmoid derivative and never stalls).
- **Energy.** The agent gains R and pays ``cost`` for each page it is credited with. Above
  ``reproduce`` it splits: the child gets half the energy and a copy of its weights plus
  Gaussian noise (``mutation``, seeded by ``seed`` and the child's id); at ``max_agents`` it
  keeps ``reproduce`` instead. At or below zero it dies and its weights go, except the last
  live agent, which is reseeded with ``energy`` (its weights kept): a crawl never stalls.
  Links queued by a dead agent, seeds and pages without a record are credited to a live
  agent picked by the page's fingerprint (counted as ``adopted``), which also queues the
  out-links of a page whose agent has just died.

Across processes: energies, weights and records live in Redis (``focused/store/keys.py``:
``isp:*``). A page's crediting, energy change and the split-or-die decision are one Lua
call, so two processes never split or kill one agent twice. Weights are updated locally and
merged every ``sync_every`` pages and at close by adding each process's change since its
last sync to the Redis copy (one atomic call per agent: Redis holds the sum of every
process's updates, as asynchronous SGD does); the process then reloads all live agents.
A process that starts late or restarts loads the population; the first one creates it.

Records: ``isp:by:<fingerprint % buckets>`` (four times FOCUSED_SEEN_BUCKETS, so a bucket
stays a compact listpack hash up to as many URLs as the seen set stays an intset), field the
rest of the fingerprint, value ``"<agent> <base64 features>"`` (under 64 bytes: the
estimate and the MAX_TERMS nearest terms, one byte each for term and proximity). The first
agent to queue a URL keeps it (HSETNX, as the frontier keeps the first push). A fetched page's
record becomes ``-``, so later links to it leave no record.

Stats: ``focused/infospiders/agents`` (alive), ``births``, ``deaths``, ``reseeds``,
``adopted`` (pages credited to an agent that did not queue them), ``energy`` (mean, at each
sync). Cost: two round trips a page (crediting; the records of its out-links), one per sync.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Self

import numpy as np

from focused.relevance.text import analyze
from focused.store.frontier.base import Link
from focused.store.frontier.records import fingerprint
from focused.store.strategy import InfoSpidersStore

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page
    from focused.store.frontier.queue import RedisFrontier
    from focused.topic.judge import Verdict

logger = logging.getLogger(__name__)

FEATURES = 256  # hashed word inputs of an agent's net (after a bias and the topic's estimate)
MAX_TERMS = 16  # distinct terms kept per link, the nearest first: a record stays < 64 bytes
PROXIMITY_UNIT = 64  # a term's summed proximity is stored in 64ths (one byte, up to ~4)
BUCKETS_PER_SEEN = 4  # a listpack hash holds 128 entries, an intset 512
FETCHED = "-"  # the record of a fetched page
STAT = "focused/infospiders/"


def _term_input(term: str) -> int:
    """The hashed input of a term: crc32, which every process computes alike (``hash`` does
    not)."""
    return zlib.crc32(term.encode()) % FEATURES


def link_record(anchor: str, context: str, estimate: float, window: int) -> bytes:
    """A link's inputs, compactly: the topic's estimate (one byte), then per term (the
    MAX_TERMS nearest) its hashed input and its summed proximity (one byte each).

    Proximity is 1 for anchor words and 1/(1 + k) for the k-th word before or after the
    anchor in ``context`` (stopwords are not counted); words beyond ``window`` are ignored.
    """
    at = context.find(anchor) if anchor else -1
    before, after = (context[:at], context[at + len(anchor) :]) if at >= 0 else ("", "")
    near: dict[int, float] = {}
    nearest: dict[int, int] = {}
    words = [(term, 1) for term in analyze(anchor, stem=True)]
    words += [(t, 1 + k) for k, t in enumerate(reversed(analyze(before, stem=True)[-window:]), 1)]
    words += [(t, 1 + k) for k, t in enumerate(analyze(after, stem=True)[:window], 1)]
    for term, distance in words:
        j = _term_input(term)
        near[j] = near.get(j, 0.0) + 1.0 / distance
        nearest[j] = min(nearest.get(j, distance), distance)
    kept = sorted(near, key=lambda j: (nearest[j], -near[j], j))[:MAX_TERMS]
    out = bytearray([round(min(1.0, max(0.0, estimate)) * 255)])
    for j in kept:
        out += bytes([j, min(255, round(near[j] * PROXIMITY_UNIT))])
    return bytes(out)


def link_inputs(records: Sequence[bytes]) -> np.ndarray:
    """The net's input rows of link records: bias, estimate, then FEATURES term inputs."""
    x = np.zeros((len(records), 2 + FEATURES))
    x[:, 0] = 1.0
    for i, record in enumerate(records):
        x[i, 1] = record[0] / 255
        for k in range(1, len(record) - 1, 2):
            x[i, 2 + record[k]] += record[k + 1] / PROXIMITY_UNIT
    return x


def link_values(w: np.ndarray, x: np.ndarray) -> np.ndarray:
    """An agent's values of links (rows of inputs), in [0, 1]."""
    return 1.0 / (1.0 + np.exp(-(x @ w)))


def q_step(w: np.ndarray, x: np.ndarray, target: float, rate: float) -> np.ndarray:
    """The change of weights ``w`` that moves the value of the link ``x`` toward ``target``."""
    return rate * (target - float(link_values(w, x[None, :])[0])) * x


def initial_weights(rng: np.random.Generator, mutation: float) -> np.ndarray:
    """A first agent: its value starts as sigmoid(4·estimate - 2) (0.12 to 0.88, so the
    crawl starts as the topic's best-first), plus noise on every weight, so agents differ."""
    w = np.zeros(2 + FEATURES)
    w[0], w[1] = -2.0, 4.0
    return w + rng.normal(0.0, mutation, w.shape)


class InfoSpiders:
    """Out-links are scored by the agent credited with their page; see the module doc."""

    scores_links = True
    batch_setting = ""
    reads_context = True
    ceiling = 1.0

    def __init__(
        self,
        frontier: RedisFrontier,
        stats: StatsCollector,
        *,
        agents: int = 8,
        max_agents: int = 32,
        energy: float = 1.0,
        cost: float = 0.3,
        reproduce: float = 2.0,
        learning_rate: float = 0.1,
        discount: float = 0.5,
        mutation: float = 0.1,
        window: int = 5,
        blend: float = 1.0,
        sync_every: int = 20,
        seed: int = 0,
    ):
        if not 1 <= agents <= max_agents:
            raise ValueError(f"need 1 <= agents <= max_agents, got {agents} and {max_agents}")
        if not 0 < energy < reproduce or cost <= 0:
            raise ValueError("need 0 < energy < reproduce and cost > 0")
        if not 0 <= discount < 1 or not 0 <= blend <= 1:
            raise ValueError("discount must be in [0, 1) and blend in [0, 1]")
        self.frontier = frontier
        self.stats = stats
        self.agents = agents
        self.max_agents = max_agents
        self.energy = energy
        self.cost = cost
        self.reproduce = reproduce
        self.learning_rate = learning_rate
        self.discount = discount
        self.mutation = mutation
        self.window = window
        self.blend = blend
        self.sync_every = sync_every
        self.seed = seed
        self.state = InfoSpidersStore(frontier.store, frontier.seen_buckets * BUCKETS_PER_SEEN)
        self.weights: dict[str, np.ndarray] = {}  # live agents as last synced, plus changes
        self.changes: dict[str, np.ndarray] = {}  # this process's changes since its last sync
        self.pages = 0
        self.populate()
        self.sync()

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        s = crawler.settings
        return cls(
            frontier,
            crawler.stats,
            agents=s.getint("FOCUSED_INFOSPIDERS_AGENTS"),
            max_agents=s.getint("FOCUSED_INFOSPIDERS_MAX_AGENTS"),
            energy=s.getfloat("FOCUSED_INFOSPIDERS_ENERGY"),
            cost=s.getfloat("FOCUSED_INFOSPIDERS_COST"),
            reproduce=s.getfloat("FOCUSED_INFOSPIDERS_REPRODUCE"),
            learning_rate=s.getfloat("FOCUSED_INFOSPIDERS_LEARNING_RATE"),
            discount=s.getfloat("FOCUSED_INFOSPIDERS_DISCOUNT"),
            mutation=s.getfloat("FOCUSED_INFOSPIDERS_MUTATION"),
            window=s.getint("FOCUSED_INFOSPIDERS_WINDOW"),
            blend=s.getfloat("FOCUSED_INFOSPIDERS_BLEND"),
            sync_every=s.getint("FOCUSED_INFOSPIDERS_SYNC"),
            seed=s.getint("FOCUSED_INFOSPIDERS_SEED"),
        )

    def populate(self) -> int:
        """Create the first ``agents`` agents unless some live; returns how many were made."""
        rng = np.random.default_rng(self.seed)
        first = [initial_weights(rng, self.mutation).tolist() for _ in range(self.agents)]
        made = self.state.create_agents(self.energy, first)
        if made:
            logger.info("InfoSpiders: %(n)d agents created", {"n": made})
        return made

    def sync(self) -> None:
        """Add this process's weight changes to Redis, then reload every live agent."""
        if self.changes:
            self.state.add_to_all_weights(
                {
                    agent: [(int(j), float(change[j])) for j in np.flatnonzero(change)]
                    for agent, change in self.changes.items()
                }
            )
        self.changes = {}
        energies = self.state.energies()
        ids = sorted(energies, key=int)
        stored = self.state.weights(ids)
        self.weights = {i: np.array(w) for i, w in zip(ids, stored, strict=True) if w}
        self.stats.set_value(STAT + "agents", len(energies))
        if energies:
            mean = sum(energies.values()) / len(energies)
            self.stats.set_value(STAT + "energy", round(mean, 4))

    def agent_weights(self, agent: str) -> np.ndarray | None:
        """An agent's weights here, loaded if it was born since the last sync; None if dead."""
        if agent not in self.weights:
            (stored,) = self.state.weights([agent])
            if stored is None:
                return None
            self.weights[agent] = np.array(stored)
        return self.weights[agent]

    def _change(self, agent: str, change: np.ndarray) -> None:
        """Apply a change to an agent's weights here, and keep it for the next sync."""
        self.weights[agent] = self.weights[agent] + change
        self.changes[agent] = self.changes.get(agent, 0.0) + change

    def credit(self, page: Page, verdict: Verdict) -> tuple[str, list[bytes], np.ndarray]:
        """Credit the page to its agent (energy, split or death) and make that agent's value
        of the link to it a step closer to the page's R plus its best out-link's discounted
        value. Returns the agent that queues the page's out-links, their records and inputs."""
        reward = verdict.relevance
        fp = fingerprint(page.url)
        credit = self.state.credit_page(
            fp,
            reward=reward,
            cost=self.cost,
            reproduce=self.reproduce,
            max_agents=self.max_agents,
            energy=self.energy,
            pick=fp % (1 << 31),
        )
        agent, event, child, owner = credit.agent, credit.event, credit.child, credit.owner
        self.stats.set_value(STAT + "agents", credit.alive)
        if credit.adopted:
            self.stats.inc_value(STAT + "adopted")
        if event:
            self.stats.inc_value(STAT + {"born": "births", "died": "deaths"}.get(event, "reseeds"))
        if event == "died":
            self.weights.pop(agent, None)
            self.changes.pop(agent, None)
        records = [
            link_record(link.anchor, link.context or link.anchor, link.estimate, self.window)
            for link in verdict.links
        ]
        x = link_inputs(records)
        w = self.agent_weights(agent) if agent and event != "died" else None
        if w is not None and credit.features:
            best = float(link_values(w, x).max()) if len(records) else 0.0
            target = (1 - self.discount) * reward + self.discount * best
            came_by = link_inputs([credit.features])[0]
            self._change(agent, q_step(w, came_by, target, self.learning_rate))
        if event == "born" and w is not None:
            self._mutate(agent, child)
        self.pages += 1
        if self.pages % self.sync_every == 0:
            self.sync()
        return owner, records, x

    def _mutate(self, parent: str, child: str) -> None:
        """A newborn's weights (Redis copied its parent's as last synced): plus this process's
        unsynced changes of the parent and seeded Gaussian noise."""
        noise = np.random.default_rng([self.seed, int(child)]).normal(
            0.0, self.mutation, 2 + FEATURES
        )
        change = noise + self.changes.get(parent, 0.0)
        self.state.add_to_weights(child, enumerate(change.tolist()))
        self.weights[child] = self.weights[parent] + noise

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        """The page's out-links, scored by the agent credited with the page (:meth:`credit`),
        recorded as queued by it."""
        owner, records, x = self.credit(page, verdict)
        depth = page.depth + 1
        w = self.agent_weights(owner) if owner else None
        estimates = x[:, 1]
        values = link_values(w, x) if w is not None else estimates
        scores = self.blend * values + (1 - self.blend) * estimates
        chosen = [
            Link(link.url, float(score), depth, link.anchor)
            for link, score in zip(verdict.links, scores, strict=True)
        ]
        if not chosen or w is None:
            return chosen
        self.state.record_queued(
            owner, [(fingerprint(k.url), r) for k, r in zip(chosen, records, strict=True)]
        )
        return chosen

    def close(self) -> None:
        """Add this process's last weight changes to Redis."""
        self.sync()
