"""Measures of a crawl from what the server served (its log), never from what the crawler
says it did: Srinivasan et al. 2005's target recall and precision and similarity to the topic, over
time. What the crawler says (its feed) enters only as its own harvest, to check that against the
true one.

Counting rule (the bundle's topics.json): robots.txt files are not pages, a URL served twice
counts once, seeds and training pages are not counted; page i is the i-th remaining one.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from focused.lab.webs.bundle import url_key

__all__ = ["KS", "claimed_relevant", "counted_pages", "measure", "served_order", "steps"]

KS = (100, 250, 500, 1000)


def steps(pages: int) -> list[int]:
    """The k of harvest@k for a crawl of ``pages``: the standard ones below it, and itself."""
    return sorted({k for k in KS if k < pages} | {pages})


def served_order(log: Iterable[Mapping[str, Any]]) -> list[str]:
    """URL keys in the order the server first served them; robots.txt files dropped."""
    order = dict.fromkeys(url_key(entry["url"]) for entry in log)
    return [key for key in order if not key.endswith("/robots.txt")]


def counted_pages(order: Iterable[str], skip: Collection[str], pages: int) -> list[str]:
    """The first ``pages`` keys of ``order`` that count (not in ``skip``)."""
    return [key for key in order if key not in skip][:pages]


def claimed_relevant(feed: Iterable[Mapping[str, Any]]) -> set[str]:
    """URL keys of the pages a crawl's feed marks relevant: what the crawler itself believed
    (``relevant`` is false, null or absent for bad and duplicate pages)."""
    return {url_key(item["url"]) for item in feed if item.get("relevant")}


def measure(
    pages: Sequence[str],
    targets: Collection[str],
    ks: Sequence[int],
    similarity: Callable[[Sequence[str]], Sequence[float]],
    oracle_found: Sequence[int] | None = None,
    claimed: Collection[str] | None = None,
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
      (``claimed``, from its feed: :func:`claimed_relevant`), counted by the same rule; a
      counted page missing from the feed (served, but the crawl stopped before its item was
      written) counts as not relevant. Left out without ``claimed`` (the oracle has no feed);
    - ``calibration_gap``: |own harvest - harvest| at k, how far the crawler's notion of
      "relevant" is from the labels' (averaged over topics, a mean of absolute gaps);
    - ``found_curve``: targets found after each page, the whole curve.
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
    if claimed is not None:
        own = {k: sum(key in claimed for key in pages[:k]) for k in reached}
        result["own_harvest"] = {str(k): round(own[k] / k, 4) for k in reached}
        result["calibration_gap"] = {str(k): round(abs(own[k] - at(k)) / k, 4) for k in reached}
    result["found_curve"] = curve
    return result
