"""Re-ordering the queue: queued URLs given new scores (``raise.lua``), known pages queued
again (``requeue.lua``), the worst dropped (``drop_worst.lua``), and the host queues read for
those jobs. The strategies, the distiller and maintenance mode use them, not the crawl."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial
from typing import Any

from focused.store import keys
from focused.store.frontier.core import FrontierCore
from focused.store.frontier.records import (
    HASH_MASK,
    fingerprint,
    pack,
    split_member,
    split_url,
    unpack_score,
)


class Reordering(FrontierCore):
    """The frontier's re-ordering (:class:`~focused.store.frontier.queue.RedisFrontier`)."""

    def _per_shard(self, script: Any, triples: list[tuple[str, str, int]], *head: str) -> int:
        """Run a script of (origin, member, packed) triples on each shard with its hosts',
        after the arguments ``head``."""
        grouped: dict[int, list[Any]] = {}
        for origin, member, packed in triples:
            grouped.setdefault(self.store.shards.of_host(origin), list(head)).extend(
                (origin, member, packed)
            )
        return sum(int(self._call(script, args, shard)) for shard, args in grouped.items())

    def requeue(self, urls: Iterable[str], score: float = 1.0) -> int:
        """Queue known URLs again (past the seen set), marked as revisits, at ``score``.

        A URL already queued is left as it is. Returns how many were queued, also counted as
        ``revisits`` in the crawl's stats (maintenance mode, :mod:`focused.schedulers.revisits`).
        """
        triples = []
        for url in urls:
            origin, rest = split_url(url)
            triples.append((origin, f"r0 0 {rest[1:]}", pack(score, 0, fingerprint(url))))
        return self._per_shard(self._requeue, triples)

    def queued_hosts(self) -> list[str]:
        """Origins with URLs queued (a SCAN over the host queues: for periodic jobs only)."""
        store, hosts = self.store, []
        for shard in range(len(store.shards)):
            queues = store.key(keys.HOST_QUEUE, shard=shard)  # then the host's origin
            scan = partial(store._client.scan_iter, match=keys.pattern(queues), count=1000)
            hosts += store.retrying(lambda q=queues, s=scan: [key[len(q) :] for key in s()])
        return hosts

    def host_queue(self, origin: str) -> list[tuple[str, int, str]]:
        """(member, packed order, URL) of every URL queued for one host, best first."""
        return self.host_queues([origin])[0]

    def host_queues(self, origins: Sequence[str]) -> list[list[tuple[str, int, str]]]:
        """:meth:`host_queue` of each of these hosts, in one pipelined round trip (one a
        shard on a cluster)."""
        store = self.store

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = store._client.pipeline(transaction=False)
            for origin in origins:
                pipe.zrange(store.host_key(keys.HOST_QUEUE, origin), 0, -1, withscores=True)
            return pipe.execute()

        return [
            [(member, int(packed), origin + split_member(member)[2]) for member, packed in queue]
            for origin, queue in zip(origins, store.retrying(read), strict=True)
        ]

    def raise_to(self, score: float, queued: Iterable[tuple[str, str, int]]) -> int:
        """Raise queued URLs, given as (origin, member, packed order), to ``score``.

        Their tries are kept; URLs already at ``score`` or better, and URLs no longer queued
        (popped meanwhile), are left as they are. Returns how many moved, also counted as
        ``reboosted`` in the crawl's stats.
        """
        return self._set_scores(((o, m, p, score) for o, m, p in queued), "raise")

    def rescore(self, queued: Iterable[tuple[str, str, int, float]]) -> int:
        """Give queued URLs, as (origin, member, packed order, new score), new scores, up or
        down: a refitted topic's estimates. Their tries are kept; URLs no longer queued
        (popped meanwhile) are left out. Returns how many moved, also counted as
        ``rescored`` in the crawl's stats."""
        return self._set_scores(queued, "set")

    def rescore_anchors(self, score: Callable[[list[str]], Iterable[float]]) -> int:
        """Give every queued URL that has anchor text the score ``score`` gives its anchor (a
        topic's estimate of links, refitted or edited), up or down, as :meth:`rescore`; URLs
        without anchor text (seeds) keep theirs. A SCAN over the host queues: for jobs that run
        now and then, not per page."""
        queued = []
        origins = self.queued_hosts()
        for origin, queue in zip(origins, self.host_queues(origins), strict=True):
            for member, packed, _ in queue:
                if anchor := member.partition("\t")[2]:
                    queued.append((origin, member, packed, anchor))
        if not queued:
            return 0
        scores = score([anchor for *_, anchor in queued])
        return self.rescore(
            (origin, member, packed, float(r))
            for (origin, member, packed, _), r in zip(queued, scores, strict=True)
        )

    def _set_scores(self, queued: Iterable[tuple[str, str, int, float]], how: str) -> int:
        """``raise.lua`` on (origin, member, packed order, score): each URL repacked with its
        new score and its tries kept; ``how`` is "raise" (only up) or "set"."""
        triples = []
        for origin, member, packed, score in queued:
            tries, _ = unpack_score(packed)
            triples.append((origin, member, pack(score, tries, packed & HASH_MASK)))
        return self._per_shard(self._raise, triples, how)

    def drop_worst(self, max_queued: int) -> int:
        """Drop the worst queued URLs beyond ``max_queued``, for good; returns how many.

        They stay seen, so they are never queued again, and are counted as ``dropped/buffer``
        in the crawl's stats. One atomic call: processes trimming at once never go below
        ``max_queued``. Its work grows with the URLs queued (module doc), so call it when
        the queue is capped, not on an unbounded one. On several shards each keeps its share
        of ``max_queued`` (its worst beyond that go).
        """
        shards = len(self.store.shards)
        return sum(
            int(self._call(self._drop_worst, [max_queued // shards + (j < max_queued % shards)], j))
            for j in range(shards)
        )
