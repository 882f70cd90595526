"""The Redis frontier's state and the one way it calls a script: what every role of
:class:`~focused.store.frontier.queue.RedisFrontier` (push, pop, ack, outbox, reorder) is
built on.

A frontier script (``focused/store/lua/frontier.lua``) runs on one shard and is given the
shard's prefix and the frontier keys it uses (:func:`script_keys`) as KEYS, and this frontier's
settings by name (its shard, the shards, the crawl's epoch, the host concurrency and delay, the
budgets) as ARGV[1]; its own arguments follow.
"""

from __future__ import annotations

import copy
import json
import re
import secrets
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, Self

from focused.errors import FocusedError
from focused.links.domains import RegisteredDomains
from focused.links.urls import BadURL
from focused.store import keys, replies, scripts
from focused.store.crawl import CrawlStore
from focused.store.frontier.base import (
    NEAR_COPY,
    Budgets,
)
from focused.store.frontier.records import (
    MAX_TRIES_PACKABLE,
    PACKING,
)
from focused.store.shards import add_up

if TYPE_CHECKING:
    import redis


# The keys of a shard a frontier script may be given, after its prefix, by their names in
# :mod:`focused.store.keys` (lower case, as ``frontier.lua`` names them: ``frontier.key.ready``).
FRONTIER_KEYS = (
    "ready",
    "wait",
    "held",
    "leases",
    "stats",
    "reaped",
    "procs",
    "hung_reclaims",
    "epoch",
    "outbox",
    "curve",
    "census",
    "tries",
    "calibration",
    "recent",
    "hub_scores",
    "sites",
    "found",
    "revisit",
    "checksums",
    "modified",
    "known",
)
# A page's values in the ``complete`` script's arguments, in order (``complete.lua``).
PAGE_FIELDS = (
    "lease",
    "url",
    "kind",
    "relevance",
    "relevant",
    "dead",
    "found",
    "category",
    "graph",
    "hub_score",
    "duplicate",
    "links",
)
# The values every frontier script uses besides the key names (``scripts.source``).
SCRIPT_VALUES: dict[str, scripts.Value] = {
    **PACKING,
    "PAGE_FIELDS": PAGE_FIELDS,
    "NEAR_COPY": NEAR_COPY,
}
# A frontier key named in a script's code: ``frontier.key.stats``, ``key.stats``.
_KEY_NAMED = re.compile(r"\bkey\.([a-z_]+)")
_COMMENT = re.compile(r"--[^\n]*")


@cache
def script_keys(name: str) -> tuple[str, ...]:
    """The frontier keys script ``name`` is given after its prefix: those its files' code names,
    in :data:`FRONTIER_KEYS` order. Only those: each key given costs Redis time every call."""
    named = set(_KEY_NAMED.findall(_COMMENT.sub("", scripts.text(name))))
    if unknown := named - set(FRONTIER_KEYS):
        raise ValueError(f"script {name} names keys that are not frontier keys: {unknown}")
    return tuple(key for key in FRONTIER_KEYS if key in named)


def script_values(name: str) -> dict[str, scripts.Value]:
    """The values script ``name`` is built with: :data:`SCRIPT_VALUES`, and ``GIVEN_KEYS``, the
    names of the keys it is given (:func:`script_keys`)."""
    return {**SCRIPT_VALUES, "GIVEN_KEYS": script_keys(name)}


