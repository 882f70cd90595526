"""CrawlStore: one crawl's Redis, as every component of a crawler process reaches it.

The frontier, the extensions, the pipelines and the strategies each keep keys of their own in
the crawl's Redis (stats, heartbeats, the harvest's meta, seeds, WARC index, the distiller's
results, the strategies' logs). They share one :class:`CrawlStore` per crawl per process (the
frontier's, ``frontier.store``), so they share its connection pool, its retry policy and its
one report of a lost connection, and none of them builds a key name by hand.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import redis
from redis.cluster import RedisCluster

from focused.errors import CrawlVanished, FocusedError, did_you_mean
from focused.store import keys, scripts
from focused.store.client import binary_client
from focused.store.lock import Lease, fenced, held_lock
from focused.store.periodic import PeriodicJob
from focused.store.retries import RedisCall, retrying
from focused.store.shards import crawl_shards

if TYPE_CHECKING:
    from redis.commands.core import Script
    from redis.typing import EncodableT

T = TypeVar("T")
# How a frontier script's error reply starts when the crawl's epoch is gone (``frontier.lua``).
VANISHED = "VANISHED "
VANISHED_MESSAGE = (
    "the crawl's state vanished from Redis (restarted without its data, flushed, failed over to "
    "an empty replica, or the crawl reset; resuming it starts it afresh)"
)


class CrawlStore:
    """The Redis of crawl ``crawl``: what a component needs to read and write its keys.

    Contract:

    - ``_client`` returns strings, ``_binary`` (made on first use, one pool) bytes; both reach
      the same server or cluster. They are the store package's own: a module outside
      ``focused/store/`` reaches Redis through a store module's named methods, never a client
      (``tests/test_layers.py`` holds it).
    - ``key(name, suffix)`` is the name of a crawl key (``name`` one of :mod:`focused.store.keys`,
      ``suffix`` a bucket or an id after it), under ``prefix``, the crawl's own prefix (shard
      0's on a cluster); ``key(name, suffix, shard=j)`` that of shard j, for the keys every
      shard has, and ``host_key`` a host's, in its shard. ``shards`` says where keys live.
    - ``retrying(call)`` runs one Redis call (or pipeline) with ``retries`` retries; a
      connection that stays lost, or writes Redis keeps refusing (a RedisRefused), is reported
      once through ``on_lost`` (the crawl stops), and from then on calls fail fast with
      FocusedError, in every thread (``lost``). ``on_retry`` hears of each retry. A frontier
      call that finds the crawl's epoch gone (its state vanished: ``frontier.lua``) is reported
      and raised the same way, as a CrawlVanished, without retries.
    - ``script(name)`` registers one of the project's Lua scripts (:mod:`focused.store.scripts`).
    - ``held_lock`` and ``periodic`` take one of the crawl's locks (one process at a time);
      ``fenced`` writes only while a lease of one is still its holder's.
    - ``for_thread()`` is a copy for a worker thread: the callbacks belong to the reactor's
      thread, so the copy reports by raising only.

    ``create`` (a crawler process) makes the crawl's shard list on a cluster if it has none.
    """

    def __init__(
        self,
        client: redis.Redis | RedisCluster,
        crawl: str,
        *,
        retries: int = 8,
        create: bool = False,
        on_retry: Callable[[int, Exception], None] | None = None,
        on_lost: Callable[[FocusedError], None] | None = None,
    ):
        self._client = client
        self.crawl = crawl
        self.prefix = keys.prefix(crawl)
        self.shards = crawl_shards(client, crawl, create=create)
        self.retries = retries
        self.on_retry = on_retry
        self.on_lost = on_lost
        # Set once a call gave Redis up (lost, or refusing writes, through all retries); shared
        # with the copies for threads, whose retries it then ends.
        self.given_up = threading.Event()
        self.reported = False  # on_lost was called (once, in the reactor's thread)
        # A worker thread's copy (for_thread) gives up only its own call: the crawl gives Redis
        # up in the reactor's thread, after retries it logs, so a thread's silent retries never
        # stand for them.
        self.worker = False

    @property
    def lost(self) -> bool:
        """Whether a call of this crawl's process gave Redis up: calls then fail fast."""
        return self.given_up.is_set()

    @cached_property
    def _binary(self) -> redis.Redis | RedisCluster:
        """A client of the same Redis that returns bytes (binary records and arrays)."""
        return binary_client(self._client)

    def key(self, name: str, suffix: object = "", *, shard: int = 0) -> str:
        """The crawl's key ``name`` (of :mod:`focused.store.keys`), then ``suffix``; of shard
        ``shard`` for a key every shard has (:mod:`focused.store.shards`)."""
        return f"{self.shards.prefixes[shard]}{name}{suffix}"

    def host_key(self, name: str, origin: str) -> str:
        """A host's key ``name`` (its queue ``q:``, its hash ``h:``), in the host's shard."""
        return f"{self.shards.host_prefix(origin)}{name}{origin}"

    def retrying(self, call: RedisCall[T]) -> T:
        """Run a Redis call with retries; a connection that stays lost (or writes that stay
        refused) is reported, then raised."""
        retries = 0 if self.lost else self.retries  # reported once; after that, fail fast
        try:
            return retrying(call, retries=retries, on_retry=self.on_retry, given_up=self.given_up)
        except redis.ResponseError as exc:
            if not str(exc).startswith(VANISHED):
                raise
            vanished = CrawlVanished(VANISHED_MESSAGE)
            self._give_up(vanished)
            raise vanished from exc
        except FocusedError as exc:
            self._give_up(exc)
            raise

    def _give_up(self, error: FocusedError) -> None:
        """Report a call that gave Redis up (once), and have the crawl's calls fail fast."""
        if not self.reported and self.on_lost is not None:
            self.reported = True
            self.on_lost(error)
        if not self.worker:
            self.given_up.set()

    def script(self, name: str, **values: scripts.Value) -> Script:
        """One of the project's Lua scripts, registered with the crawl's client."""
        return self._client.register_script(scripts.source(name, **values))

    @contextmanager
    def held_lock(self, name: str, seconds: float) -> Iterator[Lease | None]:
        """Try to take the crawl's lock ``key(name)`` for the block (expiring after
        ``seconds``); yields its lease when this process holds it, else None."""
        with held_lock(self._client, self.key(name), seconds, self.retrying) as lease:
            yield lease

    def fenced(self, lease: Lease, commands: Sequence[tuple[EncodableT, ...]]) -> Any:
        """Write ``commands`` (name, key, arguments each) at once only while ``lease`` holds
        its lock, else raise LockLost; the last one's reply (:func:`focused.store.lock.fenced`)."""
        return fenced(self._client, lease, commands, self.retrying)

    def periodic(
        self, name: str, job: Callable[..., T | None], *, lock: str, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as a crawl-wide periodic job under the crawl's lock ``key(lock)``
        (:class:`PeriodicJob`, whose other options ``periodic`` gives)."""
        return PeriodicJob(
            name,
            job,
            client=self._client,
            lock=self.key(lock),
            lock_s=lock_s,
            call=self.retrying,
            **periodic,
        )

    def for_thread(self) -> CrawlStore:
        """A copy for a worker thread, without the callbacks (they call into the reactor)."""
        store = copy.copy(self)
        store.on_retry = store.on_lost = None
        store.worker = True
        return store


def crawl_names(client: redis.Redis | RedisCluster) -> list[str]:
    """Names of the crawls that have state in this Redis (not their other shards')."""
    stats_key = keys.prefix("*") + keys.STATS
    head, tail = stats_key.split("*")
    names = (key[len(head) : -len(tail)] for key in client.scan_iter(stats_key, count=1000))
    return sorted(name for name in names if "/" not in name)


#: Crawl names an error lists at most (a shared Redis may hold hundreds).
LISTED_CRAWLS = 10


def no_such_crawl(client: redis.Redis | RedisCluster, name: str) -> FocusedError:
    """The error of a command given a crawl that this Redis does not have, listing the crawls
    it has and naming the closest one, as a misspelt name (``relgion``) is the usual cause."""
    names = crawl_names(client)
    if not names:
        return FocusedError(f"no crawl named {name!r} in this Redis (it has no crawls)")
    listed = ", ".join(names[:LISTED_CRAWLS])
    if len(names) > LISTED_CRAWLS:
        listed += f" and {len(names) - LISTED_CRAWLS} more (focused status lists them)"
    hint = did_you_mean(name, names)
    return FocusedError(f"no crawl named {name!r} in this Redis (its crawls: {listed}){hint}")
