"""Measures of a crawl from what the server served (its log), never from what the crawler
says it did: Srinivasan et al. 2005's target recall and precision and similarity to the topic, over
time. What the crawler says (its feed) enters only as its own harvest and its verdicts, to check
those against the labels.

Counting rule (the bundle's topics.json): robots.txt files are not pages, a URL served twice
counts once, seeds and training pages are not counted; page i is the i-th remaining one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from sklearn.metrics import roc_auc_score

from focused.lab.webs.bundle import url_key

__all__ = [
    "BINS",
    "KS",
    "FeedVerdicts",
    "best_f1",
    "claimed_relevant",
    "counted_pages",
    "ece",
    "feed_verdicts",
    "measure",
    "reliability_bins",
    "fetches_spent",
    "served_order",
    "steps",
]

KS = (100, 250, 500, 1000)
# The reliability table: equal-width bins of the feed's score in [0, 1].
BINS = 10
# The feed's fields a page's score is read from, the first one the feed has.
SCORES = ("probability", "relevance")


def steps(pages: int) -> list[int]:
    """The k of harvest@k for a crawl of ``pages``: the standard ones below it, and itself."""
    return sorted({k for k in KS if k < pages} | {pages})


def _is_page(entry: Mapping[str, Any]) -> bool:
    """Whether a served log entry is a page: a 2xx response, not a robots.txt file."""
    return 200 <= entry["status"] < 300 and not entry["url"].endswith("/robots.txt")


def served_order(
    log: Iterable[Mapping[str, Any]], key: Callable[[str], str] = url_key
) -> list[str]:
    """Keys (``key`` of the URL: a page served at several spellings has one) of the pages in
    the order the server first served them: 2xx responses only (a 404 is a fetch spent, not
    a page: :func:`fetches_spent`), robots.txt files dropped."""
    return list(dict.fromkeys(key(entry["url"]) for entry in log if _is_page(entry)))


def fetches_spent(
    log: Iterable[Mapping[str, Any]],
    pages: Sequence[str],
    ks: Sequence[int],
    key: Callable[[str], str] = url_key,
) -> dict[str, dict[str, int]]:
    """What a crawl paid for its first k counted ``pages`` (``served_order``'s keys, as
    ``counted_pages`` keeps them), at each k of ``ks`` it reached: ``fetches``, every request
    served up to the k-th page's first response (robots.txt files aside), and ``dead``, those
    that were no page (404s and other errors). Another spelling of a page already fetched is
    a fetch spent too."""
    fetches, dead, counted = 0, 0, 0
    wanted = set(ks)
    spent: dict[str, dict[str, int]] = {"fetches": {}, "dead": {}}
    for entry in log:
        if entry["url"].endswith("/robots.txt"):
            continue
        fetches += 1
        if not 200 <= entry["status"] < 300:
            dead += 1
        elif counted < len(pages) and key(entry["url"]) == pages[counted]:
            counted += 1
            if counted in wanted:
                spent["fetches"][str(counted)] = fetches
                spent["dead"][str(counted)] = dead
    return spent


def counted_pages(order: Iterable[str], skip: Collection[str], pages: int) -> list[str]:
    """The first ``pages`` keys of ``order`` that count (not in ``skip``)."""
    return [key for key in order if key not in skip][:pages]


def claimed_relevant(
    feed: Iterable[Mapping[str, Any]], key: Callable[[str], str] = url_key
) -> set[str]:
    """Keys of the pages a crawl's feed marks relevant: what the crawler itself believed
    (``relevant`` is false, null or absent for bad and duplicate pages)."""
    return {key(item["url"]) for item in feed if item.get("relevant")}


@dataclass(frozen=True)
class FeedVerdicts:
    """What a crawl's feed says of its pages, by URL key: those it calls relevant, and its score
    of each page (``score_of``: the field read, "probability" or "relevance")."""

    claimed: set[str] = field(default_factory=set)
    scores: dict[str, float] = field(default_factory=dict)
    score_of: str = "relevance"


def _number(value: Any) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool)


def feed_verdicts(
    feed: Iterable[Mapping[str, Any]], key: Callable[[str], str] = url_key
) -> FeedVerdicts:
    """The verdicts of a crawl's feed, by ``key`` of the URL: :func:`claimed_relevant`, and
    each page's score from its first item that has one: its ``probability`` if any item of
    the feed has that field as a number (a calibrated probability), else its ``relevance``
    (R). A page whose items have no number there (bad and duplicate pages) has no score."""
    items = list(feed)
    score_of = next(
        (name for name in SCORES if any(_number(item.get(name)) for item in items)), SCORES[-1]
    )
    scores: dict[str, float] = {}
    for item in items:
        if _number(value := item.get(score_of)):
            scores.setdefault(key(item["url"]), float(value))
    return FeedVerdicts(claimed_relevant(items, key), scores, score_of)


def reliability_bins(scores: Sequence[float], truth: Sequence[bool]) -> list[dict[str, Any]]:
    """The reliability table of ``scores`` (each clipped to [0, 1]) against ``truth``: per bin
    of BINS equal-width ones, ``pages``, ``relevant`` (how many are truly relevant), and their
    ``predicted`` mean score and ``share`` truly relevant (None in an empty bin)."""
    pages, relevant, total = [0] * BINS, [0] * BINS, [0.0] * BINS
    for score, true in zip(scores, truth, strict=True):
        score = min(max(score, 0.0), 1.0)
        b = min(int(score * BINS), BINS - 1)
        pages[b], relevant[b], total[b] = pages[b] + 1, relevant[b] + true, total[b] + score
    return [
        {
            "pages": n,
            "relevant": m,
            "predicted": round(t / n, 4) if n else None,
            "share": round(m / n, 4) if n else None,
        }
        for n, m, t in zip(pages, relevant, total, strict=True)
    ]


def ece(bins: Sequence[Mapping[str, Any]]) -> float | None:
    """Expected calibration error of a reliability table: sum over bins of pages_b / pages *
    |predicted_b - share_b|; None for an empty table."""
    n = sum(b["pages"] for b in bins)
    if not n:
        return None
    gaps = (b["pages"] * abs(b["predicted"] - b["share"]) for b in bins if b["pages"])
    return round(sum(gaps) / n, 4)


def _f1(true_positives: int, claimed: int, relevant: int) -> float:
    """2PR / (P + R) = 2 TP / (claimed + relevant); 0 when nothing is claimed or relevant
    (precision undefined counts as 0)."""
    return 2 * true_positives / (claimed + relevant) if true_positives else 0.0


def best_f1(scores: Sequence[float], truth: Sequence[bool], relevant: int) -> float:
    """The best F1 of claiming the pages scored at least a threshold, over every threshold,
    knowing the labels (an upper bound of what a threshold on the score can do); ``relevant``:
    all truly relevant pages, those without a score included (no threshold claims them)."""
    ranked = sorted(zip(scores, truth, strict=True), key=lambda pair: -pair[0])
    best, found = 0.0, 0
    for i, (score, true) in enumerate(ranked):
        found += true
        if i + 1 == len(ranked) or ranked[i + 1][0] != score:  # a threshold between two scores
            best = max(best, _f1(found, i + 1, relevant))
    return round(best, 4)


def _verdicts_at(
    pages: Sequence[str], targets: Collection[str], verdicts: FeedVerdicts
) -> dict[str, Any]:
    """The verdict figures of ``pages`` (the first k counted), by the names of ``measure``."""
    truth = [key in targets for key in pages]
    claimed = [key in verdicts.claimed for key in pages]
    hits = sum(c and t for c, t in zip(claimed, truth, strict=True))
    relevant, said = sum(truth), sum(claimed)
    scored = [(verdicts.scores[key], key in targets) for key in pages if key in verdicts.scores]
    scores, labels = [s for s, _ in scored], [t for _, t in scored]
    bins = reliability_bins(scores, labels)
    return {
        "verdict_precision": round(hits / said, 4) if said else 0.0,
        "verdict_recall": round(hits / relevant, 4) if relevant else 0.0,
        "verdict_f1": round(_f1(hits, said, relevant), 4),
        "reliability": bins,
        "ece": ece(bins),
        "unscored": len(pages) - len(scored),
        "auc": round(float(roc_auc_score(labels, scores)), 4)
        if 0 < sum(labels) < len(labels)
        else None,
        "best_f1": best_f1(scores, labels, relevant),
    }


VERDICTS = (
    "verdict_precision",
    "verdict_recall",
    "verdict_f1",
    "reliability",
    "ece",
    "unscored",
    "auc",
    "best_f1",
)


def measure(
    pages: Sequence[str],
    targets: Collection[str],
    ks: Sequence[int],
    similarity: Callable[[Sequence[str]], Sequence[float]],
    oracle_found: Sequence[int] | None = None,
    verdicts: FeedVerdicts | None = None,
) -> dict[str, Any]:
    """Figures of one crawl's counted pages, at each k of ``ks`` the crawl reached.

    - ``harvest``: share of the first k pages that are targets; this is also Srinivasan et al.
    2005's
      target precision (targets found / pages crawled);
    - ``recall``: targets found in the first k pages / all targets;
    - ``of_oracle``: targets found by k / the oracle's by k (``oracle_found``, its curve);
    - ``similarity``: mean tf-idf cosine of the first k pages to the topic's examples
      centroid (Srinivasan et al. 2005's precision against the topic description);
    - ``own_harvest``: share of the first k pages that the crawler itself called relevant
      (``verdicts.claimed``, from its feed: :func:`feed_verdicts`), counted by the same rule; a
      counted page missing from the feed (served, but the crawl stopped before its item was
      written) counts as not relevant. Left out without ``verdicts`` (the oracle has no feed);
    - ``calibration_gap``: |own harvest - harvest| at k, how far the crawler's notion of
      "relevant" is from the labels' (averaged over topics, a mean of absolute gaps);
    - ``found_curve``: targets found after each page, the whole curve.

    With ``verdicts``, whether the pages the crawler calls relevant are the targets, over the
    first k pages (a page missing from the feed: not claimed, no score):

    - ``verdict_precision``: claimed targets / claimed pages (0 when none is claimed);
      ``verdict_recall``: claimed targets / targets; ``verdict_f1``: their harmonic mean
      (0 when either is 0);
    - ``reliability``: the reliability table (:func:`reliability_bins`) of the pages' scores
      (the feed's field ``reliability_of``: "probability" or "relevance") against the labels,
      and ``ece``, its expected calibration error; ``unscored``: pages without a score, left
      out of both;
    - ``auc``: ROC AUC of the score against the labels (None when one class is absent);
      ``best_f1``: the F1 of the best threshold on the score, chosen knowing the labels.
    """
    curve: list[int] = []
    found = 0
    for key in pages:
        found += key in targets
        curve.append(found)
    sims = list(similarity(pages)) if pages else []
    reached = [k for k in ks if k <= len(pages)]

    def at(k: int) -> int:
        return curve[k - 1]

    result: dict[str, Any] = {
        "pages": len(pages),
        "found": found,
        "targets": len(targets),
        "harvest": {str(k): round(at(k) / k, 4) for k in reached},
        "recall": {str(k): round(at(k) / max(len(targets), 1), 4) for k in reached},
        "similarity": {str(k): round(sum(sims[:k]) / k, 4) for k in reached},
    }
    if oracle_found is not None:
        result["of_oracle"] = {
            str(k): round(at(k) / oracle_found[min(k, len(oracle_found)) - 1], 4)
            for k in reached
            if oracle_found and oracle_found[min(k, len(oracle_found)) - 1]
        }
    if verdicts is not None:
        own = {k: sum(key in verdicts.claimed for key in pages[:k]) for k in reached}
        result["own_harvest"] = {str(k): round(own[k] / k, 4) for k in reached}
        result["calibration_gap"] = {str(k): round(abs(own[k] - at(k)) / k, 4) for k in reached}
        at_k = {str(k): _verdicts_at(pages[:k], targets, verdicts) for k in reached}
        result["reliability_of"] = verdicts.score_of
        for name in VERDICTS:
            result[name] = {k: figures[name] for k, figures in at_k.items()}
    result["found_curve"] = curve
    return result