def json_arg(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Resting:
    """A shard that had fewer hosts ready than a pop asked for: until when the pop leaves it
    alone (unless ``changes`` moves), and its counts then."""

    until: float
    changes: int
    queued: int
    in_flight: int


@dataclass(frozen=True, slots=True)
class FrontierScript:
    """A frontier script registered with the crawl's client, and its KEYS on each shard: the
    shard's prefix, then the keys the script uses (:func:`script_keys`)."""

    run: Any
    keys: list[list[str]]


class FrontierCore:
    """The state of one crawl's Redis frontier and its calls to the frontier's scripts: the
    base of :class:`~focused.store.frontier.queue.RedisFrontier`'s roles."""

    def __init__(
        self,
        store: CrawlStore,
        *,
        host_delay: float = 1.0,
        host_concurrency: int = 1,
        lease_s: float = 300.0,
        max_tries: int = 3,
        seen_buckets: int = 4096,
        graph: bool = True,
        revisits: bool = False,
        max_url_length: int = 2083,
        seen_cache: int = 262_144,
        budgets: Budgets | None = None,
        dead_prior: float = 0.0,
        dead_hold: float = 0.0,
        dead_after: int = 4,
        on_rejected: Callable[[BadURL], None] | None = None,
        epoch: bool = False,
    ):
        if not 1 <= max_tries <= MAX_TRIES_PACKABLE:
            raise ValueError(f"max_tries must be 1..{MAX_TRIES_PACKABLE}, got {max_tries}")
        if host_concurrency < 1:
            raise ValueError(f"host_concurrency must be >= 1, got {host_concurrency}")
        # The crawl's Redis, shared with every component of this process (``store_for``).
        self.store = store
        # The crawl's epoch on each shard, named by every call (a crawl process's, ``epoch``:
        # its calls fail once the crawl's state has vanished), else "-" (no check).
        self.epochs = self._join() if epoch else ["-"] * len(self.store.shards)
        self.host_delay = host_delay
        self.host_concurrency = host_concurrency
        self.lease_s = lease_s
        self.max_tries = max_tries
        self.seen_buckets = seen_buckets
        self.graph = graph  # store each classified page's cross-server links (the crawl graph)
        self.revisits = revisits  # keep relevant pages in ``revisit`` (maintenance mode)
        self.max_url_length = max_url_length  # longer URLs are not queued (0: no limit)
        self.on_rejected = on_rejected  # called with each URL refused (``BadURL``)
        self.budgets = budgets = budgets or Budgets()
        # Fetches at the crawl's live share a host's own are smoothed with: a host's best
        # score times its expected live share places it (``frontier.lua``); 0: not at all.
        self.dead_prior = dead_prior
        # A host of at least ``dead_after`` fetches expected live less than ``dead_hold`` is
        # held (``over_budget``): served only when no other host has URLs queued; 0: never.
        self.dead_hold = dead_hold
        # Registered domains of the links' hosts, sent with them when a budget needs them.
        self._domains = (
            RegisteredDomains(budgets.private_suffixes) if budgets.of_domains() else None
        )
        # Fingerprints this process's calls have put in the seen set (emptied when it holds more
        # than ``seen_cache``): a link to one of them is not sent again, Redis has it seen.
        self.seen_cache = seen_cache
        self.known: set[int] = set()
        # This process's id in the crawl's heartbeat records (``proc:<id>``), "-" for none: with
        # one, its leases go back untouched soon after its record expires (a killed process).
        self.owner = "-"
        self.changes = 0  # writes by this object that may have made a host ready
        # Leases this object popped and has not acknowledged or released -> the local time
        # they run out (the scheduler of a best-N-first crawl waits for a whole batch).
        self.held: dict[str, float] = {}
        self._first_shard = 0  # the shard the next pop draws from first
        # Outbox entries (fetch orders) this process has delivered, by shard: deleted with its
        # next call there (``complete``) or at its close (``settle``).
        self._delivered: dict[int, list[str]] = {}
        self._redeliver_at = 0.0  # when the pop next looks for outbox entries of gone processes
        self._resting: dict[int, Resting] = {}  # shards the pop leaves alone for now
        # Per shard, the scripts' ARGV[1], this frontier's settings by name (``frontier.lua``).
        shards = self.store.shards
        self._settings = [
            json_arg(
                {
                    "shard": shard,
                    "shards": len(shards),
                    "epoch": self.epochs[shard],
                    "concurrency": host_concurrency,
                    "delay": host_delay,
                    "budgets": budgets.by_name(),
                    "dead_prior": dead_prior,
                    "dead_hold": dead_hold,
                    "dead_after": max(1, dead_after),
                }
            )
            for shard in range(len(shards))
        ]

        def script(name: str) -> FrontierScript:
            given = script_keys(name)
            return FrontierScript(
                self.store.script(name, **script_values(name)),
                [
                    [prefix, *(prefix + getattr(keys, key.upper()) for key in given)]
                    for prefix in shards.prefixes
                ],
            )

        self._push = script("push")
        self._pop = script("pop")
        self._complete = script("complete")
        self._release = script("release")
        self._raise = script("raise")
        self._requeue = script("requeue")
        self._drop_worst = script("drop_worst")
        self._queued_scores = script("queued_scores")
        self._back_off = script("back_off")
        self._duplicates = self.store.script("duplicates")

    @classmethod
    def for_crawl(
        cls,
        client: redis.Redis,
        crawl: str,
        *,
        retries: int = 8,
        on_retry: Callable[[int, Exception], None] | None = None,
        on_lost: Callable[[FocusedError], None] | None = None,
        **options: Any,
    ) -> Self:
        """The frontier of crawl ``crawl`` in the Redis of ``client``, with a store of its own
        (:class:`CrawlStore`, its retries and report of a lost connection): for commands,
        tests and benchmarks, which have no crawler to share a store with."""
        store = CrawlStore(
            client, crawl, retries=retries, create=True, on_retry=on_retry, on_lost=on_lost
        )
        return cls(store, **options)

    def _join(self) -> list[str | None]:
        """The crawl's epoch on each shard (``keys.EPOCH``), set now where there is none (the
        crawl's first process, or the first after its state vanished)."""
        store, token = self.store, secrets.token_hex(8)
        epochs = []
        for shard in range(len(store.shards)):
            key = store.key(keys.EPOCH, shard=shard)
            store.retrying(lambda k=key: store._client.set(k, token, nx=True))
            epochs.append(replies.text(store.retrying(lambda k=key: store._client.get(k))))
        return epochs

    def for_thread(self) -> Self:
        """A copy for a worker thread (the distiller's, a genetic generation's): it shares this
        object's state but reports a lost connection by raising only
        (:meth:`CrawlStore.for_thread`)."""
        worker = copy.copy(self)
        worker.store = self.store.for_thread()
        return worker

    def _call(self, script: FrontierScript, args: list[Any], shard: int = 0) -> Any:
        """Run one of the scripts on one shard (its keys' prefix in KEYS routes it there)."""
        if script not in (self._pop, self._drop_worst, self._queued_scores):
            self.changes += 1
        settings = self._settings[shard]
        names = script.keys[shard]
        return self.store.retrying(lambda: script.run(keys=names, args=[settings, *args]))

    def _by_shard(self, leases: Iterable[str]) -> dict[int, list[str]]:
        """Leases (or anything starting with an origin and a space) grouped by shard."""
        grouped: dict[int, list[str]] = {}
        for lease in leases:
            grouped.setdefault(self.store.shards.of_host(lease.split(" ", 1)[0]), []).append(lease)
        return grouped

    def holding(self) -> int:
        """Leases this object popped that are neither acknowledged, released nor run out.

        A lease whose item never reached the frontier pipeline (dropped on the way) counts
        until its deadline: by then the frontier has its URL back anyway.
        """
        now = time.monotonic()
        for lease in [lease for lease, deadline in self.held.items() if deadline <= now]:
            del self.held[lease]
        return len(self.held)

    def counts(self) -> dict[str, float]:
        """The crawl's counters (queued, seen, fetched, relevant, ...) and URLs in flight,
        added up over its shards."""

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = self.store._client.pipeline(transaction=False)
            for shard in range(len(self.store.shards)):
                pipe.hgetall(self.store.key(keys.STATS, shard=shard))
                pipe.zcard(self.store.key(keys.LEASES, shard=shard))
            return pipe.execute()

        replies = self.store.retrying(read)
        counts = add_up(replies[::2])
        counts["in_flight"] = sum(replies[1::2])
        return counts

    def __len__(self) -> int:
        """URLs queued or leased."""
        counts = self.counts()
        return int(counts.get("queued", 0) + counts["in_flight"])
