"""The frontier counted by link score: the queued URLs per score bucket (``queued_scores.lua``)
and the calibration of the scores, the pages fetched from each bucket and how many of them
were relevant, a sum of the pages' found shares (``calibration``, counted by the
acknowledgement). What the estimate of what is
left to find (:mod:`focused.monitor.coverage`) reads; reads only.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from focused.store import keys
from focused.store.frontier.core import FrontierCore
from focused.store.frontier.records import SCORE_BUCKETS, bucket_levels, score_bucket
from focused.store.shards import add_up

# Hosts per call of ``queued_scores.lua``: each call holds Redis for about a millisecond.
HOSTS_PER_CALL = 200


@cache
def _levels() -> str:
    return " ".join(map(str, bucket_levels()))


@dataclass(frozen=True)
class QueuedScores:
    """URLs not fetched yet, per score bucket (index 0: scores below 1/SCORE_BUCKETS): those
    of each host read (``hosts``, its queue and its leased URLs), which are all the hosts
    with URLs queued or leased (``population``) or a uniform sample of them."""

    hosts: list[list[int]]
    population: int

    @property
    def sampled(self) -> bool:
        return len(self.hosts) < self.population


class ScoreCounts(FrontierCore):
    """The frontier's counts by link score
    (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    def queued_by_score(self, max_hosts: int = 0, rng: random.Random | None = None) -> QueuedScores:
        """The URLs queued or leased per host and score bucket: every host's, or a uniform
        sample of about ``max_hosts`` of them (0: no cap), each shard's share of it."""
        store, hosts, population = self.store, [], 0
        rng = rng or random.Random()
        cap = -(-max_hosts // len(store.shards))
        for shard in range(len(store.shards)):
            sets = [store.key(name, shard=shard) for name in (keys.READY, keys.WAIT, keys.HELD)]
            leases = store.key(keys.LEASES, shard=shard)

            def members(sets: list[str] = sets, leases: str = leases) -> list[Any]:
                pipe = store._client.pipeline(transaction=False)
                for key in sets:
                    pipe.zrange(key, 0, -1)
                pipe.zrange(leases, 0, -1)
                return pipe.execute()

            *listed, leased = store.retrying(members)
            origins = set().union(*listed)
            in_flight: dict[str, list[int]] = {}
            for lease in leased:
                origin, packed, _ = lease.split(" ", 2)
                in_flight.setdefault(origin, []).append(int(packed))
            origins.update(in_flight)
            population += len(origins)
            chosen = sorted(origins)
            if cap and len(chosen) > cap:
                chosen = rng.sample(chosen, cap)
            for start in range(0, len(chosen), HOSTS_PER_CALL):
                part = chosen[start : start + HOSTS_PER_CALL]
                flat = self._call(self._queued_scores, [_levels(), *part], shard)
                for n, origin in enumerate(part):
                    counts = [int(c) for c in flat[n * SCORE_BUCKETS : (n + 1) * SCORE_BUCKETS]]
                    for packed in in_flight.get(origin, ()):
                        counts[score_bucket(packed)] += 1
                    hosts.append(counts)
        return QueuedScores(hosts, population)

    def score_calibration(self) -> dict[int, tuple[int, float]]:
        """Per score bucket: (URLs acknowledged that were leased in it, of which new relevant
        pages: the sum of their found shares), every shard's added up. Revisits are not
        counted."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):
                pipe.hgetall(store.key(keys.CALIBRATION, shard=shard))
            return pipe.execute()

        totals = add_up(store.retrying(read))
        return {
            bucket: (int(totals.get(f"n{bucket}", 0)), totals.get(f"r{bucket}", 0.0))
            for bucket in sorted({int(field[1:]) for field in totals})
        }
