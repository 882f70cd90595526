"""What ``focused status`` and ``report``, the dashboard and the exporter show: the picture of
a crawl, read from Redis alone.

**Harvest** is the share of classified pages that are relevant (R at or above the crawl's
threshold): cumulatively, or over the last 100 or 1,000 classified pages. The mean of R over
the same pages is the **mean relevance**. Any number of crawler processes and of readers may
run at once; readers only read (``reset`` deletes).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from focused.monitor.coverage import NEXT, Coverage
from focused.printable import printable
from focused.settings import defaults

if TYPE_CHECKING:
    from focused.store.reads import DetailRecords, Reader, StatusRecords

WINDOWS = (100, 1000)
# The census's category of pages that have none (a topic without categories: all its pages), as
# the frontier's acknowledgement writes it.
NO_CATEGORY = "-"
# The frontier's budgets, as its stats name them (held/<budget>): a host's, its domain's pages,
# its domain's hosts.
BUDGETS = ("host", "domain", "hosts")
# Scrapy stats of the defences on out-links: the scope rules' (then the rule) and the cap's.
OUT_OF_SCOPE = "focused/links/out_of_scope/"
LINKS_CAPPED = "focused/links/capped"
RENDERED = "focused/render/pages"
RENDERED_BY = "focused/render/reason/"
RENDER_REASONS = ("always", "little_text", "host")
RENDER_HOSTS = "focused/render/hosts_flagged"
LANGUAGE = "focused/language/"  # pages by language; LANGUAGE + "off_topic": those kept out
OFF_LANGUAGE = LANGUAGE + "off_topic"
# Fields of a process's heartbeat record (``proc:<id>``) that are numbers.
PROCESS_NUMBERS = (
    "pid",
    "started",
    "beat",
    "pages",
    "items",
    "relevant",
    "pages_per_s",
    "items_per_s",
    "page_limit",
    "item_limit",
)


@dataclass(frozen=True)
class Alarm:
    """A monitoring alarm of Chakrabarti et al. 1999, §4 (``stagnation`` or ``diffusion``), or
    the notice that the topic looks covered (``covered``), and why; ``level`` is ``warning``
    for an alarm, ``notice`` for news that is not bad."""

    name: str
    message: str
    level: str = "warning"


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
    coverage: Coverage | None = None,
) -> list[Alarm]:
    """The alarms a crawl's figures raise (the crawl's extension and the readers agree).

    Exhausted, a notice: the frontier ran dry, every URL in reach fetched (a site crawled to its
    end is no fault). Stagnation: under hard focus the harvest of the last 100 pages fell below
    ``stagnation_harvest``. Diffusion: under any other strategy the last 100
    pages' harvest fell below ``diffusion_ratio`` times the last 1,000's, the crawl drifting
    into less relevant pages, while the best queued URLs are expected to do better (by the
    last estimate of what is left, ``coverage``, when there is one); when they are not, the
    topic looks covered: the notice ``covered`` instead. None is raised before ``min_pages``
    pages.
    """
    raised = []
    if frontier_empty and pages:
        raised.append(
            Alarm(
                "exhausted",
                f"the frontier ran dry after {pages} pages: every URL in reach was fetched. "
                "To find more, add seeds (focused seed) or widen the topic",
                "notice",
            )
        )
    if pages < min_pages or harvest_100 is None or harvest_1000 is None:
        return raised
    if focus == "hard" and harvest_100 < stagnation_harvest:
        raised.append(
            Alarm(
                "stagnation",
                f"harvest {harvest_100:.3f} over the last 100 pages is below "
                f"{stagnation_harvest} after {pages} pages (hard focus)",
            )
        )
    if focus != "hard" and harvest_100 < diffusion_ratio * harvest_1000:
        fell = (
            f"harvest {harvest_100:.3f} over the last 100 pages is below "
            f"{diffusion_ratio} x {harvest_1000:.3f} over the last 1000 after {pages} pages"
        )
        outlook = coverage.next_harvest if coverage is not None else None
        if coverage is not None and (outlook or 0.0) < diffusion_ratio * harvest_1000:
            raised.append(
                Alarm(
                    "covered",
                    f"{fell}, and the best {NEXT} queued URLs are expected to hold "
                    f"{coverage.next:.1f} relevant pages: the topic looks covered "
                    f"({coverage.found:.0f} relevant found of about {coverage.in_reach:.0f} in "
                    "reach). To find more, add seeds (focused seed) or widen the topic",
                    "notice",
                )
            )
        else:
            best = (
                f"; the best {NEXT} queued URLs are still expected to hold "
                f"{coverage.next:.1f} relevant pages"
                if coverage is not None
                else ""
            )
            raised.append(
                Alarm(
                    "diffusion",
                    f"{fell} ({'soft focus' if focus == 'soft' else focus} drifting{best})",
                )
            )
    return raised


def _number(text: str) -> int | float | str:
    """A value read from Redis as an int or a float when it is one."""
    try:
        value = float(text)
    except ValueError:
        return text
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _share(part: float, whole: float) -> float | None:
    return round(part / whole, 4) if whole else None


def _distill_record(raw: dict[str, str]) -> dict[str, Any] | None:
    """The distiller's last run (``distill`` hash), its top hubs and authorities as lists."""
    if "time" not in raw:
        return None
    record: dict[str, Any] = {
        name: _number(value) for name, value in raw.items() if not name.startswith("top_")
    }
    for name in ("top_hubs", "top_authorities"):
        record[name] = [{"url": url, "score": s} for url, s in json.loads(raw.get(name, "[]"))]
    return record


