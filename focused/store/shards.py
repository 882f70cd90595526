"""Which Redis keys of a crawl live where: one server holds a crawl whole, a Redis Cluster
spreads its frontier over one shard per master.

A shard is a key prefix with a hash tag of its own, ``focused:{<tag>}:``, so that every key
under it is in one hash slot: each frontier script reads and writes one shard only, and stays
atomic on whichever master serves that slot. Shard 0 is the crawl's own prefix
(:func:`focused.store.keys.prefix`, tag = the crawl's name), which also holds every key that is not
the frontier's (meta, procs, distill, the strategies' state). On one server a crawl
has that one shard and nothing else changes.

On a cluster the first crawler process picks one tag per master (``<name>/<j>``, the first j
whose slot that master serves) and stores the list in the crawl's ``shards`` key; every process
then reads it, so all agree even if masters are added later (the slots move with their keys).

Per shard (everything the frontier's scripts write; readers add the shards up):

- a host's keys (its queue ``q:``, its hash ``h:``) and the seen fingerprints of its URLs: a
  host belongs to shard ``host_hash(origin) % S``, so a push checks seen and queues in one
  script;
- ``ready``, ``wait``, ``held``, ``d:`` (a domain's counts over the shard's hosts),
  ``leases``, ``owned:``, ``procs``/``proc:`` (the heartbeats the lease reaper reads),
  ``reaped``, ``outbox``;
- the per-page records: a page fetched from shard j gets fetch order ``n·S + j`` (its n-th),
  kept in ``url:``/``graph:`` bucket ``n // 512`` of shard j; ``stats``, ``curve``, ``recent``,
  ``census``, ``tries``, ``calibration``, ``hubscore``, ``sites``, ``found``, ``revisit``;
- a host's kept robots.txt (``robots:``) and its URLs' Last-Modified (``modified``), in the
  host's shard;
- the duplicates check's ``checksums``: a text checksum belongs to shard
  ``host_hash(checksum) % S`` (:meth:`Shards.of_text`), so pages with one text meet there
  whatever their hosts; and ``known`` (written by a reset): a URL fingerprint belongs to shard
  ``fingerprint % S``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import cast

import redis
from redis.cluster import RedisCluster

from focused.store import keys


def host_hash(origin: str) -> int:
    """32-bit hash of an origin (``http://host:port``): the server of a crawl-graph node, and
    (modulo the shards) the shard of a host."""
    return int.from_bytes(hashlib.blake2b(origin.encode(), digest_size=4).digest(), "big")


@dataclass(frozen=True, slots=True)
class Shards:
    """The shard prefixes of one crawl; shard 0's is the crawl's own prefix."""

    crawl: str
    prefixes: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.prefixes)

    def of_host(self, origin: str) -> int:
        return host_hash(origin) % len(self.prefixes) if len(self.prefixes) > 1 else 0

    def of_text(self, checksum: str) -> int:
        """The shard whose ``checksums`` holds a text checksum (the duplicates check's), spread
        by the same hash as hosts."""
        return self.of_host(checksum)

    def of_fingerprint(self, fp: int) -> int:
        """The shard whose ``known`` holds what earlier runs knew of a URL (its fingerprint)."""
        return fp % len(self.prefixes)

    def host_prefix(self, origin: str) -> str:
        """The prefix of the shard that holds a host's keys (its queue, its hash)."""
        return self.prefixes[self.of_host(origin)]

    def of_order(self, order: int) -> int:
        """The shard whose page got fetch order ``order``."""
        return order % len(self.prefixes)

    def record_key(self, name: str, order: int) -> str:
        """The ``url:`` or ``graph:`` bucket (``name``) that holds page ``order``'s record."""
        n = len(self.prefixes)
        return f"{self.prefixes[order % n]}{name}{order // n // keys.URL_BUCKET}"

    def orders(self, shard: int, fetched: int, bucket: int) -> range:
        """The fetch orders of shard ``shard`` in its bucket ``bucket`` (of its ``fetched``
        pages' orders, up to the last)."""
        n = len(self.prefixes)
        first = max(1, bucket * keys.URL_BUCKET)
        last = min(fetched, (bucket + 1) * keys.URL_BUCKET - 1)
        return range(first * n + shard, last * n + shard + 1, n)


def is_cluster(client: redis.Redis | RedisCluster) -> bool:
    return isinstance(client, RedisCluster)


def shard_prefix(tag: str) -> str:
    return keys.PREFIX.format(crawl=tag)


def _tags_for_masters(client: RedisCluster, crawl: str) -> list[str]:
    """One tag per master: the crawl's own for the master of its slot, then ``<crawl>/<j>``."""
    masters = {node.name for node in client.get_primaries()}
    home = client.nodes_manager.get_node_from_slot(client.keyslot(keys.prefix(crawl))).name
    tags, served = [crawl], {home}
    j = 0
    while served != masters:
        tag = f"{crawl}/{j}"
        node = client.nodes_manager.get_node_from_slot(client.keyslot(shard_prefix(tag))).name
        if node not in served:
            served.add(node)
            tags.append(tag)
        j += 1
    return tags


def crawl_shards(client: redis.Redis | RedisCluster, crawl: str, *, create: bool = False) -> Shards:
    """The shards of ``crawl``: its one prefix on a single server; on a cluster the list in its
    ``shards`` key, first made (``create``: a crawler process) with a shard per master."""
    if not isinstance(client, RedisCluster):
        return Shards(crawl, (keys.prefix(crawl),))
    key = keys.prefix(crawl) + keys.SHARDS
    if create:
        client.set(key, " ".join(_tags_for_masters(client, crawl)), nx=True)
    tags = (cast("str | None", client.get(key)) or crawl).split()  # a client of strings
    return Shards(crawl, tuple(shard_prefix(tag) for tag in tags))


def add_up(hashes: Iterable[Mapping[str, str]]) -> dict[str, float]:
    """Hashes of counters (the same hash of every shard: ``stats``, ``census``, ...) added up
    field by field."""
    total: dict[str, float] = {}
    for values in hashes:
        for name, value in values.items():
            total[name] = total.get(name, 0.0) + float(value)
    return total


def fetched_per_shard(client: redis.Redis | RedisCluster, shards: Shards) -> list[int]:
    """Each shard's ``fetched`` count: shard j's pages have fetch orders ``n·S + j`` for n up
    to it (:meth:`Shards.orders`). One round trip."""
    pipe = client.pipeline(transaction=False)
    for prefix in shards.prefixes:
        pipe.hget(prefix + keys.STATS, "fetched")
    return [int(fetched or 0) for fetched in pipe.execute()]
