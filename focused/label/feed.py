"""The pages of a crawl's feed worth labelling, and the two orders they are labelled in.

The feed is the crawl's ``-o pages.jsonl`` (docs/reference/feed.md), one JSON object a line. A
page is listed once (its first item) when it was classified (``relevance`` is a number), is not
bad, and has text: a main text, or, where the crawl kept none for it (``main_text`` null: by
default only relevant pages get one), a title. A page whose main text is ``""`` (none found) is
left out: there is nothing to learn from it.

The orders: ``best`` (R descending: the likely good pages first, which a new topic needs) and
``uncertain`` (R nearest the crawl's boundary first: the pages the crawl's own judgement was
least sure of, where a person's mark teaches most). Ties keep the feed's order.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from focused.errors import FocusedError
from focused.topic.files import is_seed_url

__all__ = [
    "DEFAULT_BOUNDARY",
    "ORDERS",
    "Page",
    "boundary",
    "label_pages",
    "order",
    "read_feed",
    "seeds_of",
    "snippet",
]

ORDERS = ("best", "uncertain")
# The boundary of a feed in which no page is relevant: R's midpoint.
DEFAULT_BOUNDARY = 0.5
SNIPPET_CHARS = 300
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Page:
    """One page to label: its feed item's fields the page shows and the examples are made of
    (``main_text`` None where the crawl kept no main text for it)."""

    url: str
    title: str
    relevance: float
    category: str | None
    main_text: str | None


def read_feed(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The feed's items in its order, and how many of its lines are not a JSON object (skipped).
    A FocusedError when it cannot be read."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        raise FocusedError(f"{path}: feed not found") from None
    except OSError as exc:
        raise FocusedError(f"{path}: cannot read the feed ({exc.strerror})") from None
    items, not_json = [], 0
    for line in filter(str.strip, lines):
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            item = None
        if isinstance(item, dict):
            items.append(item)
        else:
            not_json += 1
    return items, not_json


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def label_pages(items: Iterable[Mapping[str, Any]]) -> list[Page]:
    """The pages worth labelling (module doc), in the feed's order, each URL once."""
    pages: dict[str, Page] = {}
    for item in items:
        url, text, title = item.get("url"), item.get("main_text"), item.get("title")
        if (
            not isinstance(url, str)
            or url in pages
            or item.get("bad")
            or not _number(item.get("relevance"))
            or text == ""
            or (text is None and not title)
        ):
            continue
        category = item.get("category")
        pages[url] = Page(
            url,
            str(title or ""),
            float(item["relevance"]),
            str(category) if category else None,
            None if text is None else str(text),
        )
    return list(pages.values())


def boundary(items: Iterable[Mapping[str, Any]]) -> float:
    """The R at which the crawl called a page relevant: the smallest R among its items with
    ``relevant`` true, else DEFAULT_BOUNDARY."""
    relevant = [
        float(item["relevance"])
        for item in items
        if item.get("relevant") is True and _number(item.get("relevance"))
    ]
    return min(relevant, default=DEFAULT_BOUNDARY)


def order(pages: Sequence[Page], how: str, threshold: float) -> list[int]:
    """The indices of ``pages`` in the order ``how`` (one of ORDERS; module doc)."""
    if how == "best":
        return sorted(range(len(pages)), key=lambda i: -pages[i].relevance)
    if how == "uncertain":
        return sorted(range(len(pages)), key=lambda i: abs(pages[i].relevance - threshold))
    raise ValueError(f"order must be one of {ORDERS}, not {how!r}")


def seeds_of(items: Iterable[Mapping[str, Any]]) -> list[str]:
    """The crawl's seeds as its feed has them: the URLs of its depth-0 items, each once."""
    urls = (item.get("url") for item in items if item.get("depth") == 0)
    return list(dict.fromkeys(url for url in urls if isinstance(url, str) and is_seed_url(url)))


def snippet(text: str, chars: int = SNIPPET_CHARS) -> str:
    """The start of ``text`` on one line, at most about ``chars`` characters, cut between
    words."""
    flat = _SPACE.sub(" ", text).strip()
    if len(flat) <= chars:
        return flat
    cut = flat[:chars].rpartition(" ")[0] or flat[:chars]
    return cut.rstrip(" ,;:.") + "…"
