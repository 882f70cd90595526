"""The evaluation's results: averages over topics, terminal tables (rich) and the JSON file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from focused.lab.evaluation.coverage import average_coverage
from focused.lab.evaluation.score import BINS, ece

__all__ = [
    "MEASURES",
    "SHOWN_KS",
    "averages",
    "calibration_k",
    "coverage_tables",
    "not_run_lines",
    "shown_ks",
    "tables",
    "verdict_tables",
    "write_json",
]

MEASURES = ("harvest", "own_harvest", "calibration_gap", "recall", "of_oracle", "similarity")
# The figures of a crawl's verdicts (score.measure); None where undefined on a topic (no AUC
# when one class is absent, no ECE without a scored page), left out of that k's mean.
VERDICT_MEASURES = (
    "verdict_precision",
    "verdict_recall",
    "verdict_f1",
    "ece",
    "auc",
    "best_f1",
    "unscored",
)
# The k of the tables (the "every method at 100, 250 and 1000 pages"), and of them the
# ones where the share of the oracle is shown: small topics run out of relevant pages long
# before 1000, and every crawler's share tends to 1 as the oracle runs dry.
SHOWN_KS = (100, 250, 1000)
ORACLE_KS = (100, 250)
# The k of the own harvest and its gap to the true one: the goal is a gap of at most 0.10 there.
CALIBRATION_K = 250


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 4)


def _shared_ks(rows: Sequence[dict[str, Any]], measure: str) -> list[str]:
    """The k every row has ``measure`` at, in order (none without rows)."""
    ks = set.intersection(*(set(r.get(measure, {})) for r in rows)) if rows else set()
    return sorted(ks, key=int)


def pool_reliability(tables: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One reliability table (score.reliability_bins) of the pages of several: per bin, the
    pages and relevant pages summed, and the mean score over all its pages (from each table's
    rounded mean: to 1e-4)."""
    pooled = []
    for b in range(BINS):
        pages = sum(t[b]["pages"] for t in tables)
        relevant = sum(t[b]["relevant"] for t in tables)
        total = sum(t[b]["predicted"] * t[b]["pages"] for t in tables if t[b]["pages"])
        pooled.append(
            {
                "pages": pages,
                "relevant": relevant,
                "predicted": round(total / pages, 4) if pages else None,
                "share": round(relevant / pages, 4) if pages else None,
            }
        )
    return pooled


