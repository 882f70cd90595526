"""Crawl tasks (seed 003): a topic's seeds, training pages and targets, seeds picked ``dist``
links backwards from the targets to set the difficulty, and the topic characteristics that
predict it."""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from focused.errors import FocusedError
from focused.evaluation.graph import WebGraph
from focused.relevance.centroid import CentroidModel
from focused.webs.bundle import TOPICS_FILE, Bundle, url_key
from focused.webs.labels import within

__all__ = ["Task", "difficulty", "dist_seeds", "load_tasks", "parse_seeds_option"]


@dataclass(frozen=True)
class Task:
    """One topic to crawl. ``relevant`` holds every page labelled with the category or one
    below it; ``targets`` the relevant pages that count (not seeds, not training pages)."""

    category: str
    seeds: list[str]
    training: list[str]
    relevant: frozenset[str]
    targets: frozenset[str]

    @property
    def skip(self) -> frozenset[str]:
        """URL keys of the pages that are never counted: seeds and training pages."""
        return frozenset(url_key(url) for url in (*self.seeds, *self.training))


def parse_seeds_option(value: str) -> int | None:
    """``topics`` -> None (the topics.json seeds); ``dist:N`` -> N."""
    if value == "topics":
        return None
    kind, _, number = value.partition(":")
    if kind != "dist" or not number.isdigit() or int(number) < 1:
        raise FocusedError(f"--seeds: expected 'topics' or 'dist:N' (N >= 1), got {value!r}")
    return int(number)


def dist_seeds(
    in_links: Mapping[str, Sequence[str]],
    targets: Collection[str],
    dist: int,
    n: int,
    *,
    exclude: Collection[str] = (),
    seed: int = 0,
) -> list[str]:
    """``n`` pages (sorted, drawn at random for ``seed``) whose shortest link path to the
    nearest target is exactly ``dist`` links, found by walking links backwards from the
    targets; pages in ``exclude`` (training pages) are never seeds. Fewer if fewer exist."""
    distance = {key: 0 for key in targets}
    queue = deque(targets)
    while queue:
        key = queue.popleft()
        if distance[key] == dist:
            continue
        for source in in_links.get(key, ()):
            if source not in distance:
                distance[source] = distance[key] + 1
                queue.append(source)
    ring = sorted(k for k, d in distance.items() if d == dist and k not in exclude)
    return sorted(random.Random(seed).sample(ring, min(n, len(ring))))


def load_tasks(
    bundle: Bundle, graph: WebGraph, topics: str, dist: int | None, seed: int = 0
) -> list[Task]:
    """The bundle's topics (``all`` or categories, comma-separated) as tasks; with ``dist``,
    each topic's seeds are replaced by as many pages ``dist`` links from its targets."""
    listed = (bundle.topics or {}).get("topics", [])
    if not listed:
        raise FocusedError(f"{bundle.path.parent}: no topics ({TOPICS_FILE})")
    if not bundle.labels:
        raise FocusedError(f"{bundle.path.parent}: the bundle has no labels")
    if topics != "all":
        wanted = [name.strip().strip("/") for name in topics.split(",") if name.strip()]
        known = {t["category"] for t in listed}
        unknown = [name for name in wanted if name not in known]
        if unknown or not wanted:
            raise FocusedError(f"no topic {(unknown or [topics])[0]!r} in {TOPICS_FILE}")
        listed = [t for t in listed if t["category"] in wanted]
    in_links = graph.in_links() if dist is not None else {}
    tasks = []
    for topic in listed:
        category = topic["category"]
        relevant = frozenset(
            key for key, paths in bundle.labels.items() if any(within(p, category) for p in paths)
        )
        training = list(topic["training"])
        seeds = list(topic["seeds"])
        if dist is not None:
            train_keys = {url_key(url) for url in training}
            candidates = relevant - train_keys
            keys = dist_seeds(in_links, candidates, dist, len(seeds), exclude=train_keys, seed=seed)
            if not keys:
                raise FocusedError(f"{category}: no page is {dist} links from its targets")
            seeds = [bundle.pages[key].url for key in keys]
        skip = {url_key(url) for url in (*seeds, *training)}
        tasks.append(Task(category, seeds, training, relevant, relevant - skip))
    return tasks


def difficulty(graph: WebGraph, task: Task) -> dict[str, Any]:
    """Seed 003's topic characteristics, on the bundle's link graph.

    - popularity: share of the web's pages that are targets or link to a target;
    - cohesiveness: share of the targets' out-links that point to targets;
    - authoritativeness: mean in-degree of targets over the mean in-degree of all pages
      (above 1: the web points at the topic more than at an average page);
    - seed_target_similarity: mean tf-idf cosine of the seeds to the targets' centroid.
    """
    targets = task.targets
    in_links = graph.in_links()
    pages = len(graph.links)
    linking = {source for t in targets for source in in_links.get(t, ())}
    out = [k for t in targets for k in graph.links.get(t, ())]
    degree = [len(in_links.get(t, ())) for t in targets]
    mean_degree = sum(map(len, graph.links.values())) / max(pages, 1)
    docs = [graph.texts[t] for t in targets if t in graph.texts]
    seed_docs = [graph.texts.get(url_key(url), "") for url in task.seeds]
    similarity = CentroidModel().fit(docs).relevance(seed_docs) if docs else np.zeros(1)
    return {
        "targets": len(targets),
        "popularity": round(len(targets | linking) / max(pages, 1), 4),
        "cohesiveness": round(sum(k in targets for k in out) / max(len(out), 1), 4),
        "authoritativeness": round(float(np.mean(degree or [0])) / max(mean_degree, 1e-9), 4),
        "seed_target_similarity": round(float(np.mean(similarity)), 4),
    }
