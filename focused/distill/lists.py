"""Badia et al. 2006's lists of good hubs and good sites, kept from one run for the next.

During a crawl the frontier counts, in Redis, the relevant pages fetched from each site and
the relevant pages reached by each page's links, and keeps the hub score (links to other
sites per word of content) of pages that reach FOCUSED_HUB_MIN_SCORE. At the end of a crawl
:class:`~focused.extensions.lists.ListWriter` writes the hubs and sites through which at least
FOCUSED_LIST_MIN_RELEVANT relevant pages were found to ``<lists folder>/<crawl>.json``
(:func:`lists_folder`);
a topic file's ``seeds_from = "previous"`` (or a path to such a file) starts the next run
from them as well as from its seeds.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from focused.errors import FocusedError
from focused.store.embedded import home_dir
from focused.store.graph import GraphStore

if TYPE_CHECKING:
    from scrapy.settings import BaseSettings

    from focused.store.crawl import CrawlStore


def read_lists(store: CrawlStore, min_relevant: int) -> dict[str, Any]:
    """The crawl's good hubs and sites, most relevant pages found first (every shard's)."""
    graph = GraphStore(store)
    hubs = graph.hub_scores()
    found = graph.relevant_found([order for order, _ in hubs])
    good = [
        (order, score, n) for (order, score), n in zip(hubs, found, strict=True)
        if n and n >= min_relevant
    ]  # fmt: skip
    urls = graph.page_urls([order for order, _, _ in good])
    sites = [(site, n) for site, n in graph.relevant_per_site().items() if n >= min_relevant]
    return {
        "crawl": store.crawl,
        "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "min_relevant": min_relevant,
        "hubs": sorted(
            (
                {"url": url, "hub_score": round(score, 4), "relevant_found": n}
                for url, (_, score, n) in zip(urls, good, strict=True)
            ),
            key=lambda hub: (-hub["relevant_found"], -hub["hub_score"], hub["url"]),
        ),
        "sites": [
            {"site": site, "relevant": n} for site, n in sorted(sites, key=lambda s: (-s[1], s[0]))
        ],
    }


def lists_folder(settings: BaseSettings) -> Path | None:
    """Where a crawl's lists go: FOCUSED_LISTS_DIR, else ``lists/`` in FOCUSED_HOME, so that a
    crawl writes nothing into the working folder; None when FOCUSED_LISTS_DIR is empty (off)."""
    folder = settings.get("FOCUSED_LISTS_DIR")
    if folder is None:
        return home_dir(settings.get("FOCUSED_HOME")) / "lists"
    return Path(folder) if folder else None


def lists_path(folder: str | Path, crawl: str) -> Path:
    return Path(folder) / f"{crawl}.json"


def write_lists(lists: dict[str, Any], folder: str | Path) -> Path:
    path = lists_path(folder, lists["crawl"])
    path.parent.mkdir(parents=True, exist_ok=True)
    # Readers never see half a file, and processes of one crawl closing at once (each writes
    # the crawl's lists) never share a partial file.
    partial = path.with_suffix(f".json.{os.getpid()}.part")
    try:
        partial.write_text(json.dumps(lists, indent=1) + "\n")
        partial.replace(path)
    except OSError:  # a full disk: no part left behind
        partial.unlink(missing_ok=True)
        raise
    return path


def list_seeds(path: Path) -> list[str]:
    """Seed URLs from a lists file: its good hubs, the distiller's top hubs, then its good
    sites' home pages."""
    try:
        lists = json.loads(path.read_text())
        hubs = lists["hubs"] + lists.get("top_hubs", [])
        urls = [hub["url"] for hub in hubs] + [s["site"] + "/" for s in lists["sites"]]
        return list(dict.fromkeys(urls))
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise FocusedError(f"{path}: not a lists file of `focused` ({exc})") from None
