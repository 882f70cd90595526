"""A taxonomy of example documents made from a labelled bundle (Chakrabarti et al. 1999's master
category tree).

A labelled bundle (``labels.tsv``: category paths such as ``Science/Biology/Birds``, several
joined by ``|``) already is a category tree with documents filed under its nodes. This turns it
into the folder tree the classifier reads (:func:`focused.relevance.read_taxonomy`): one folder
per category node, up to ``per_category`` pages filed at each node written as ``.txt`` files
(the page's title and text, exactly as the crawler sees a fetched page). A topic's own examples
are written as the pages they are, ``.html`` files that name their URL in the comment a browser
writes into a page it saves: the topic learns the shape of its pages from them
(:mod:`focused.relevance.shape`).

For a topic, the topic's own subtree must be learned from the topic's training pages only, or
the benchmark would train on the very pages it counts. So the subtree gets exactly the given
examples, and no page labelled with the topic (or below it) is an example of any other node.
"""

from __future__ import annotations

import hashlib
import random
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

from focused.errors import FocusedError
from focused.lab.webs.bundle import LABELS_FILE, Bundle, Page, url_key
from focused.relevance.text import page_text

__all__ = ["saved_page", "taxonomy_from_labels"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def _nodes(path: str) -> list[str]:
    """The path and its ancestors: "A/B" -> ["A", "A/B"]."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def within(path: str, category: str) -> bool:
    """Whether a category path is the category or lies below it (the bundles' relevance rule)."""
    return path == category or path.startswith(category + "/")


def _file_name(url: str, suffix: str = ".txt") -> str:
    """A readable, unique file name for a page: its path's last segment and a URL digest."""
    segment = unquote(urlsplit(url).path.rstrip("/").rpartition("/")[2])
    stem = _UNSAFE.sub("_", segment).strip("._")[:80] or "page"
    return f"{stem}-{hashlib.blake2b(url_key(url).encode(), digest_size=4).hexdigest()}{suffix}"


def saved_page(page: Page) -> str:
    """A page as an HTML example file: its HTML after the comment a browser writes into a page
    it saves, ``<!-- saved from url=(0023)http://example.com/ -->``, which names its URL for
    :func:`focused.relevance.shape.example_shape` (a comment, so its text is the page's)."""
    url = page.url.replace("--", "%2D%2D")
    return f"<!-- saved from url=({len(url):04d}){url} -->\n{page.body.decode('utf-8', 'replace')}"


def _write_example(
    bundle: Bundle, folder: Path, category: str, url: str, as_html: bool = False
) -> None:
    page = bundle.page(url)
    if page is None:
        raise FocusedError(f"{bundle.path}: no page for example {url}")
    target = folder.joinpath(*category.split("/"))
    target.mkdir(parents=True, exist_ok=True)
    if as_html:
        (target / _file_name(page.url, ".html")).write_text(saved_page(page), encoding="utf-8")
    else:
        (target / _file_name(page.url)).write_text(page_text(page.body).document, encoding="utf-8")


def taxonomy_from_labels(
    bundle: Bundle,
    folder: str | Path,
    *,
    per_category: int = 20,
    topic_category: str | None = None,
    topic_examples: Sequence[str] = (),
    exclude: Iterable[str] = (),
    seed: int = 0,
) -> Path:
    """Write the bundle's category tree with example pages into ``folder``; return it.

    Every node of the label tree becomes a folder. Each node gets up to ``per_category``
    pages labelled exactly with it (internal nodes too), drawn at random but deterministically
    for ``seed``; a page is an example of one node at most. With ``topic_category``, its
    subtree holds only ``topic_examples``, each filed at its own label path within the
    subtree (else at the topic node), and pages labelled in the subtree are examples nowhere
    else. URLs in ``exclude`` (e.g. seeds) are never examples. ``folder`` must be new or empty,
    so that no stale example is read with the new ones.
    """
    folder = Path(folder)
    if per_category < 1:
        raise FocusedError(f"per_category must be at least 1, not {per_category}")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise FocusedError(f"{folder}: exists and is not an empty folder")
    if not bundle.labels:
        raise FocusedError(f"{bundle.path}: the bundle has no labels ({LABELS_FILE})")
    nodes = sorted({node for paths in bundle.labels.values() for p in paths for node in _nodes(p)})
    topic = topic_category.strip("/") if topic_category else None
    if topic is not None and topic not in nodes:
        raise FocusedError(f"{bundle.path}: category {topic!r} is not in the labels")
    if topic is None and topic_examples:
        raise FocusedError("topic examples given without a topic category")

    excluded = {bundle.key(url) for url in exclude}
    used: set[str] = set()
    if topic is not None:
        for url in dict.fromkeys(topic_examples):
            key = bundle.key(url)
            if key in excluded or key in used:
                continue
            inside = sorted(p for p in bundle.categories(url) if within(p, topic))
            _write_example(bundle, folder, inside[0] if inside else topic, url, as_html=True)
            used.add(key)
        excluded |= {
            bundle.key(key)
            for key, paths in bundle.labels.items()
            if any(within(p, topic) for p in paths)
        }

    filed: dict[str, list[str]] = defaultdict(list)
    for key in sorted(bundle.labels):
        if key in bundle.copies:
            continue  # a page is an example once, whatever spellings it is served at
        for path in dict.fromkeys(bundle.labels[key]):
            filed[path].append(key)
    for node in nodes:
        folder.joinpath(*node.split("/")).mkdir(parents=True, exist_ok=True)
        if topic is not None and within(node, topic):
            continue
        skip = excluded | used
        candidates = [key for key in filed.get(node, []) if key not in skip]
        # One generator per node: a node's draw does not shift with the draws made before it.
        rng = random.Random(f"{seed}:{node}")
        for key in rng.sample(candidates, min(per_category, len(candidates))):
            _write_example(bundle, folder, node, key)
            used.add(key)
    return folder