def _verdict_averages(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The verdict figures of ``rows`` (one crawler's topics): each VERDICT_MEASURES at each k,
    the mean over the topics where it is defined (None if on none); the reliability tables
    pooled over the topics, with the pooled table's ECE (``ece_pooled``); the score they read
    (``reliability_of``: "mixed" if the topics' feeds differ, None without verdicts)."""
    figures: dict[str, Any] = {}
    for measure in VERDICT_MEASURES:
        figures[measure] = {}
        for k in _shared_ks(rows, measure):
            values = [r[measure][k] for r in rows if r[measure][k] is not None]
            figures[measure][k] = _mean(values) if values else None
    ks = _shared_ks(rows, "reliability")
    figures["reliability"] = {k: pool_reliability([r["reliability"][k] for r in rows]) for k in ks}
    figures["ece_pooled"] = {k: ece(table) for k, table in figures["reliability"].items()}
    read = {r["reliability_of"] for r in rows if r.get("reliability_of")}
    figures["reliability_of"] = read.pop() if len(read) == 1 else "mixed" if read else None
    return figures


def averages(topics: list[dict[str, Any]], crawlers: Sequence[str]) -> dict[str, Any]:
    """Per crawler, each measure at each k averaged over the topics it ran in (``topics``:
    how many; a topic where it could not run holds ``error``), a k only if every such topic
    has it (a crawl that stopped early, or a topic the oracle finds nothing in by k, leaves
    k out); and the mean CPU seconds per page and pages per second of the real crawls.

    The calibration gap is likewise a mean over topics of each topic's |own harvest - harvest|,
    not the gap between the means, so that errors of opposite sign do not cancel.

    The share of the oracle is a mean of ratios: over topics, the mean of (targets the crawler
    found in its first k counted pages / targets the oracle found in its first k), each ratio
    computed per topic by ``score.measure``; not the ratio of the sums.

    The verdict figures (precision, recall and F1 of the pages the crawler called relevant,
    the ECE, AUC and best F1 of its score) are means over topics too, where defined; the
    reliability table is pooled over the topics (:func:`_verdict_averages`).

    A crawler whose crawls estimated what is left to find has ``coverage``, the means of their
    estimates' figures (:func:`~focused.lab.evaluation.coverage.average_coverage`).
    """
    out: dict[str, Any] = {}
    for name in crawlers:
        rows = [t["crawlers"][name] for t in topics if "error" not in t["crawlers"][name]]
        figures: dict[str, Any] = {"topics": len(rows)}
        for measure in MEASURES:
            figures[measure] = {
                k: _mean([r[measure][k] for r in rows]) for k in _shared_ks(rows, measure)
            }
        figures |= _verdict_averages(rows)
        for key in ("cpu_per_page", "pages_per_s", "hubs_on_topic"):
            values = [r[key] for r in rows if r.get(key) is not None]
            figures[key] = _mean(values) if values and len(values) == len(rows) else None
        if all("dead" in r for r in rows):
            figures |= _spent_averages(rows)
        if (coverage := average_coverage(rows)) is not None:
            figures["coverage"] = coverage
        out[name] = figures
    return out


def _spent_averages(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the crawls paid, by k every topic reached: ``fetches`` and ``dead`` (fetches that
    were no page, mostly 404s), means over the topics, and ``dead_per_found``, the topics'
    dead fetches over the relevant pages they found (pooled: a topic that found nothing
    still counts its dead fetches); None where nothing was found."""
    spent: dict[str, Any] = {"fetches": {}, "dead": {}, "dead_per_found": {}}
    for k in _shared_ks(rows, "dead"):
        spent["fetches"][k] = _mean([r["fetches"][k] for r in rows])
        spent["dead"][k] = _mean([r["dead"][k] for r in rows])
        found = sum(r["found_curve"][int(k) - 1] for r in rows)
        dead = sum(r["dead"][k] for r in rows)
        spent["dead_per_found"][k] = round(dead / found, 2) if found else None
    return spent


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}".removeprefix("0")


def shown_ks(ks: Sequence[int]) -> tuple[list[str], list[str]]:
    """The k (as strings) of the tables for a run that counted up to ``ks[-1]`` pages: those
    of SHOWN_KS reached, and the last k if it is not one of them; and the k of the share of
    the oracle: those of ORACLE_KS reached, else the last k."""
    last = max(ks)
    harvest = [k for k in SHOWN_KS if k <= last]
    if last not in SHOWN_KS:
        harvest.append(last)
    oracle = [k for k in ORACLE_KS if k <= last] or [last]
    return [str(k) for k in harvest], [str(k) for k in oracle]


def calibration_k(ks: Sequence[int]) -> str:
    """The k (as a string) of the own harvest and calibration gap columns: CALIBRATION_K if the
    run reached it, else its last k."""
    return str(CALIBRATION_K if CALIBRATION_K in ks else max(ks))


def not_run_lines(result: dict[str, Any]) -> list[str]:
    """One line per crawler that could not run on some topic: where, and why."""
    lines = []
    n = len(result["topics"])
    for name, reasons in result.get("not_run", {}).items():
        first = next(iter(reasons.values()))
        where = "any topic" if len(reasons) == n else f"{len(reasons)} of {n} topics"
        lines.append(f"{name}: not run on {where}: {first}")
    return lines


# How the tables name the topics of each task set (focused.lab.evaluation.tasks.TASK_SETS).
_TOPICS = {
    "development": "development topics",
    "validation": "validation categories",
    "categories": "given categories",
}
# Column headers of the measures whose names do not read well as they are.
_HEADERS = {"own_harvest": "own harvest", "calibration_gap": "calibration gap"}
# More crawlers than this: the per-topic table shows one k, so that it fits a terminal.
_WIDE = 4


def tables(result: dict[str, Any]) -> list[Table]:
    """Harvest per topic and crawler; the averages of every measure, one row per crawler
    (the compact table to compare methods); topic difficulty; the crawlers' verdicts against
    the labels (:func:`verdict_tables`); and where crawlers estimated
    what is left to find, the estimates against the truth and the stop they drive
    (:func:`coverage_tables`). Crawlers that ran on no topic are left out (``not_run_lines``
    says why)."""
    average = result["average"]
    crawlers = [n for n in result["crawlers"] if average[n].get("topics", 1)]
    ks = [str(k) for k in result["ks"]]
    shown, oracle_ks = shown_ks(result["ks"])
    per_topic_ks = shown if len(crawlers) <= _WIDE else shown[:1]
    topics = _TOPICS[result.get("task_set", "development")]
    per_topic = Table(
        title=f"Harvest@{' / '.join(per_topic_ks)}, {topics} (seeds, training not counted)"
    )
    per_topic.add_column("topic", no_wrap=True)
    for name in crawlers:
        per_topic.add_column(name, justify="right", style="bold" if name == "taxonomy" else None)

    def cell(figures: dict[str, Any]) -> str:
        if "error" in figures:
            return "not run"
        return " / ".join(_figure(figures["harvest"].get(k)) for k in per_topic_ks)

    for topic in result["topics"]:
        per_topic.add_row(topic["category"], *(cell(topic["crawlers"][n]) for n in crawlers))
    per_topic.add_row("average", *(cell(average[n]) for n in crawlers), style="bold")

    summary = Table(
        title=f"Averages over {len(result['topics'])} {topics} (of_oracle: mean over topics"
        " of found / the oracle's found, by k; own harvest: share the crawler itself called"
        " relevant; calibration gap: mean over topics of |own harvest - harvest|)"
    )
    summary.add_column("crawler", no_wrap=True)
    own_k = calibration_k(result["ks"])
    columns = [("harvest", k) for k in shown]
    columns += [("own_harvest", own_k), ("calibration_gap", own_k)]
    columns += [("of_oracle", k) for k in oracle_ks]
    columns += [("recall", ks[-1]), ("similarity", ks[-1])]
    for measure, k in columns:
        summary.add_column(f"{_HEADERS.get(measure, measure)}\n@{k}", justify="right")
    last = ks[-1]
    spent = any(average[n].get("dead", {}).get(last) for n in crawlers)
    if spent:  # a web with dead links: what the pages cost
        summary.add_column(f"fetches\nspent\n@{last}", justify="right")
        summary.add_column(f"dead\nfetches\n@{last}", justify="right")
        summary.add_column(f"dead per\nrelevant\n@{last}", justify="right")
    summary.add_column("CPU ms\n/fetch", justify="right")
    summary.add_column("pages\n/s", justify="right")
    summary.add_column("top 10 hubs\non topic", justify="right")
    for name in crawlers:
        figures = average[name]
        cpu, rate = figures["cpu_per_page"], figures["pages_per_s"]
        hubs = figures.get("hubs_on_topic")
        costs = []
        if spent:
            costs = [_number(figures.get(m, {}).get(last)) for m in ("fetches", "dead")]
            costs.append(_number(figures.get("dead_per_found", {}).get(last)))
        summary.add_row(
            name,
            *(_figure(figures[m].get(k)) for m, k in columns),
            *costs,
            "-" if cpu is None else f"{cpu * 1000:.1f}",
            "-" if rate is None else f"{rate:.1f}",
            "-" if hubs is None else f"{hubs:.1f}",
        )

    hardness = Table(title="Topic difficulty")
    for column in ("topic", "targets", "popularity", "cohesive", "authority", "seed sim"):
        hardness.add_column(column, justify="left" if column == "topic" else "right")
    for topic in result["topics"]:
        d = topic["difficulty"]
        hardness.add_row(
            topic["category"],
            str(d["targets"]),
            *(
                f"{d[key]:.3f}"
                for key in (
                    "popularity",
                    "cohesiveness",
                    "authoritativeness",
                    "seed_target_similarity",
                )
            ),
        )
    return [per_topic, summary, hardness, *verdict_tables(result), *coverage_tables(result)]


# How the tables name the feed's score: a calibrated probability, or R.
_SCORES = {"probability": "p", "relevance": "R", "mixed": "p, R"}


def verdict_tables(result: dict[str, Any]) -> list[Table]:
    """The crawlers' verdicts against the labels, means over the topics: at each shown k, the
    precision, recall and F1 of the pages each called relevant, next to its own harvest and
    calibration gap, and the ECE, AUC and best F1 of its score; and at the calibration k,
    the reliability table of that score pooled over the topics. None if no crawler has
    verdicts (the oracle has none)."""
    average = result["average"]
    crawlers = [n for n in result["crawlers"] if average[n].get("verdict_f1")]
    if not crawlers:
        return []
    topics = _TOPICS[result.get("task_set", "development")]
    shown, _ = shown_ks(result["ks"])
    verdicts = Table(
        title=f"Verdicts against the labels, means over {topics} (P, R, F1: of the pages the"
        " feed marks relevant; score: the feed's probability p, else its R; ECE of the score,"
        " per topic and of the pooled table; best F1: the best threshold on the score,"
        " knowing the labels)"
    )
    headers = ["crawler", "k", "own\nharvest", "calibration\ngap", "P", "R", "F1", "score"]
    headers += ["ECE", "pooled\nECE", "AUC", "best\nF1", "unscored"]
    for header in headers:
        verdicts.add_column(header, justify="left" if header == "crawler" else "right")
    measures = ("own_harvest", "calibration_gap", "verdict_precision", "verdict_recall")
    for name in crawlers:
        figures = average[name]
        score = _SCORES.get(figures["reliability_of"] or "", "-")
        reached = [k for k in shown if k in figures["verdict_f1"]]
        for i, k in enumerate(reached):
            unscored = figures["unscored"].get(k)
            verdicts.add_row(
                name if i == 0 else "",
                k,
                *(_figure(figures[m].get(k)) for m in (*measures, "verdict_f1")),
                score,
                *(_figure(figures[m].get(k)) for m in ("ece", "ece_pooled", "auc", "best_f1")),
                _number(unscored),
                end_section=k == reached[-1],
            )
    k = calibration_k(result["ks"])
    reliability = Table(
        title=f"Reliability of the score at {k} pages, pooled over {topics}: per bin, the mean"
        " score / the share truly relevant (pages)"
    )
    reliability.add_column("score", no_wrap=True)
    for name in crawlers:
        score = _SCORES.get(average[name]["reliability_of"] or "", "-")
        reliability.add_column(f"{name} ({score})", justify="right")
    tables_at = [average[name]["reliability"].get(k) for name in crawlers]
    for b in range(BINS):
        cells = []
        for table in tables_at:
            at = table[b] if table else None
            cells.append(
                "-"
                if not at or not at["pages"]
                else f"{_figure(at['predicted'])} / {_figure(at['share'])} ({at['pages']})"
            )
        reliability.add_row(f"{b / BINS:.1f}-{(b + 1) / BINS:.1f}", *cells)
    return [verdicts, reliability]


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def coverage_tables(result: dict[str, Any]) -> list[Table]:
    """The crawlers' estimates of the relevant pages left, averaged over the topics, against
    the truth, per crawler and checkpoint (none if no estimate was near one); and the stop
    they drive, per crawler and share. None if no crawler estimated."""
    average = result["average"]
    crawlers = [n for n in result["crawlers"] if average[n].get("coverage")]
    if not crawlers:
        return []
    topics = _TOPICS[result.get("task_set", "development")]
    estimates = Table(
        title=f"Relevant pages left, estimated and true, means over {topics} (truth: reachable"
        " from the frontier without fetched pages; queued: in the frontier; hold: share of"
        " 90 % intervals holding the truth)"
    )
    for column in ("crawler", "k", "estimate", "truth", "queued", "|error|", "hold", "topics"):
        estimates.add_column(column, justify="left" if column == "crawler" else "right")
    stops = Table(
        title=f"The stop (FOCUSED_CLOSE_COVERED) simulated on the estimates, means over {topics}"
        " (recall: targets found / the oracle's at the budget)"
    )
    columns = ("crawler", "share", "stops at", "savings", "recall", "at budget", "stopped")
    for column in columns:
        stops.add_column(column, justify="left" if column == "crawler" else "right")
    for name in crawlers:
        coverage = average[name]["coverage"]
        for k, at in coverage["checkpoints"].items():
            estimates.add_row(
                name,
                k,
                _number(at["left"]),
                _number(at["truth_left"]),
                _number(at["truth_queued"]),
                _number(at["abs_error"]),
                _figure(at["holds"]),
                str(at["topics"]),
            )
        for share, at in coverage["stop"].items():
            stops.add_row(
                name,
                share,
                _number(at["pages"], 0),
                _figure(at["savings"]),
                _figure(at["recall"]),
                _figure(at["recall_budget"]),
                f"{at['stopped']}/{at['topics']}",
            )
    return [estimates, stops] if estimates.rows else [stops]


def write_json(result: dict[str, Any], path: Path) -> Path:
    """The whole result, curves included, as one JSON file."""
    path.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return path
