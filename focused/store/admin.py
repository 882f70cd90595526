"""A crawl's administration: resetting it (``focused reset``), the pages it keeps known across
resets, and its claim on a topic file (which file, deciding what, a crawl belongs to).

A reset deletes every key of one crawl, its other shards' included, and nothing else; the CLI
refuses it while processes of the crawl are running (:func:`running_processes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from focused.store import keys, replies
from focused.store.crawl import CrawlStore

if TYPE_CHECKING:
    import redis
    from redis.cluster import RedisCluster
    from redis.typing import EncodableT, FieldT

#: Keys a reset deletes per call, fields of known pages it writes back per call.
DELETE_BATCH = 1000
KNOWN_BATCH = 10_000


def known_pages(client: redis.Redis | RedisCluster, crawl: str) -> dict[str, str]:
    """What a crawl knows of the pages it fetched, for its next run: URL fingerprint ->
    ``"<text checksum> TAB <Last-Modified>"`` (either may be empty), earlier runs' included."""
    store = CrawlStore(client, crawl)
    known: dict[str, str] = {}
    sums: dict[str, str] = {}
    modified: dict[str, str] = {}
    for j in range(len(store.shards)):  # every shard's part (focused.store.shards)
        known.update(client.hscan_iter(store.key(keys.KNOWN, shard=j), count=1000))
        checksums = client.hscan_iter(store.key(keys.CHECKSUMS, shard=j), count=1000)
        sums.update((fp, checksum) for checksum, fp in checksums)
        modified.update(client.hscan_iter(store.key(keys.MODIFIED, shard=j), count=1000))
    for fp in sums.keys() | modified.keys():
        known[fp] = f"{sums.get(fp, '')}\t{modified.get(fp, '')}"
    return known


def known_count(client: redis.Redis | RedisCluster, crawl: str) -> int:
    """How many pages a reset crawl keeps known (:func:`reset_crawl` with ``keep_known``)."""
    store = CrawlStore(client, crawl)
    return sum(client.hlen(store.key(keys.KNOWN, shard=j)) for j in range(len(store.shards)))


def running_processes(client: redis.Redis | RedisCluster, crawl: str) -> list[str]:
    """Ids of the crawl's processes whose heartbeat records say they are running (a killed or
    hung process's record expires within three beats, so it is not among them)."""
    store = CrawlStore(client, crawl)
    # shard 0's: every process beats there
    ids = replies.texts(client.zrange(store.key(keys.PROCS), 0, -1))
    pipe = client.pipeline(transaction=False)
    for process_id in ids:
        pipe.hget(store.key(keys.PROC, process_id), "state")
    states = pipe.execute() if ids else []
    return [i for i, state in zip(ids, states, strict=True) if state == "running"]


def has_keys(client: redis.Redis | RedisCluster, crawl: str) -> bool:
    """Whether Redis holds any key of the crawl (its shards' included)."""
    return any(
        next(client.scan_iter(pattern, count=1000), None) is not None
        for pattern in keys.crawl_patterns(crawl)
    )


def reset_crawl(client: redis.Redis | RedisCluster, crawl: str, keep_known: bool = False) -> int:
    """Delete every key of one crawl (and nothing else); returns how many were deleted.

    With ``keep_known`` the pages it fetched stay known (:func:`known_pages`), so that its next
    run skips those that come back unchanged (Badia et al. 2006; ``pipelines/duplicates.py``), and
    their WARC response records stay known too (``warc``), for the revisit records of that run;
    on a cluster the crawl's ``shards`` stay, whose ``known`` hold them.
    """
    store = CrawlStore(client, crawl)
    known = known_pages(client, crawl) if keep_known else {}
    # The shards' list stays with what they keep known (focused.store.shards).
    kept = {store.key(keys.WARC), store.key(keys.SHARDS)} if keep_known else set()
    deleted = 0
    batch: list[str] = []
    for pattern in keys.crawl_patterns(crawl):  # its own keys and its other shards'
        for key in client.scan_iter(pattern, count=1000):
            if key in kept:
                continue
            batch.append(key)
            if len(batch) >= DELETE_BATCH:
                deleted += client.unlink(*batch)
                batch.clear()
    if batch:
        deleted += client.unlink(*batch)
    by_shard: dict[int, list[tuple[str, str]]] = {}
    for fp, entry in known.items():  # in its fingerprint's shard (focused.store.shards)
        by_shard.setdefault(store.shards.of_fingerprint(int(fp)), []).append((fp, entry))
    for j, items in by_shard.items():
        for start in range(0, len(items), KNOWN_BATCH):
            part: dict[FieldT, EncodableT] = dict(items[start : start + KNOWN_BATCH])
            client.hset(store.key(keys.KNOWN, shard=j), mapping=part)
    return deleted


def claim_topic(store: CrawlStore, topic_file: str, decided: str) -> tuple[str, str]:
    """Record the topic file a crawl starts from and what it decides (``decided``, JSON) unless
    the crawl has them already, and return those it has: (topic file, decisions)."""
    key = store.key(keys.META)

    def claim() -> list[Any]:  # a new pipeline per try: a failed execute empties it
        pipe = store._client.pipeline(transaction=False)
        pipe.hsetnx(key, "topic", topic_file)
        # Also for a crawl recorded before crawls kept their decisions: this file's are kept.
        pipe.hsetnx(key, "decisions", decided)
        pipe.hmget(key, "topic", "decisions")
        return pipe.execute()

    started, before = store.retrying(claim)[-1]
    return started, before


def record_claim(store: CrawlStore, topic_file: str, decided: str) -> None:
    """Record the topic file and decisions a crawl now goes on with, in place of its own."""
    record: dict[FieldT, EncodableT] = {"topic": topic_file, "decisions": decided}
    store.retrying(lambda: store._client.hset(store.key(keys.META), mapping=record))


def record_settings(store: CrawlStore, settings: Mapping[str, str | int | float]) -> None:
    """Record what the crawl's readers judge it by (its focus, threshold, alarm limits...) in
    its ``meta``, for ``focused status`` and the others (:mod:`focused.store.reads`)."""
    record: dict[FieldT, EncodableT] = {name: v for name, v in settings.items()}
    store.retrying(lambda: store._client.hset(store.key(keys.META), mapping=record))