def _learned_record(raw: dict[str, str]) -> dict[str, Any] | None:
    """A light topic's last refit (``learned`` hash), its top words as a list; None before
    any refit was tried."""
    if not raw:
        return None
    record: dict[str, Any] = {name: _number(value) for name, value in raw.items() if name != "top"}
    record["top"] = json.loads(raw.get("top", "[]"))
    return record


def crawl_status(reader: Reader, crawl: str) -> dict[str, Any]:
    """Queue depth, counts, harvest, alarms and the distiller's last run of one crawl, in one
    round trip (an empty dict if Redis has nothing of it). Per-shard figures are added up."""
    return status_figures(crawl, reader.status(crawl, max(WINDOWS)))


def status_figures(crawl: str, records: StatusRecords) -> dict[str, Any]:
    """A crawl's status (:func:`crawl_status`) from its records."""
    if records.empty:
        return {}
    counts, meta, in_flight = records.counts, records.meta, records.in_flight
    classified = int(counts.get("classified", 0))
    distill = _distill_record(records.distill)
    status: dict[str, Any] = {
        "crawl": crawl,
        "focus": meta.get("focus", "soft"),
        "queued": int(counts.get("queued", 0)),
        "in_flight": in_flight,
        "seen": int(counts.get("seen", 0)),
        "fetched": int(counts.get("fetched", 0)),
        "classified": classified,
        "relevant": int(counts.get("relevant", 0)),
        "bad": int(counts.get("bad", 0)),
        "duplicate": int(counts.get("duplicate", 0)),
        "failed": int(counts.get("failed", 0)),
        # best-N-first: queued URLs dropped for good beyond the frontier's cap (MAX_BUFFER)
        "dropped_buffer": int(counts.get("dropped/buffer", 0)),
        "hosts_ready": records.hosts_ready,
        "hosts_waiting": records.hosts_waiting,
        "hosts_crawled": int(counts.get("hosts", 0)),
        # the budgets: hosts held now (over a budget, with URLs queued), hosts put on hold by
        # each budget (held/<budget>: host, domain, hosts), URLs dropped by the host-queue cap
        "hosts_held": records.hosts_held,
        "held": {budget: int(counts.get(f"held/{budget}", 0)) for budget in BUDGETS},
        "dropped_host_queue": int(counts.get("dropped/host_queue", 0)),
        "harvest": _share(counts.get("relevant", 0), classified),
        "mean_relevance": _share(counts.get("relevance_sum", 0), classified),
        # the distiller's last run: at how many fetched pages, its top hub, what it re-boosted
        "distill": distill,
        "distilled_at": distill["fetched"] if distill else None,
        "top_hub": distill["top_hubs"][0]["url"] if distill and distill["top_hubs"] else None,
        "reboosted": int(counts.get("reboosted", 0)),
        # a light topic learning itself: its last refit (generation, at how many fetched pages,
        # when, its top words, refits refused) and the queued URLs scored again
        "learned": _learned_record(records.learned),
        "rescored": int(counts.get("rescored", 0)),
        # maintenance mode: known pages queued again, and those that came back unchanged
        "revisits": int(counts.get("revisits", 0)),
        "unchanged": int(counts.get("unchanged", 0)),
        # the last estimate of what is left to find (focused.monitor.coverage), if any
        "coverage": records.coverage or None,
    }
    # The threshold the crawl judges pages by (its harvest monitor records it): without it
    # the last pages' R values say nothing of their harvest.
    threshold = float(meta["threshold"]) if "threshold" in meta else None
    values = [float(r) for r in records.recent]
    for window in WINDOWS:
        last = values[:window]
        relevant = sum(r >= threshold for r in last) if threshold is not None else None
        status[f"harvest_{window}"] = _share(relevant, len(last)) if relevant is not None else None
        status[f"mean_relevance_{window}"] = _share(sum(last), len(last))
    coverage = Coverage.from_record(records.coverage) if records.coverage else None
    status["alarms"] = [
        {"name": alarm.name, "message": alarm.message, "level": alarm.level}
        for alarm in alarms(
            status["focus"],
            status["harvest_100"],
            status["harvest_1000"],
            classified,
            status["queued"] == 0 and in_flight == 0,
            min_pages=int(meta.get("alarm_min_pages", defaults.FOCUSED_ALARM_MIN_PAGES)),
            diffusion_ratio=float(meta.get("diffusion_ratio", defaults.FOCUSED_DIFFUSION_RATIO)),
            stagnation_harvest=float(
                meta.get("stagnation_harvest", defaults.FOCUSED_STAGNATION_HARVEST)
            ),
            coverage=coverage,
        )
    ]
    return status


