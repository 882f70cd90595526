"""Leasing: the best URLs whose hosts may be hit now, drawn from one shard after another
(``pop.lua``), and their parents' records."""

from __future__ import annotations

import time
from typing import Any

from focused.store import keys
from focused.store.frontier.base import (
    Leased,
    Pop,
)
from focused.store.frontier.core import Resting
from focused.store.frontier.outbox import Outbox
from focused.store.frontier.records import (
    split_member,
    unpack_score,
    url_record,
)

SHARD_REST_S = 0.5  # longest a pop leaves alone a shard that had too few hosts ready


class Popping(Outbox):
    """The frontier's pops (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    def pop_ready(self, n: int) -> Pop:
        """Lease up to ``n`` of the best URLs whose hosts may be hit now.

        On several shards the pop draws from one shard after another, starting from the next
        one each call, until it has ``n``: every shard gets its turn first. The order within a
        shard is the frontier's; across shards it is fair, not global. A shard that had fewer
        ready than asked is left alone until its next host is due (at most ``SHARD_REST_S``)
        unless this object has written since: a polite crawl's pops then cost one call, not
        one per shard. Queued and in-flight counts are those of the shards it drew from
        (all of them when it leases fewer than n), the last ones read for a shard left alone.
        """
        shards = len(self.store.shards)
        now = time.monotonic()
        if shards > 1 and now >= self._redeliver_at:
            self.redeliver()
        popped: list[tuple[int, str, str]] = []  # (shard, lease, parent's url: record)
        queued = in_flight = 0
        wakes: list[float] = []
        for step in range(shards):
            shard = (self._first_shard + step) % shards
            resting = self._resting.get(shard)
            if resting is not None and resting.until > now and resting.changes == self.changes:
                queued, in_flight = queued + resting.queued, in_flight + resting.in_flight
                wakes.append(resting.until - now)
                continue
            asked = n - len(popped)
            args = [asked, self.lease_s, self.max_tries, self.owner]
            out = self._call(self._pop, args, shard)
            queued, in_flight = queued + int(out[0]), in_flight + int(out[1])
            if out[2]:
                wakes.append(float(out[2]))
            got = [(shard, out[i], out[i + 1]) for i in range(3, len(out), 2)]
            popped += got
            if shards > 1 and len(got) < asked:
                wake = min(float(out[2]) if out[2] else SHARD_REST_S, SHARD_REST_S)
                self._resting[shard] = Resting(
                    now + max(wake, 0.0), self.changes, int(out[0]), int(out[1])
                )
            else:
                self._resting.pop(shard, None)
            if len(popped) >= n:
                break
        self._first_shard = (self._first_shard + 1) % shards
        deadline = time.monotonic() + self.lease_s
        leased = []
        for lease, record in self._parent_records(popped):
            self.held[lease] = deadline
            origin, packed, _, member = lease.split(" ", 3)
            depth, parent, rest, anchor = split_member(member)
            revisit = depth.startswith("r")
            depth, _, redirects = depth.removeprefix("r").partition("+")
            parent_url, parent_relevance, parent_category = url_record(record)
            tries, score = unpack_score(int(packed))
            leased.append(
                Leased(
                    origin + rest,
                    lease,
                    int(depth),
                    int(parent),
                    parent_url,
                    tries,
                    score,
                    anchor,
                    parent_relevance,
                    parent_category,
                    revisit,
                    int(redirects or 0),
                )
            )
        return Pop(leased, queued, in_flight, min(wakes) if wakes else None)

    def _parent_records(self, popped: list[tuple[int, str, str]]) -> list[tuple[str, str]]:
        """(lease, parent's ``url:`` record) of popped URLs: a pop script reads the records of
        its own shard's pages; those of parents on other shards are read here, in one
        pipelined round trip."""
        other = [
            (i, parent)
            for i, (shard, lease, _) in enumerate(popped)
            if (parent := int(split_member(lease.split(" ", 3)[3])[1]))
            and self.store.shards.of_order(parent) != shard
        ]
        records = [record for _, _, record in popped]
        if other:

            def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
                pipe = self.store._client.pipeline(transaction=False)
                for _, parent in other:
                    pipe.hget(self.store.shards.record_key(keys.URLS, parent), parent)
                return pipe.execute()

            for (i, _), record in zip(other, self.store.retrying(read), strict=True):
                records[i] = record or ""
        return [(lease, record) for (_, lease, _), record in zip(popped, records, strict=True)]
