"""The heartbeat records of a crawl's processes: ``procs`` (each process's last beat) and
``proc:<id>`` (its record), written on every shard, whose lease reaper reads its own; readers
read shard 0's (:mod:`focused.store.reads`). What a record holds and when a process beats is
:mod:`focused.extensions.heartbeat`'s.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from focused.store import keys, replies

if TYPE_CHECKING:
    from focused.store.crawl import CrawlStore


@dataclass(frozen=True)
class ProcessRecord:
    """Where a process of the crawl runs and what its record says it is doing."""

    id: str
    host: str | None
    pid: int | None
    state: str | None  # running, hung or finished; None for a record gone


class ProcessRecords:
    """A crawl's heartbeat records, through its store (so with its retries); every call raises
    FocusedError once Redis is given up."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self._beat = store.script("heartbeat")

    def for_thread(self) -> ProcessRecords:
        """A copy for a worker thread (:meth:`CrawlStore.for_thread`)."""
        records = copy.copy(self)
        records.store = self.store.for_thread()
        return records

    def beat(self, process_id: str, record: Mapping[str, Any], keep_s: float) -> None:
        """Record process ``process_id`` now (Redis's clock stamps its beat, and its start
        once), its record expiring ``keep_s`` seconds on: one script call per shard."""
        store = self.store
        fields = [v for field, value in record.items() for v in (field, value)]

        def beat_everywhere() -> None:  # one script call per shard, on its own keys
            for j in range(len(store.shards)):
                args = [store.key(keys.PROC, shard=j), process_id, int(keep_s * 1000), *fields]
                own = [store.key(keys.PROCS, shard=j), store.key(keys.PROC, process_id, shard=j)]
                self._beat(keys=own, args=args)

        store.retrying(beat_everywhere)

    def heard_of(self) -> list[ProcessRecord]:
        """Every process the crawl has heard from lately, with what its record says."""
        store = self.store
        ids = replies.texts(
            store.retrying(lambda: store._client.zrange(store.key(keys.PROCS), 0, -1))
        )

        def read() -> list[Any]:  # a new pipeline per try: a failed execute empties it
            pipe = store._client.pipeline(transaction=False)
            for process_id in ids:
                pipe.hmget(store.key(keys.PROC, process_id), "host", "pid", "state")
            return pipe.execute()

        return [
            ProcessRecord(process_id, host, int(pid) if pid else None, state)
            for process_id, (host, pid, state) in zip(ids, store.retrying(read), strict=True)
        ]

    def forget(self, ids: Iterable[str]) -> None:
        """Delete the records of processes ``ids``, on every shard."""
        store = self.store
        for process_id in ids:
            for j in range(len(store.shards)):
                store.retrying(
                    partial(store._client.delete, store.key(keys.PROC, process_id, shard=j))
                )
