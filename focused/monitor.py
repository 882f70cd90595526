"""What ``focused status`` shows: a crawl's queue depth and harvest, read from Redis alone.

Any number of crawler processes may be running; the monitor only reads (``reset`` deletes).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis

from focused import keys

WINDOWS = (100, 1000)


@dataclass(frozen=True)
class Alarm:
    """A monitoring alarm of seed 000 §4: ``stagnation`` or ``diffusion``, and why."""

    name: str
    message: str


def alarms(
    focus: str,
    harvest_100: float | None,
    harvest_1000: float | None,
    pages: int,
    frontier_empty: bool,
    *,
    min_pages: int,
    diffusion_ratio: float,
    stagnation_harvest: float,
) -> list[Alarm]:
    """The alarms a crawl's figures raise (the crawl's extension and ``focused report`` agree).

    Stagnation: the frontier ran dry, or under hard focus the harvest rate of the last 100
    pages fell below ``stagnation_harvest``. Diffusion: under soft focus the last 100 pages'
    harvest rate fell below ``diffusion_ratio`` times the last 1,000's, the crawl drifting
    into less relevant pages. Neither is raised before ``min_pages`` pages.
    """
    raised = []
    if frontier_empty and pages:
        raised.append(Alarm("stagnation", f"the frontier ran dry after {pages} pages"))
    if pages < min_pages or harvest_100 is None or harvest_1000 is None:
        return raised
    if focus == "hard" and harvest_100 < stagnation_harvest:
        raised.append(
            Alarm(
                "stagnation",
                f"harvest rate {harvest_100:.3f} over the last 100 pages is below "
                f"{stagnation_harvest} after {pages} pages (hard focus)",
            )
        )
    if focus != "hard" and harvest_100 < diffusion_ratio * harvest_1000:
        raised.append(
            Alarm(
                "diffusion",
                f"harvest rate {harvest_100:.3f} over the last 100 pages is below "
                f"{diffusion_ratio} x {harvest_1000:.3f} over the last 1000 after {pages} pages "
                "(soft focus drifting)",
            )
        )
    return raised


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
    pipe.hgetall(prefix + keys.DISTILL)
    stats, in_flight, ready, waiting, hosts, recent, distilled = pipe.execute()
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
        "duplicate": int(counts.get("duplicate", 0)),
        "failed": int(counts.get("failed", 0)),
        "hosts_ready": ready,
        "hosts_waiting": waiting,
        "hosts_crawled": hosts,
        "harvest": round(counts.get("relevant", 0) / classified, 4) if classified else None,
        "mean_relevance": round(counts.get("relevance_sum", 0) / classified, 4)
        if classified
        else None,
        # the distiller's last run: at how many fetched pages, its top hub, what it re-boosted
        "distilled_at": int(distilled["fetched"]) if distilled else None,
        "top_hub": distilled.get("top_hub") or None,
        "reboosted": int(counts.get("reboosted", 0)),
        # maintenance mode: known pages queued again, and those that came back unchanged
        "revisits": int(counts.get("revisits", 0)),
        "unchanged": int(counts.get("unchanged", 0)),
    }
    values = [float(r) for r in recent]
    for window in WINDOWS:
        last = values[:window]
        status[f"harvest_{window}"] = round(sum(last) / len(last), 4) if last else None
    return status


def crawl_report(client: redis.Redis, crawl: str) -> dict[str, Any]:
    """Status plus the census per category, the num_tries histogram and the harvest curve."""
    prefix = keys.prefix(crawl)
    status = crawl_status(client, crawl)
    if not status:
        return {}
    pipe = client.pipeline(transaction=False)
    pipe.hgetall(prefix + keys.CENSUS)
    pipe.hgetall(prefix + keys.TRIES)
    pipe.hgetall(prefix + keys.CURVE)
    pipe.hgetall(prefix + keys.META)
    census, tries, curve, meta = pipe.execute()
    classified = status["classified"]
    points = []
    for bucket in range((classified + keys.CURVE_BUCKET - 1) // keys.CURVE_BUCKET):
        pages = min(classified - bucket * keys.CURVE_BUCKET, keys.CURVE_BUCKET)
        points.append(
            {
                "pages": bucket * keys.CURVE_BUCKET + pages,
                "harvest": round(float(curve.get(f"relevance:{bucket}", 0)) / pages, 4),
                "relevant_share": round(int(curve.get(f"relevant:{bucket}", 0)) / pages, 4),
            }
        )
    return {
        **status,
        "focus": meta.get("focus", "soft"),
        "census": dict(sorted(((c, int(n)) for c, n in census.items()), key=lambda x: -x[1])),
        "tries": {int(t): int(n) for t, n in sorted(tries.items(), key=lambda x: int(x[0]))},
        "curve": points,
    }


def plot_harvest(curves: dict[str, list[tuple[int, float]]], path: str | Path, title: str) -> Path:
    """A PNG of harvest curves: for each crawl, (pages fetched, harvest rate) points."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(7, 4), dpi=100)
    for label, points in curves.items():
        axes.plot([x for x, _ in points], [y for _, y in points], label=label, marker=".")
    axes.set(xlabel="pages fetched", ylabel="harvest rate", ylim=(0, 1.02), title=title)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    return Path(path)


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
        (
            "bad pages / duplicates / failed",
            f"{status['bad']} / {status['duplicate']} / {status['failed']}",
        ),
        ("harvest (relevant/classified)", show(status["harvest"])),
        ("harvest rate, mean R, last 100", show(status["harvest_100"])),
        ("harvest rate, mean R, last 1000", show(status["harvest_1000"])),
        (
            "hosts ready / waiting / crawled",
            f"{status['hosts_ready']} / {status['hosts_waiting']} / {status['hosts_crawled']}",
        ),
        ("distilled at (fetched pages)", status["distilled_at"]),
        ("top hub", status["top_hub"]),
        ("re-boosted URLs", status["reboosted"]),
        ("revisits queued / unchanged", f"{status['revisits']} / {status['unchanged']}"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {show(value)}" for name, value in rows)


def format_report(report: dict[str, Any], top: int = 15) -> str:
    """The report as text for people: status, alarms, census, num_tries, harvest curve."""
    lines = [format_status(report), "", "alarms:"]
    lines += [f"  {a['name']}: {a['message']}" for a in report["alarms"]] or ["  none"]
    lines += ["", f"census of classified pages by best category (top {top}):"]
    for category, count in list(report["census"].items())[:top]:
        lines.append(f"  {count:>8}  {category}")
    lines += ["", "num_tries of acknowledged URLs:"]
    lines += [f"  {tries} tries: {count}" for tries, count in report["tries"].items()]
    lines += ["", "harvest curve (per 100 pages):  pages  mean R  relevant share"]
    lines += [
        f"  {p['pages']:>28}  {p['harvest']:.3f}   {p['relevant_share']:.3f}"
        for p in report["curve"]
    ]
    if report.get("plot"):
        lines += ["", f"harvest curve plotted in {report['plot']}"]
    return "\n".join(lines)


def known_pages(client: redis.Redis, crawl: str) -> dict[str, str]:
    """What a crawl knows of the pages it fetched, for its next run: URL fingerprint ->
    ``"<text checksum> TAB <Last-Modified>"`` (either may be empty), earlier runs' included."""
    prefix = keys.prefix(crawl)
    known = dict(client.hscan_iter(prefix + keys.KNOWN, count=1000))
    sums = {fp: checksum for checksum, fp in client.hscan_iter(prefix + keys.CHECKSUMS, count=1000)}
    modified = dict(client.hscan_iter(prefix + keys.MODIFIED, count=1000))
    for fp in sums.keys() | modified.keys():
        known[fp] = f"{sums.get(fp, '')}\t{modified.get(fp, '')}"
    return known


def reset_crawl(client: redis.Redis, crawl: str, keep_known: bool = False) -> int:
    """Delete every key of one crawl (and nothing else); returns how many were deleted.

    With ``keep_known`` the pages it fetched stay known (:func:`known_pages`), so that its next
    run skips those that come back unchanged (seed 004; ``pipelines/duplicates.py``).
    """
    known = known_pages(client, crawl) if keep_known else {}
    deleted = 0
    batch: list[str] = []
    for key in client.scan_iter(keys.crawl_pattern(crawl), count=1000):
        batch.append(key)
        if len(batch) >= 1000:
            deleted += client.unlink(*batch)
            batch.clear()
    if batch:
        deleted += client.unlink(*batch)
    items = list(known.items())
    for start in range(0, len(items), 10_000):
        client.hset(keys.prefix(crawl) + keys.KNOWN, mapping=dict(items[start : start + 10_000]))
    return deleted
