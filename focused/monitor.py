"""What ``focused status`` shows: a crawl's queue depth and harvest, read from Redis alone.

Any number of crawler processes may be running; the monitor only reads (``reset`` deletes).
"""

from __future__ import annotations

from typing import Any

import redis

from focused import keys

WINDOWS = (100, 1000)


def crawl_names(client: redis.Redis) -> list[str]:
    """Names of the crawls that have state in this Redis."""
    stats_key = keys.prefix("*") + keys.STATS
    head, tail = stats_key.split("*")
    return sorted(key[len(head) : -len(tail)] for key in client.scan_iter(stats_key, count=1000))


def crawl_status(client: redis.Redis, crawl: str) -> dict[str, Any]:
    """Queue depth and harvest of one crawl (an empty dict if Redis has nothing of it)."""
    prefix = keys.prefix(crawl)
    pipe = client.pipeline(transaction=False)
    pipe.hgetall(prefix + keys.STATS)
    pipe.zcard(prefix + keys.LEASES)
    pipe.zcard(prefix + keys.READY)
    pipe.zcard(prefix + keys.WAIT)
    pipe.hlen(prefix + keys.CRAWLED)
    pipe.lrange(prefix + keys.RECENT, 0, max(WINDOWS) - 1)
    stats, in_flight, ready, waiting, hosts, recent = pipe.execute()
    if not stats and not in_flight:
        return {}
    counts = {name: float(value) for name, value in stats.items()}
    classified = counts.get("classified", 0)
    status: dict[str, Any] = {
        "crawl": crawl,
        "queued": int(counts.get("queued", 0)),
        "in_flight": in_flight,
        "seen": int(counts.get("seen", 0)),
        "fetched": int(counts.get("fetched", 0)),
        "classified": int(classified),
        "relevant": int(counts.get("relevant", 0)),
        "bad": int(counts.get("bad", 0)),
        "failed": int(counts.get("failed", 0)),
        "hosts_ready": ready,
        "hosts_waiting": waiting,
        "hosts_crawled": hosts,
        "harvest": round(counts.get("relevant", 0) / classified, 4) if classified else None,
        "mean_relevance": round(counts.get("relevance_sum", 0) / classified, 4)
        if classified
        else None,
    }
    values = [float(r) for r in recent]
    for window in WINDOWS:
        last = values[:window]
        status[f"harvest_{window}"] = round(sum(last) / len(last), 4) if last else None
    return status


def format_status(status: dict[str, Any]) -> str:
    """The status as aligned lines for people."""

    def show(value: Any) -> str:
        return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)

    rows = [
        ("crawl", status["crawl"]),
        ("frontier (queued)", status["queued"]),
        ("in flight (leased)", status["in_flight"]),
        ("seen URLs", status["seen"]),
        ("fetched", status["fetched"]),
        ("relevant", status["relevant"]),
        ("bad pages / failed", f"{status['bad']} / {status['failed']}"),
        ("harvest (relevant/classified)", show(status["harvest"])),
        ("harvest rate, mean R, last 100", show(status["harvest_100"])),
        ("harvest rate, mean R, last 1000", show(status["harvest_1000"])),
        (
            "hosts ready / waiting / crawled",
            f"{status['hosts_ready']} / {status['hosts_waiting']} / {status['hosts_crawled']}",
        ),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {show(value)}" for name, value in rows)


def reset_crawl(client: redis.Redis, crawl: str) -> int:
    """Delete every key of one crawl (and nothing else); returns how many were deleted."""
    deleted = 0
    batch: list[str] = []
    for key in client.scan_iter(keys.crawl_pattern(crawl), count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            deleted += client.unlink(*batch)
            batch.clear()
    if batch:
        deleted += client.unlink(*batch)
    return deleted
