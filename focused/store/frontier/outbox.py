"""The cluster outbox: a page's links to other shards' hosts, kept in its shard's ``outbox`` by
its acknowledgement until they are pushed there, so a process killed in between loses none."""

from __future__ import annotations

import json
import time

from focused.store import keys, replies
from focused.store.frontier.push import Pushing

REDELIVER_S = 30.0  # how often a pop on a cluster looks for outbox entries of gone processes


def parented(away: dict[int, list[tuple[int, str]]], orders: list[int]) -> dict[int, list[str]]:
    """A batch's links for other shards (shard -> (page in the batch, packed links)) as the
    push script's (parent fetch order, packed links) pairs; the links of a page whose order
    is 0 (a duplicate, a failed fetch, a lease that did not parse) are not queued."""
    return {
        shard: [x for n, lines in pages if orders[n] for x in (str(orders[n]), lines)]
        for shard, pages in away.items()
    }


class Outbox(Pushing):
    """The outbox's deliveries (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    def redeliver(self) -> int:
        """Push the links kept in the shards' outboxes by processes that are gone (their
        heartbeat expired; for one without a heartbeat, after the lease time) to their shards,
        and delete those entries; returns how many entries were delivered. Pushing links
        twice is harmless (the seen set), so an entry delivered by two processes at once is
        too. The pop runs it every ``REDELIVER_S`` seconds on a cluster.
        """
        self._redeliver_at = time.monotonic() + REDELIVER_S
        store, client = self.store, self.store._client
        delivered = 0
        for shard in range(len(store.shards)):
            outbox = store.key(keys.OUTBOX, shard=shard)
            entries = replies.text_hash(store.retrying(lambda k=outbox: client.hgetall(k)))
            if not entries:
                continue
            seconds, micros = store.retrying(client.time)
            owners = sorted({entry.split(" ", 1)[0] for entry in entries.values()} - {"-"})
            alive = store.retrying(lambda j=shard, o=owners: self._alive(j, o))
            for key, entry in entries.items():
                owner, at, orders, payload = entry.split(" ", 3)
                if owner == "-":
                    gone = seconds + micros / 1e6 - float(at) > self.lease_s
                else:
                    gone = not alive[owner] and key not in self._delivered.get(shard, ())
                if not gone:
                    continue
                away = {int(j): pages for j, pages in json.loads(payload).items()}
                self._push_shards(parented(away, [int(order) for order in orders.split(",")]))
                store.retrying(lambda k=outbox, o=key: client.hdel(k, o))
                delivered += 1
        return delivered

    def _alive(self, shard: int, ids: list[str]) -> dict[str, bool]:
        """Process id -> whether its heartbeat record on a shard is still there."""
        pipe = self.store._client.pipeline(transaction=False)
        for process_id in ids:
            pipe.exists(self.store.key(keys.PROC, process_id, shard=shard))
        return dict(zip(ids, map(bool, pipe.execute()), strict=True)) if ids else {}

    def settle(self) -> None:
        """Delete the outbox entries this process has delivered (at its close)."""
        store = self.store
        for shard, done in list(self._delivered.items()):
            outbox = store.key(keys.OUTBOX, shard=shard)
            store.retrying(lambda k=outbox, d=done: store._client.hdel(k, *d))
            del self._delivered[shard]
