"""The strategies' shared state in Redis: what several crawler processes of one crawl share so
that they run one strategy, each under the crawl's prefix (:mod:`focused.store.keys`).

A strategy gives scores and never touches Redis (:class:`~focused.strategies.base.Strategy`):
it holds one of these and calls its methods. Each class knows where its strategy's values go
and in what form they are stored; what the values mean (a page's record, a forward vector, an
agent's weights) is the strategy's:

- :class:`HMMStore`: Batsakis et al. 2009's HMM (``hmm``, ``hmm:log``, ``hmm:alpha:<b>``,
``hmm:lock``);
- :class:`GeneticStore`: Zhang and Yuan 2012's genetic strategy (``genetic``, ``genetic:edges:<b>``,
  ``genetic:lock``);
- :class:`InfoSpidersStore`: Srinivasan et al. 2005's InfoSpiders (``isp:*``).

Calls go through the crawl's :class:`~focused.store.crawl.CrawlStore`, with its retries; a
``for_thread`` copy serves a strategy's worker thread (a fit, a generation).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from focused.store import keys, replies
from focused.store.shards import is_cluster

if TYPE_CHECKING:
    from redis.typing import EncodableT

    from focused.store.crawl import CrawlStore
    from focused.store.lock import Lease
    from focused.store.periodic import PeriodicJob

__all__ = ["AgentCredit", "GeneticStore", "HMMCounts", "HMMStore", "InfoSpidersStore"]

T = TypeVar("T")
# α written a script call: each call checks the fitter's lease, and none holds Redis long.
ALPHA_WRITES = 1000


@dataclass(frozen=True)
class HMMCounts:
    """The HMM's crawl-wide figures: the stored model's version (0: none yet), pages logged
    at its fit, and pages logged for training."""

    version: int
    fitted: int
    logged: int


class HMMStore:
    """Batsakis et al. 2009's HMM strategy in Redis: its training log (one binary record a
    classified page, the last ``keep`` kept), its model (binary arrays under a version) and each
    page's forward vector α, stored under its 64-bit URL fingerprint in one of HMM_ALPHA_BUCKETS
    hashes. Records and arrays are bytes, as the strategy made them."""

    def __init__(self, store: CrawlStore, keep: int):
        self.store = store
        self.keep = keep
        self.model_key = store.key(keys.HMM)
        self.log_key = store.key(keys.HMM_LOG)

    def for_thread(self) -> HMMStore:
        """A copy for the fitter's thread (:meth:`CrawlStore.for_thread`)."""
        return HMMStore(self.store.for_thread(), self.keep)

    def _alpha_at(self, fp: int) -> tuple[str, bytes]:
        """(hash, field) of the α of the page of fingerprint ``fp``."""
        return self.store.key(keys.HMM_ALPHA, fp % keys.HMM_ALPHA_BUCKETS), fp.to_bytes(8, "big")

    def log_page(self, record: bytes | None, fp: int, alpha: bytes | None) -> HMMCounts:
        """One round trip: append the page's ``record`` to the training log (unless None),
        store its ``alpha`` (unless None), and read the model's figures."""
        binary = self.store._binary

        def write_and_read() -> list[Any]:
            pipe = binary.pipeline(transaction=False)
            if record is not None:
                pipe.rpush(self.log_key, record)
                pipe.ltrim(self.log_key, -self.keep, -1)
                pipe.hincrby(self.model_key, "logged", 1)
            if alpha is not None:
                pipe.hset(*self._alpha_at(fp), alpha)
            pipe.hmget(self.model_key, "version", "fitted", "logged")
            return pipe.execute()

        *_, (version, fitted, logged) = self.store.retrying(write_and_read)
        return HMMCounts(int(version or 0), int(fitted or 0), int(logged or 0))

    def alpha(self, fp: int) -> bytes | None:
        """The α stored for the page of fingerprint ``fp``, or None."""
        key, field = self._alpha_at(fp)
        return replies.blob(self.store.retrying(lambda: self.store._binary.hget(key, field)))

    def store_alphas(self, alphas: Iterable[tuple[int, bytes]], lease: Lease) -> None:
        """Store the α of many pages, (fingerprint, α) each, ALPHA_WRITES a call, only while
        ``lease`` (of ``hmm:lock``) is the fit's (LockLost): a fit paused past it would put its
        model's α over those of the model fitted meanwhile."""
        writes: list[tuple[EncodableT, ...]] = [
            ("HSET", *self._alpha_at(fp), alpha) for fp, alpha in alphas
        ]
        for start in range(0, len(writes), ALPHA_WRITES):
            self.store.fenced(lease, writes[start : start + ALPHA_WRITES])

    def model(self) -> tuple[dict[str, bytes], int] | None:
        """The stored model's fields (name -> bytes) and version; None before the first."""
        fields = replies.blob_hash(
            self.store.retrying(lambda: self.store._binary.hgetall(self.model_key))
        )
        if b"meta" not in fields:
            return None
        return {name.decode(): value for name, value in fields.items()}, int(fields[b"version"])

    def training_log(self) -> tuple[list[bytes], int, int]:
        """(the training log's records, oldest first; pages logged; the model's version),
        read together."""

        def read() -> list[Any]:
            pipe = self.store._binary.pipeline(transaction=True)
            pipe.lrange(self.log_key, 0, -1)
            pipe.hmget(self.model_key, "logged", "version")
            return pipe.execute()

        records, (logged, version) = self.store.retrying(read)
        return records, int(logged or 0), int(version or 0)

    def store_model(self, fields: Mapping[str, bytes], fitted: int, lease: Lease) -> int:
        """Store a fitted model's fields, fitted at ``fitted`` logged pages, under the next
        version, only while ``lease`` (of ``hmm:lock``) is the fit's (LockLost: a fit paused
        past it would replace the model fitted meanwhile on a longer log); returns that
        version."""
        record = [v for name, value in fields.items() for v in (name, value)]
        return int(
            self.store.fenced(
                lease,
                [
                    ("HSET", self.model_key, *record, "fitted", fitted),
                    ("HINCRBY", self.model_key, "version", 1),
                ],
            )
        )

    def fitter(
        self, job: Callable[..., T | None], *, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as the crawl's HMM fit, one process at a time under ``hmm:lock``
        (:meth:`CrawlStore.periodic`)."""
        return self.store.periodic("HMM fit", job, lock=keys.HMM_LOCK, lock_s=lock_s, **periodic)


@dataclass(frozen=True)
class GenerationCounts:
    """The genetic strategy's crawl-wide figures: pages logged, pages at the last
    generation, generations run."""

    pages: int
    last: int
    generations: int


class GeneticStore:
    """Zhang and Yuan 2012's genetic strategy in Redis: its edge log (binary page records appended
    in order, ``bucket_records`` a bucket) and the record of its generations (the ``genetic``
    hash: pages logged, pages at the last generation, the last one's figures)."""

    #: page records a bucket of the edge log holds
    bucket_records = keys.URL_BUCKET

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.GENETIC)
        self._log = store.script("genetic_log")

    def log_page(self, record: bytes) -> tuple[int, int]:
        """Append a page's record to the edge log; returns (pages logged, pages at the last
        generation), read in the same atomic call."""
        keys_ = [self.key, self.store.key(keys.GENETIC_EDGES)]
        logged, last = self.store.retrying(
            lambda: self._log(keys=keys_, args=[self.bucket_records, record])
        )
        return int(logged), int(last)

    def edge_log(self, bucket: int, offset: int) -> list[bytes]:
        """The edge log from byte ``offset`` of bucket ``bucket`` on: that bucket's rest, then
        each later bucket written so far, whole."""
        binary = self.store._binary
        logged = int(self.store.retrying(lambda: binary.hget(self.key, "pages")) or 0)
        last_bucket = max(logged - 1, 0) // self.bucket_records

        def read() -> list[bytes]:
            pipe = binary.pipeline(transaction=False)
            for b in range(bucket, last_bucket + 1):
                start = offset if b == bucket else 0
                pipe.getrange(self.store.key(keys.GENETIC_EDGES, b), start, -1)
            return pipe.execute()

        return self.store.retrying(read)

    def counts(self) -> GenerationCounts:
        """Pages logged, at the last generation, and generations run, crawl-wide."""
        client = self.store._client
        pages, last, done = self.store.retrying(
            lambda: client.hmget(self.key, "pages", "last", "generations")
        )
        return GenerationCounts(int(pages or 0), int(last or 0), int(done or 0))

    def record_generation(self, record: Mapping[str, int | float], lease: Lease) -> None:
        """Record a generation's figures (``last``, ``generations`` and what it found), only
        while ``lease`` (of ``genetic:lock``) is the generation's (LockLost): one paused past
        it would set ``last`` and ``generations`` back to before the generation run
        meanwhile."""
        fields = [v for name, value in record.items() for v in (name, value)]
        self.store.fenced(lease, [("HSET", self.key, *fields)])

    def generation_job(
        self, job: Callable[..., T | None], *, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as the crawl's generation, one process at a time under ``genetic:lock``
        (:meth:`CrawlStore.periodic`)."""
        return self.store.periodic(
            "Genetic generation", job, lock=keys.GENETIC_LOCK, lock_s=lock_s, **periodic
        )


@dataclass(frozen=True)
class AgentCredit:
    """What crediting a fetched page did (``infospiders_fetched.lua``): the agent credited
    ("" when none lives), the link inputs it queued the page with (empty when it did not),
    its event ("born", "died", "reseeded" or ""), the child born, the agent that queues the
    page's out-links, whether the page was adopted, and the live agents."""

    agent: str
    features: bytes
    event: str
    child: str
    owner: str
    adopted: bool
    alive: int


class InfoSpidersStore:
    """Srinivasan et al. 2005's InfoSpiders in Redis: every live agent's energy and weights (JSON
    arrays), the events of the population, and per queued URL the agent that queued it with the
    link's inputs (``"<agent> <base64 inputs>"``, ``-`` once fetched), in ``buckets`` hashes by URL
    fingerprint. Crediting a page, creating the population and adding to weights are atomic
    scripts (``infospiders_*.lua``)."""

    def __init__(self, store: CrawlStore, buckets: int):
        self.store = store
        self.buckets = buckets
        self._init = store.script("infospiders_init")
        self._fetched = store.script("infospiders_fetched")
        self._add = store.script("infospiders_add")

    def _run(self, script: Any, args: list[Any]) -> Any:
        prefix = [self.store.prefix]
        return self.store.retrying(lambda: script(keys=prefix, args=args))

    def record_at(self, fp: int) -> tuple[int, int]:
        """(bucket, field) of the queued-by record of the URL of fingerprint ``fp``."""
        return fp % self.buckets, fp // self.buckets

    def create_agents(self, energy: float, weights: Sequence[Sequence[float]]) -> int:
        """Create agents of these weights, each with ``energy``, unless some live; returns
        how many were made (processes starting at once create the population once)."""
        return int(self._run(self._init, [energy, *map(json.dumps, weights)]))

    def credit_page(
        self,
        fp: int,
        *,
        reward: float,
        cost: float,
        reproduce: float,
        max_agents: int,
        energy: float,
        pick: int,
    ) -> AgentCredit:
        """Credit the fetched page of fingerprint ``fp`` to the agent that queued it, else to
        the live agent ``pick`` chooses, and mark its record fetched: the agent gains
        ``reward`` and pays ``cost``; above ``reproduce`` it splits (up to ``max_agents``), at
        or below zero it dies (the last is reseeded with ``energy``)."""
        agent, features, event, child, owner, adopted, _, alive = self._run(
            self._fetched,
            [*self.record_at(fp), reward, cost, reproduce, max_agents, energy, pick],
        )
        return AgentCredit(
            agent,
            base64.b64decode(features) if features else b"",
            event,
            child,
            owner,
            bool(int(adopted)),
            int(alive),
        )

    def add_to_weights(self, agent: str, changes: Iterable[tuple[int, float]]) -> None:
        """Add (index, change) pairs to a live agent's stored weights."""
        self._run(self._add, [agent, *self._pairs(changes)])

    @staticmethod
    def _pairs(changes: Iterable[tuple[int, float]]) -> list[Any]:
        return [v for j, change in changes for v in (int(j), repr(float(change)))]

    def add_to_all_weights(self, changes: Mapping[str, Iterable[tuple[int, float]]]) -> None:
        """:meth:`add_to_weights` for many agents, in one round trip."""
        client, prefix = self.store._client, self.store.prefix

        def push() -> None:
            pipe = client.pipeline(transaction=False)
            for agent, pairs in changes.items():
                args = self._pairs(pairs)
                if not args:
                    continue
                if is_cluster(client):  # a cluster pipeline sends no EVALSHA: the script itself
                    pipe.execute_command("EVAL", self._add.script, 1, prefix, agent, *args)
                else:
                    self._add(keys=[prefix], args=[agent, *args], client=pipe)
            pipe.execute()

        self.store.retrying(push)

    def energies(self) -> dict[str, float]:
        """Every live agent's energy, by agent id."""
        key = self.store.key(keys.AGENT_ENERGY)
        stored = replies.text_hash(self.store.retrying(lambda: self.store._client.hgetall(key)))
        return {agent: float(energy) for agent, energy in stored.items()}

    def weights(self, agents: Sequence[str]) -> list[list[float] | None]:
        """The stored weights of these agents (None for one that has died)."""
        if not agents:
            return []
        names = [self.store.key(keys.AGENT_WEIGHTS, agent) for agent in agents]
        stored = self.store.retrying(lambda: self.store._client.mget(names))
        return [json.loads(w) if w is not None else None for w in stored]

    def record_queued(self, owner: str, links: Iterable[tuple[int, bytes]]) -> None:
        """Record ``owner`` as the agent that queued each link, (URL fingerprint, link
        inputs); a URL keeps the first agent that queued it."""
        client = self.store._client

        def record() -> None:
            pipe = client.pipeline(transaction=False)
            for fp, inputs in links:
                bucket, field = self.record_at(fp)
                value = f"{owner} {base64.b64encode(inputs).decode()}"
                pipe.hsetnx(self.store.key(keys.QUEUED_BY, bucket), str(field), value)
            pipe.execute()

        self.store.retrying(record)
