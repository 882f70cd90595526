"""The crawl's estimate of what is left to find, and the stop it drives, against the labels.

A crawl records an estimate every FOCUSED_COVERAGE_PAGES pages it fetches
(:mod:`focused.extensions.coverage`): relevant pages found, and those expected among its queued
URLs (``left``, a 90 % interval ``low``-``high``). The truth it estimates, at k fetched pages,
is read from the link graph: the fetched pages F_k are the first k of the served order, the
frontier Q_k the pages they link to outside F_k, and what is left the relevant pages reachable
from Q_k without passing through F_k (the crawl fetches a page once, so a path through F_k is
one it has already walked). A crawl can reach no more than that, and it can be more than the
queued relevant pages alone, which is what the estimate's own model counts.

The stop (FOCUSED_CLOSE_COVERED) changes nothing before it fires, so a crawl without it says
where one with it would have stopped: :func:`simulated_stop` walks its estimates as the coverage
monitor does. Pure functions of the served order, the graph, the labels and the estimates.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from focused.lab.evaluation.score import KS
from focused.monitor.coverage import Coverage
from focused.settings import defaults

__all__ = [
    "SHARES",
    "Truth",
    "average_coverage",
    "coverage_figures",
    "fetched_at",
    "nearest_estimate",
    "simulated_stop",
    "truth_at",
]

#: The shares of the relevant pages in reach at which the stop is simulated.
SHARES = (0.8, 0.9, 0.95)
#: How far (a share of k) the estimate scored at checkpoint k may be from it.
TOLERANCE = 0.25


@dataclass(frozen=True)
class Truth:
    """What the labels say of a crawl after its first k fetched pages: relevant pages among
    them (``found``), among the pages they link to (``queued``), and reachable from those
    without passing through a fetched page (``left``; ``queued`` included)."""

    found: int
    queued: int
    left: int


def truth_at(
    links: Mapping[str, Sequence[str]], order: Sequence[str], relevant: Collection[str], k: int
) -> Truth:
    """The truth after the first ``k`` pages of ``order`` (URL keys in fetch order): a
    breadth-first search over ``links`` from the pages they link to, never entering them."""
    fetched = set(order[:k])
    frontier = {link for key in fetched for link in links.get(key, ()) if link not in fetched}
    reached, todo = set(frontier), deque(frontier)
    while todo:
        for link in links.get(todo.popleft(), ()):
            if link not in fetched and link not in reached:
                reached.add(link)
                todo.append(link)
    return Truth(
        found=sum(key in relevant for key in fetched),
        queued=sum(key in relevant for key in frontier),
        left=sum(key in relevant for key in reached),
    )


def nearest_estimate(
    history: Sequence[Mapping[str, Any]], k: int, tolerance: float = TOLERANCE
) -> Mapping[str, Any] | None:
    """The estimate made nearest ``k`` fetched pages (the earlier of two as near), or None if
    none was made within ``tolerance`` · k of it."""
    near = [record for record in history if abs(record["pages"] - k) <= tolerance * k]
    return min(near, key=lambda record: (abs(record["pages"] - k), record["pages"]), default=None)


def simulated_stop(
    history: Sequence[Mapping[str, Any]], share: float, close_pages: int
) -> int | None:
    """The fetched pages at which a crawl with FOCUSED_CLOSE_COVERED = ``share`` would have
    stopped, from its estimates in order: the first estimate at P pages such that every
    estimate since the one at S ≤ P - ``close_pages`` says it is covered; None if none."""
    since = None
    for record in history:
        if not Coverage.from_record(record).covered(share):
            since = None
            continue
        since = record["pages"] if since is None else since
        if record["pages"] - since >= close_pages:
            return record["pages"]
    return None


def fetched_at(order: Sequence[str], skip: Collection[str], pages: int) -> int:
    """How many pages of ``order`` a crawl had fetched when it reached ``pages`` counted ones
    (not in ``skip``): where the evaluation's budget ends it, in the estimates' unit."""
    counted = 0
    for fetched, key in enumerate(order, 1):
        counted += key not in skip
        if counted == pages:
            return fetched
    return len(order)


def _ratio(found: int, of: int) -> float | None:
    return round(found / of, 4) if of else None


def coverage_figures(
    links: Mapping[str, Sequence[str]],
    order: Sequence[str],
    relevant: Collection[str],
    targets: Collection[str],
    skip: Collection[str],
    history: Sequence[Mapping[str, Any]],
    pages: int,
    oracle_found: int,
    *,
    shares: Sequence[float] = SHARES,
    close_pages: int = defaults.FOCUSED_CLOSE_COVERED_PAGES,
) -> dict[str, Any] | None:
    """The estimates of one crawl (``history``, oldest first) against the labels, or None if
    it made none.

    ``order``: the served order (every page fetched, seeds included, as the estimates count);
    ``relevant``: every page labelled relevant (what the crawl's own ``found`` counts);
    ``targets``: those that count (``skip``: seeds, training pages); ``pages``: the evaluation's
    budget of counted pages; ``oracle_found``: the oracle's targets within it.

    - ``checkpoints``, by k of KS up to the budget: the estimate made nearest k fetched pages
      (:func:`nearest_estimate`), its ``pages``, ``found``, ``left``, ``low`` and ``high``;
      the truth then (:func:`truth_at` on ``relevant``): ``true_found``, ``truth_queued``,
      ``truth_left``; ``error`` = left - truth_left, and whether the interval ``holds`` it;
    - ``stop``: ``budget``, the fetched pages where ``pages`` ends the crawl; ``recall_budget``,
      its targets then / ``oracle_found``; per share of ``shares`` (:func:`simulated_stop`,
      ``close_pages``): the fetched ``pages`` where it stops (the budget if it does not before),
      whether it ``stopped``, the ``savings`` (1 - pages / budget) and the ``recall`` then.
    """
    if not history:
        return None
    budget = fetched_at(order, skip, pages)
    checkpoints = {}
    for k in (k for k in KS if k <= budget):
        record = nearest_estimate(history, k)
        if record is None:
            continue
        truth = truth_at(links, order, relevant, record["pages"])
        checkpoints[str(k)] = {
            "pages": record["pages"],
            "found": record["found"],
            "left": record["left"],
            "low": record["low"],
            "high": record["high"],
            "true_found": truth.found,
            "truth_queued": truth.queued,
            "truth_left": truth.left,
            "error": round(record["left"] - truth.left, 2),
            "holds": record["low"] <= truth.left <= record["high"],
        }
    stops = {}
    for share in shares:
        stop = simulated_stop(history, share, close_pages)
        end = stop if stop is not None and stop < budget else budget
        stops[str(share)] = {
            "pages": end,
            "stopped": end < budget,
            "savings": round(1 - end / budget, 4) if budget else 0.0,
            "recall": _ratio(sum(key in targets for key in order[:end]), oracle_found),
        }
    return {
        "checkpoints": checkpoints,
        "stop": {
            "budget": budget,
            "close_pages": close_pages,
            "recall_budget": _ratio(sum(key in targets for key in order[:budget]), oracle_found),
            "shares": stops,
        },
    }


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known), 4) if known else None


def average_coverage(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The means over topics of one crawler's coverage figures (``rows``: its figures per topic,
    :func:`coverage_figures`), each over the topics that have it (``topics``: how many), or None
    if it has none: per checkpoint the estimate ``left``, ``truth_left``, ``truth_queued``, the
    mean absolute error and the share of intervals that hold the truth; per share the stop
    ``pages``, ``savings``, ``recall``, ``recall_budget`` and how many topics ``stopped``."""
    coverage = [row["coverage"] for row in rows if row.get("coverage")]
    if not coverage:
        return None
    checkpoints = {}
    for k in sorted({k for c in coverage for k in c["checkpoints"]}, key=int):
        at = [c["checkpoints"][k] for c in coverage if k in c["checkpoints"]]
        checkpoints[k] = {
            "topics": len(at),
            **{name: _mean([a[name] for a in at]) for name in ("left", "truth_left")},
            "truth_queued": _mean([a["truth_queued"] for a in at]),
            "abs_error": _mean([abs(a["error"]) for a in at]),
            "holds": _mean([float(a["holds"]) for a in at]),
        }
    stops = {}
    for share in coverage[0]["stop"]["shares"]:
        at = [c["stop"]["shares"][share] for c in coverage]
        stops[share] = {
            "topics": len(at),
            "stopped": sum(a["stopped"] for a in at),
            **{name: _mean([a[name] for a in at]) for name in ("pages", "savings", "recall")},
            "recall_budget": _mean([c["stop"]["recall_budget"] for c in coverage]),
        }
    return {"checkpoints": checkpoints, "stop": stops}
