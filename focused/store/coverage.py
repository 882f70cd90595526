"""The crawl's estimates of what is left to find, in Redis: the last one (``coverage``), every
one (``coverage:log``, the last :data:`LOG_LEN`), and the lock of the one process estimating
(``coverage:lock``). The coverage monitor (:mod:`focused.extensions.coverage`) writes them; the
crawl's processes, ``focused status``, the dashboard, the exporter and ``focused evaluate``
read them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from focused.store import keys
from focused.store.crawl import CrawlStore
from focused.store.periodic import PeriodicJob

if TYPE_CHECKING:
    from focused.store.lock import Lease

T = TypeVar("T")
LOG_LEN = 1000


class CoverageStore:
    """A crawl's coverage records, through its :class:`CrawlStore` (its retries)."""

    def __init__(self, store: CrawlStore):
        self.store = store

    def progress(self) -> tuple[int, float, dict[str, str]]:
        """(pages fetched and relevant pages found crawl-wide, the sum of the pages' found
        shares, the last estimate's record), in one round trip."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for shard in range(len(store.shards)):  # each shard counts its own pages
                pipe.hmget(store.key(keys.STATS, shard=shard), "fetched", "found")
            pipe.hgetall(store.key(keys.COVERAGE))
            return pipe.execute()

        *counts, last = store.retrying(read)
        fetched = sum(int(n or 0) for n, _ in counts)
        found = sum(float(r or 0) for _, r in counts)
        return fetched, found, last

    def latest(self) -> dict[str, Any]:
        """The last estimate's record, its values decoded (empty before the first)."""
        store = self.store
        return coverage_record(
            store.retrying(lambda: store._client.hgetall(store.key(keys.COVERAGE)))
        )

    def record(self, estimate: Mapping[str, Any], lease: Lease) -> None:
        """Keep an estimate as the last one and in the log, at once, only while ``lease`` (of
        ``coverage:lock``) is the estimate's: one made by a process paused past it would
        replace a newer one, which the stop on coverage reads (LockLost)."""
        store = self.store
        key, log = store.key(keys.COVERAGE), store.key(keys.COVERAGE_LOG)
        fields = (v for name, value in estimate.items() for v in (name, json.dumps(value)))
        store.fenced(
            lease,
            [
                ("DEL", key),
                ("HSET", key, *fields),
                ("RPUSH", log, json.dumps(estimate, separators=(",", ":"))),
                ("LTRIM", log, -LOG_LEN, -1),
            ],
        )

    def recent(self, count: int) -> list[dict[str, Any]]:
        """The last ``count`` estimates, oldest first."""
        store = self.store
        key = store.key(keys.COVERAGE_LOG)
        entries = store.retrying(lambda: store._client.lrange(key, -count, -1))
        return [json.loads(entry) for entry in entries]

    def history(self) -> list[dict[str, Any]]:
        """Every estimate kept, oldest first."""
        store = self.store
        entries = store.retrying(lambda: store._client.lrange(store.key(keys.COVERAGE_LOG), 0, -1))
        return [json.loads(entry) for entry in entries]

    def job(
        self, job: Callable[..., T | None], *, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as the crawl's estimate, one process at a time under ``coverage:lock``
        (:meth:`CrawlStore.periodic`)."""
        return self.store.periodic(
            "Coverage estimate", job, lock=keys.COVERAGE_LOCK, lock_s=lock_s, **periodic
        )


def coverage_record(fields: Mapping[Any, Any]) -> dict[str, Any]:
    """The last estimate as the ``coverage`` hash holds it, its values decoded."""
    return {name: json.loads(value) for name, value in fields.items()}
