"""Learning in Redis: a light topic's (:class:`LearningStore`) and the online link model's
(:class:`LinkLog`).

A light topic learns from the crawl-wide sample of classified pages, and each refit's examples
are published, from which every process of the crawl fits the same model.

Every process adds the pages it classifies to one list (newest first, trimmed to the last
``sample`` entries); the process that refits (under the crawl's lock, :class:`PeriodicJob`)
reads the whole list, files its pages as examples and publishes them with a new generation
number; every process, itself included, sees the number change and fits its own copy from the
published examples. Fitting from examples is deterministic, so all processes score alike, and a
process that starts late or restarts picks the last generation up at once.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from focused.store import keys

if TYPE_CHECKING:
    from collections.abc import Callable

    from redis.typing import EncodableT, FieldT

    from focused.store.crawl import CrawlStore
    from focused.store.lock import Lease
    from focused.store.periodic import PeriodicJob

T = TypeVar("T")

__all__ = ["Generation", "LearningState", "LearningStore", "LinkLog", "SampledPage"]


@dataclass(frozen=True)
class SampledPage:
    """A classified page as the learning sample keeps it."""

    relevance: float
    depth: int
    text: str


@dataclass(frozen=True)
class Generation:
    """One refit: the examples (texts and their categories), the page count it was made at,
    and what the topic now weighs most."""

    number: int
    pages: int
    texts: list[str]
    labels: list[str]
    top_words: list[str]
    positive: int
    negative: int


@dataclass(frozen=True)
class LearningState:
    """What a process reads every second: pages fetched crawl-wide, and the last refit's
    generation number and page count."""

    fetched: int
    generation: int
    pages: int


class LearningStore:
    """The learning keys of one crawl (:mod:`focused.store.keys`), through its CrawlStore."""

    def __init__(self, store: CrawlStore, sample: int):
        self.store = store
        self.sample = sample

    def add(self, pages: Sequence[SampledPage]) -> None:
        """Add classified pages to the sample, dropping the oldest beyond ``sample``."""
        if not pages:
            return
        key = self.store.key(keys.LEARN_PAGES)
        entries = [json.dumps([round(p.relevance, 4), p.depth, p.text]) for p in pages]

        def write() -> None:
            pipe = self.store._client.pipeline(transaction=False)
            pipe.lpush(key, *entries)
            pipe.ltrim(key, 0, self.sample - 1)
            pipe.execute()

        self.store.retrying(write)

    def pages(self) -> list[SampledPage]:
        """The sample, oldest first."""
        key = self.store.key(keys.LEARN_PAGES)
        entries = self.store.retrying(lambda: self.store._client.lrange(key, 0, -1))
        return [SampledPage(float(r), int(d), t) for r, d, t in map(json.loads, reversed(entries))]

    def state(self) -> LearningState:
        """Pages fetched crawl-wide (every shard counts its own) and the last refit's."""
        store = self.store

        def read() -> list[Any]:
            pipe = store._client.pipeline(transaction=False)
            for j in range(len(store.shards)):
                pipe.hget(store.key(keys.STATS, shard=j), "fetched")
            pipe.hmget(store.key(keys.LEARNED), "generation", "pages")
            return pipe.execute()

        *fetched, (generation, pages) = store.retrying(read)
        return LearningState(
            sum(int(n or 0) for n in fetched), int(generation or 0), int(pages or 0)
        )

    def publish(
        self,
        pages: int,
        texts: Sequence[str],
        labels: Sequence[str],
        top_words: Iterable[str],
        positive: int,
        negative: int,
        lease: Lease,
    ) -> int:
        """Publish a refit's examples as the next generation; returns its number. Only while
        ``lease`` (of ``learn:lock``) is the refit's (LockLost): a refit paused past it would
        publish an older sample over the one refitted meanwhile, and every process refits
        from what is published."""
        blob = zlib.compress(json.dumps([list(texts), list(labels)]).encode("utf-8"))
        record: dict[FieldT, EncodableT] = {
            "pages": pages,
            "time": round(time.time(), 3),
            "top": json.dumps(list(top_words)),
            "positive": positive,
            "negative": negative,
        }
        hash_key, examples = self.store.key(keys.LEARNED), self.store.key(keys.LEARNED_EXAMPLES)
        fields = [v for name, value in record.items() for v in (name, value)]
        writes: list[tuple[EncodableT, ...]] = [
            ("SET", examples, blob),
            ("HSET", hash_key, *fields),
            ("HINCRBY", hash_key, "generation", 1),
        ]
        return int(self.store.fenced(lease, writes))

    def postpone(self, pages: int, lease: Lease, *, refused: bool = False) -> None:
        """Count the next refit from ``pages`` on without publishing one: too early, or
        ``refused`` as drift (counted). Only while ``lease`` (of ``learn:lock``) is the
        refit's (LockLost): one paused past it would set the count back."""
        hash_key = self.store.key(keys.LEARNED)
        writes: list[tuple[EncodableT, ...]] = (
            [("HINCRBY", hash_key, "refused", 1)] if refused else []
        )
        self.store.fenced(lease, [*writes, ("HSET", hash_key, "pages", pages)])

    def refit_job(
        self, job: Callable[..., T | None], *, lock_s: float, **periodic: Any
    ) -> PeriodicJob[T]:
        """``job`` as the crawl's refit, one process at a time under ``learn:lock``
        (:meth:`CrawlStore.periodic`)."""
        return self.store.periodic(
            "Refitting the topic", job, lock=keys.LEARN_LOCK, lock_s=lock_s, **periodic
        )

    def generation(self) -> Generation | None:
        """The last refit's examples (None before the first)."""
        hash_key, examples = self.store.key(keys.LEARNED), self.store.key(keys.LEARNED_EXAMPLES)

        def read() -> list[Any]:
            pipe = self.store._binary.pipeline(transaction=True)
            pipe.hgetall(hash_key)
            pipe.get(examples)
            return pipe.execute()

        record, blob = self.store.retrying(read)
        if not blob or b"generation" not in record:
            return None
        texts, labels = json.loads(zlib.decompress(blob))
        return Generation(
            int(record[b"generation"]),
            int(record.get(b"pages", 0)),
            texts,
            labels,
            json.loads(record.get(b"top", b"[]")),
            int(record.get(b"positive", 0)),
            int(record.get(b"negative", 0)),
        )


class LinkLog:
    """The online link model's training log (``linklog``): one entry a classified page, in
    the order the crawl's processes appended them, which every process replays."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.key = store.key(keys.LINK_LOG)

    def append_and_read(self, entries: Sequence[str], start: int) -> list[str]:
        """Append ``entries`` (none: only read), then read the log from entry ``start`` on,
        in one atomic round trip."""

        def append_and_read() -> list[Any]:
            pipe = self.store._client.pipeline(transaction=True)
            if entries:
                pipe.rpush(self.key, *entries)
            pipe.lrange(self.key, start, -1)
            return pipe.execute()

        return self.store.retrying(append_and_read)[-1]
