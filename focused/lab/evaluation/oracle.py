"""The oracle crawler (Srinivasan et al. 2005's ceiling): it knows the labels, so it fetches a
relevant frontier page whenever there is one and otherwise the oldest frontier page (breadth-first).
It runs on the link graph, not through the server: no crawl can beat its early harvest with
the same seeds, so crawlers are compared as a share of what it finds."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence

__all__ = ["oracle_order"]


def oracle_order(
    links: Mapping[str, Sequence[str]],
    seeds: Iterable[str],
    relevant: Collection[str],
    pages: int,
    skip: Collection[str] = (),
) -> list[str]:
    """The oracle's fetch order from ``seeds`` (fetched first), until ``pages`` pages not in
    ``skip`` (seeds, training pages: not counted) are fetched or the frontier is empty.

    Relevant pages are taken in the order they were discovered, then the others, so among
    equals the oracle is breadth-first.
    """
    order = list(dict.fromkeys(seeds))  # every crawler starts by fetching its seeds
    seen = set(order)
    hot: deque[str] = deque()
    cold: deque[str] = deque()

    def discover(keys: Iterable[str]) -> None:
        for key in keys:
            if key not in seen:
                seen.add(key)
                (hot if key in relevant else cold).append(key)

    for key in order:
        discover(links.get(key, ()))
    counted = sum(key not in skip for key in order)
    while counted < pages and (hot or cold):
        key = (hot or cold).popleft()
        order.append(key)
        counted += key not in skip
        discover(links.get(key, ()))
    return order