def _process(process_id: str, record: dict[str, str], now: float) -> dict[str, Any]:
    """One process's heartbeat record, with its age, whether it is alive and its time left."""
    process: dict[str, Any] = {"id": process_id, **record}
    for name in PROCESS_NUMBERS:
        process[name] = _number(record.get(name, "0"))
    process["alive"] = process["state"] == "running"  # the record expires three beats on
    process["beat_age"] = round(max(0.0, now - process["beat"]), 1)
    # Counted from now, not from the last beat: the process went on at its rate since.
    left = [
        (limit - done) / rate - process["beat_age"]
        for limit, done, rate in (
            (process["page_limit"], process["pages"], process["pages_per_s"]),
            (process["item_limit"], process["items"], process["items_per_s"]),
        )
        if limit and rate > 0
    ]
    process["time_left"] = round(max(0.0, min(left)), 1) if left and process["alive"] else None
    return process


def _curve(curve: Mapping[str, float], status: dict[str, Any], step: int) -> list[dict[str, Any]]:
    """The harvest curve: after every 100 classified pages (from the ``curve`` buckets) and at
    the last one, the harvest of the last 100 and 1,000 pages and the mean relevance of the
    last 100. On S shards each shard's buckets are added up: a point every ``step`` = S·100
    pages, its windows at least that long."""
    classified = status["classified"]
    points: list[dict[str, Any]] = []
    pages: list[int] = []
    relevant: list[int] = []
    for bucket in range((classified + step - 1) // step):
        pages.append(min(classified - bucket * step, step))
        relevant.append(int(curve.get(f"relevant:{bucket}", 0)))
        point: dict[str, Any] = {"pages": bucket * step + pages[-1]}
        for window in WINDOWS:
            first = max(0, bucket + 1 - max(1, window // step))  # a bucket at least
            point[f"harvest_{window}"] = _share(sum(relevant[first:]), sum(pages[first:]))
        point["mean_relevance"] = _share(float(curve.get(f"relevance:{bucket}", 0)), pages[-1])
        points.append(point)
    if points and pages[-1] < step and status["harvest_100"] is not None:
        # A bucket under way: the last pages' windows come whole from their R values.
        points[-1].update({f"harvest_{w}": status[f"harvest_{w}"] for w in WINDOWS})
        points[-1]["mean_relevance"] = status[f"mean_relevance_{WINDOWS[0]}"]
    return points


def crawl_snapshot(reader: Reader, crawl: str) -> dict[str, Any]:
    """The whole picture of one crawl, as JSON-able values (empty if Redis has nothing of it).

    :func:`crawl_status` and its state (running, finished or stopped), the processes of its
    heartbeats, pages/s and time left to their page or item limits, the census per category,
    the num_tries histogram, the harvest curve and the crawl-wide Scrapy stats. ``focused
    status`` and ``report``, the dashboard and the exporter all show this. Three pipelined
    round trips; times are Redis's clock, which the heartbeats also use.
    """
    records, details = reader.snapshot(crawl, max(WINDOWS))
    status = status_figures(crawl, records)
    if details is None:
        return {}
    return snapshot_figures(status, details)


def snapshot_figures(status: dict[str, Any], details: DetailRecords) -> dict[str, Any]:
    """A crawl's snapshot (:func:`crawl_snapshot`) from its status and its other records."""
    now, scrapy = details.time, details.scrapy
    processes = sorted(
        (_process(i, record, now) for i, record in details.processes.items()),
        key=lambda p: p["started"],
    )
    alive = [p for p in processes if p["alive"]]
    # A hung process is neither alive nor ended: its record has no finish reason.
    ended = sorted((p for p in processes if p["state"] == "finished"), key=lambda p: p["beat"])
    reason = ended[-1].get("reason", "") if ended else scrapy.get("finish_reason")
    left = [p["time_left"] for p in alive]
    census, tries = details.census, details.tries
    return {
        **status,
        "time": round(now, 3),
        "state": "running" if alive else "finished" if reason else "stopped",
        "finish_reason": None if alive else reason,
        "alive": len(alive),
        "pages_per_s": round(sum(p["pages_per_s"] for p in alive), 3),
        "time_left": max(left) if left and None not in left else None,
        "processes": processes,
        "census": dict(sorted(((c, int(n)) for c, n in census.items()), key=lambda x: -x[1])),
        "tries": {int(t): int(n) for t, n in sorted(tries.items(), key=lambda x: int(x[0]))},
        "curve": _curve(details.curve, status, details.curve_step),
        "scrapy": {name: _number(value) for name, value in sorted(scrapy.items())},
        # the scope rules on out-links (by rule) and the cap on a page's out-links, counted by
        # the processes in their Scrapy stats
        "out_of_scope": {
            name.removeprefix(OUT_OF_SCOPE): int(float(value))
            for name, value in sorted(scrapy.items())
            if name.startswith(OUT_OF_SCOPE)
        },
        "links_capped": int(float(scrapy.get(LINKS_CAPPED, 0))),
        # pages fetched in the browser (FOCUSED_RENDER), by reason, and hosts flagged for it
        "rendered": int(float(scrapy.get(RENDERED, 0))),
        "rendered_by": {
            reason: int(float(scrapy.get(RENDERED_BY + reason, 0))) for reason in RENDER_REASONS
        },
        "render_hosts": int(float(scrapy.get(RENDER_HOSTS, 0))),
        # pages by language, most first, and those kept out of a topic's languages
        "languages": dict(
            sorted(
                (
                    (name.removeprefix(LANGUAGE), int(float(value)))
                    for name, value in scrapy.items()
                    if name.startswith(LANGUAGE) and name != OFF_LANGUAGE
                ),
                key=lambda x: -x[1],
            )
        ),
        "off_language": int(float(scrapy.get(OFF_LANGUAGE, 0))),
    }


def crawl_snapshots(reader: Reader) -> list[dict[str, Any]]:
    """The picture of every crawl in this Redis (the dashboard's and the exporter's)."""
    return [s for s in (crawl_snapshot(reader, name) for name in reader.crawl_names()) if s]


def plot_harvest(curves: dict[str, list[tuple[int, float]]], path: str | Path, title: str) -> Path:
    """A PNG of harvest curves: for each crawl, (pages fetched, harvest) points."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(7, 4), dpi=100)
    for label, points in curves.items():
        axes.plot([x for x, _ in points], [y for _, y in points], label=label, marker=".")
    axes.set(xlabel="pages fetched", ylabel="harvest (share relevant)", ylim=(0, 1.02), title=title)
    axes.grid(alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    pyplot.close(figure)
    return Path(path)


def duration(seconds: float | None) -> str:
    """Seconds for people: ``45 s``, ``3 min 05 s``, ``2 h 10 min`` (``-`` for None)."""
    if seconds is None:
        return "-"
    s = round(seconds)
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


def _show(value: Any) -> str:
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def format_process(process: dict[str, Any]) -> str:
    """One line for a process of the crawl: id, state, figures, rate and limit. Its count is of
    responses, robots.txt files and redirects included (what ``CLOSESPIDER_PAGECOUNT`` counts,
    so that its time left is right), not of the pages the crawl's ``fetched`` counts."""
    state = process["state"]
    if state == "finished":
        state = f"finished ({process.get('reason', '')})"
    line = (
        f"{process['id']}  {state}  {process['pages']} responses, {process['items']} items, "
        f"{process['relevant']} relevant"
    )
    if process["alive"]:
        line += f", {process['pages_per_s']:.1f} pages/s"
    limits = [
        f"{limit} {what}"
        for limit, what in ((process["page_limit"], "pages"), (process["item_limit"], "items"))
        if limit
    ]
    if limits:
        line += f"; limit {' and '.join(limits)}"
        if process["time_left"] is not None:
            line += f", {duration(process['time_left'])} left"
    return line


def _learned_rows(snapshot: dict[str, Any]) -> list[tuple[str, Any]]:
    """The status rows of a topic that learns itself (none for others)."""
    learned = snapshot["learned"]
    if learned is None:
        return []
    refits = f"generation {learned.get('generation', 0)}, {learned.get('refused', 0)} refused"
    if "time" in learned:
        refits += f", {duration(snapshot['time'] - learned['time'])} ago"
    return [
        ("topic refitted at (pages)", f"{learned.get('pages', 0)} ({refits})"),
        ("topic weighs most", ", ".join(learned["top"]) or "-"),
        ("queued URLs scored again", snapshot["rescored"]),
    ]


def _render_rows(snapshot: dict[str, Any]) -> list[tuple[str, Any]]:
    """The status row of a crawl that fetched pages in the browser (none for others): ``12
    (always 0, little text 9, host 3); 1 host flagged``."""
    if not snapshot["rendered"] and not snapshot["render_hosts"]:
        return []
    by = ", ".join(
        f"{reason.replace('_', ' ')} {snapshot['rendered_by'][reason]}" for reason in RENDER_REASONS
    )
    flagged = snapshot["render_hosts"]
    hosts = f"{flagged} host{'' if flagged == 1 else 's'} flagged"
    return [("rendered pages", f"{snapshot['rendered']} ({by}); {hosts}")]


def _language_rows(snapshot: dict[str, Any]) -> list[tuple[str, Any]]:
    """The status row of a crawl that identified languages (none for others): ``en 120, de 40
    (38)``, pages by language, then those kept out."""
    if not snapshot["languages"]:
        return []
    languages = ", ".join(f"{code} {n}" for code, n in snapshot["languages"].items())
    kept_out = f" ({snapshot['off_language']})" if snapshot["off_language"] else ""
    return [("pages by language (kept out)", languages + kept_out)]


def _coverage_rows(snapshot: dict[str, Any]) -> list[tuple[str, Any]]:
    """The status rows of the last estimate of what is left to find: ``216 / 222 (216-233) at
    412 pages``, relevant pages found and in reach with its 90 % interval, and what the best
    queued URLs are expected to hold ("-" before the first estimate)."""
    record = snapshot["coverage"]
    if not record:
        return [
            ("relevant found / est. in reach", "-"),
            (f"best {NEXT} queued, relevant", "-"),
        ]
    c = Coverage.from_record(record)
    sample = f", {record['hosts']} hosts sampled" if c.sampled else ""
    return [
        (
            "relevant found / est. in reach",
            f"{c.found:.0f} / {c.in_reach:.0f} ({c.found + c.low:.0f}-{c.found + c.high:.0f}) "
            f"at {record['pages']} pages{sample}",
        ),
        (f"best {NEXT} queued, relevant", f"{c.next:.1f} expected"),
    ]


def status_rows(snapshot: dict[str, Any]) -> list[tuple[str, Any]]:
    """The lines of ``focused status`` as (label, value), in order; the reference page of the
    status output (docs/reference/status.md) explains each label, and a test holds it to these."""
    state = snapshot["state"]
    if state == "running":
        state += f", {snapshot['alive']} process{'es' if snapshot['alive'] > 1 else ''} alive"
    elif snapshot["finish_reason"]:
        state += f" ({snapshot['finish_reason']})"
    windows = " / ".join(str(w) for w in WINDOWS)
    scope = ", ".join(f"{rule} {n}" for rule, n in snapshot["out_of_scope"].items())
    return [
        ("crawl", snapshot["crawl"]),
        ("state", state),
        ("frontier (queued)", snapshot["queued"]),
        ("in flight (leased)", snapshot["in_flight"]),
        ("seen URLs", snapshot["seen"]),
        ("fetched", snapshot["fetched"]),
        ("relevant", snapshot["relevant"]),
        (
            "bad pages / duplicates / failed",
            f"{snapshot['bad']} / {snapshot['duplicate']} / {snapshot['failed']}",
        ),
        ("dropped (frontier full)", snapshot["dropped_buffer"]),
        (
            "hosts held now",
            f"{snapshot['hosts_held']} (put on hold by budget: "
            + ", ".join(f"{budget} {snapshot['held'][budget]}" for budget in BUDGETS)
            + ")",
        ),
        ("dropped (host queue full)", snapshot["dropped_host_queue"]),
        ("links out of scope / capped", f"{scope or 0} / {snapshot['links_capped']}"),
        ("harvest (relevant share)", _show(snapshot["harvest"])),
        (
            f"harvest, last {windows}",
            " / ".join(_show(snapshot[f"harvest_{w}"]) for w in WINDOWS),
        ),
        (
            f"mean relevance, last {windows}",
            " / ".join(_show(snapshot[f"mean_relevance_{w}"]) for w in WINDOWS),
        ),
        *_coverage_rows(snapshot),
        ("pages/s", f"{snapshot['pages_per_s']:.1f}"),
        ("time left (to page/item limit)", duration(snapshot["time_left"])),
        (
            "hosts ready / waiting / crawled",
            f"{snapshot['hosts_ready']} / {snapshot['hosts_waiting']} / "
            f"{snapshot['hosts_crawled']}",
        ),
        ("distilled at (fetched pages)", snapshot["distilled_at"]),
        ("top hub", snapshot["top_hub"]),
        ("re-boosted URLs", snapshot["reboosted"]),
        *_learned_rows(snapshot),
        ("revisits queued / unchanged", f"{snapshot['revisits']} / {snapshot['unchanged']}"),
        *_render_rows(snapshot),
        *_language_rows(snapshot),
        ("processes alive", f"{snapshot['alive']} of {len(snapshot['processes'])} recorded"),
    ]


def format_status(snapshot: dict[str, Any]) -> str:
    """A crawl's snapshot (:func:`crawl_snapshot`) as aligned lines for people, then a line
    per process; no control character from a page or from Redis reaches the terminal."""
    rows = status_rows(snapshot)
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {_show(value)}" for name, value in rows]
    lines += [f"  {format_process(p)}" for p in snapshot["processes"]]
    return printable("\n".join(lines), lines=True)


def _tries(failed: int) -> str:
    """A row of the num_tries histogram in words: a URL of 0 tries was fetched at the first."""
    if failed == 0:
        return "at the first try"
    return f"after {failed} failed tr{'y' if failed == 1 else 'ies'}"


def format_report(report: dict[str, Any], top: int = 15) -> str:
    """A snapshot as a report for people: status, alarms, census, num_tries, harvest curve
    (no control character in it, as in :func:`format_status`)."""
    lines = [format_status(report), "", "alarms:"]
    lines += [f"  {a['name']}: {a['message']}" for a in report["alarms"]] or ["  none"]
    lines += ["", f"census of classified pages by best category (top {top}):"]
    if set(report["census"]) == {NO_CATEGORY}:
        lines.append("  none: the topic has no categories")
    else:
        for category, count in list(report["census"].items())[:top]:
            name = "(no category)" if category == NO_CATEGORY else category
            lines.append(f"  {count:>8}  {name}")
    lines += ["", "URLs acknowledged, by failed tries before (num_tries):"]
    lines += [f"  {count:>8}  {_tries(tries)}" for tries, count in report["tries"].items()]
    lines += ["", "harvest curve:  pages  harvest, last 100  last 1000  mean relevance, last 100"]
    lines += [
        f"  {p['pages']:>13}  {p['harvest_100']:>17.3f}  {p['harvest_1000']:>9.3f}  "
        f"{p['mean_relevance']:>26.3f}"
        for p in report["curve"]
    ]
    if report.get("plot"):
        lines += ["", f"harvest curve plotted in {report['plot']}"]
    return printable("\n".join(lines), lines=True)
