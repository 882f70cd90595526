"""Crawl tasks (Srinivasan et al. 2005): a topic's seeds, training pages and targets, seeds picked
``dist`` links backwards from the targets to set the difficulty, and the topic characteristics that
predict it.

Three task sets: the development topics of the bundle's topics.json (what defaults are tuned
on), the fixed validation categories below (to check a default on topics it was not tuned on),
or any categories given. Tasks for categories not in topics.json are drawn as topics.json's
are (:func:`sampled_task`). On Wikispeedia every development seed is itself a page of its topic
(72 of 72) and has out-links; 66 of the 72 seeds are 1 link from the nearest target, 5 are 2
and 1 is 3 (of all the topics' non-training pages, 1400 of 1475 are 1 link from another page
of the topic), and the seeds' and the training pages' in-degree ranks within their topic are
spread over the whole range: seeds and training pages are disjoint uniform draws from the
topic's pages, the seeds among pages with out-links. The same rule made the synthetic webs'
topics.json (:mod:`focused.lab.webs.generate`).
"""

from __future__ import annotations

import random
import tomllib
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from focused.errors import FocusedError
from focused.lab.evaluation.graph import WebGraph
from focused.lab.webs.bundle import TOPICS_FILE, Bundle, url_key
from focused.lab.webs.labels import within
from focused.relevance.centroid import CentroidModel

__all__ = [
    "N_SEEDS",
    "N_TRAINING",
    "TASK_SETS",
    "USER_KEYWORDS",
    "VALIDATION_CATEGORIES",
    "Task",
    "difficulty",
    "dist_seeds",
    "load_tasks",
    "overlaps",
    "parse_seeds_option",
    "read_keywords",
    "sampled_task",
]

# Seeds and training pages per task, as in Wikispeedia's topics.json.
N_SEEDS = 8
N_TRAINING = 30

# Validation categories of Wikispeedia, to check a default on topics it was not tuned on.
# Chosen from labels.tsv: the category nodes of 80 to 700 pages that neither equal, nor lie
# above or below, a development topic of topics.json, and share at most 15% of their pages
# with the development topics (this leaves out the Geography/*_Geography continents, 35-58%
# of whose pages are Countries, and Everyday_life/Food_and_agriculture, 45% Science/Biology);
# of People (676) and People/Historical_figures (108) the smaller, so that the list does not
# nest; and not IT, whose name is a stopword, so the keywords crawler would have no word.
VALIDATION_CATEGORIES = (
    "Business_Studies",  # 87 pages, 2% shared with the development topics
    "Everyday_life",  # 369, 14%
    "Geography/Geography_of_Great_Britain",  # 124, 2%
    "Geography/North_American_Geography",  # 103, 6%
    "History/Ancient_History_Classical_History_and_Mythology",  # 87, 3%
    "History/General_history",  # 80, 3%
    "Language_and_literature",  # 194, 1%
    "People/Historical_figures",  # 108, 9%
    "Religion",  # 131, 4%
)

# Five keywords a user would write for each development topic and validation category, from
# the category's name alone, written down once (2026-11-27) before any of the category's pages
# were looked at, and never changed after a measurement: the ``keywords`` crawler's topic, so
# that the evaluation measures what users bring. (``keywords-name`` keeps the words of the
# name itself, ``name_words``.)
USER_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Science/Biology/Birds": ("birds", "ornithology", "feathers", "wings", "nest"),
    "Science/Chemistry/Chemical_elements": (
        "chemical element",
        "periodic table",
        "atomic number",
        "metal",
        "isotope",
    ),
    "Science/Physics/Space_Astronomy": ("astronomy", "space", "planet", "star", "galaxy"),
    "History/British_History": ("british history", "england", "monarch", "empire", "parliament"),
    "Citizenship/Politics_and_government": (
        "politics",
        "government",
        "election",
        "parliament",
        "political party",
    ),
    "Design_and_Technology/Railway_transport": (
        "railway",
        "train",
        "locomotive",
        "rail transport",
        "station",
    ),
    "Science/Biology": ("biology", "organism", "species", "cell", "evolution"),
    "Countries": ("country", "nation", "capital city", "population", "republic"),
    "Music": ("music", "musician", "song", "instrument", "composer"),
    "Business_Studies": ("business", "company", "economics", "market", "management"),
    "Everyday_life": ("everyday life", "daily life", "food", "home", "family"),
    "Geography/Geography_of_Great_Britain": (
        "great britain",
        "england",
        "scotland",
        "wales",
        "county",
    ),
    "Geography/North_American_Geography": (
        "north america",
        "united states",
        "canada",
        "mexico",
        "geography",
    ),
    "History/Ancient_History_Classical_History_and_Mythology": (
        "ancient history",
        "ancient greece",
        "roman empire",
        "mythology",
        "classical antiquity",
    ),
    "History/General_history": ("history", "historical event", "war", "empire", "century"),
    "Language_and_literature": ("language", "literature", "novel", "poetry", "writer"),
    "People/Historical_figures": ("historical figure", "king", "emperor", "leader", "biography"),
    "Religion": ("religion", "god", "church", "faith", "worship"),
    # WebKB's classes (a kind of page: the home page of a course, a faculty member, ...),
    # written down once (2026-12-02) from the class names alone, before any page was looked at.
    "course": ("course", "syllabus", "homework", "lectures", "instructor"),
    "faculty": ("professor", "faculty", "research interests", "publications", "teaching"),
    "student": ("student", "graduate student", "phd student", "advisor", "resume"),
    "project": ("project", "research project", "research group", "members", "funding"),
    "department": ("department", "computer science", "faculty", "graduate program", "courses"),
    "staff": ("staff", "administrative", "office", "secretary", "technical support"),
}

# Task set -> what it is, for the report.
TASK_SETS = {
    "development": "the development topics of topics.json",
    "validation": "the fixed validation categories (not in topics.json), tasks drawn as"
    " topics.json's",
    "categories": "the categories given, tasks drawn as topics.json's",
}


@dataclass(frozen=True)
class Task:
    """One topic to crawl. ``relevant`` holds every page labelled with the category or one
    below it; ``targets`` the relevant pages that count (not seeds, not training pages)."""

    category: str
    seeds: list[str]
    training: list[str]
    relevant: frozenset[str]
    targets: frozenset[str]
    keywords: tuple[str, ...] = ()  # a user's keywords for it (USER_KEYWORDS), () if none
    copies: Mapping[str, str] = field(default_factory=dict)  # the bundle's (Bundle.copies)

    def key(self, url: str) -> str:
        """The key of the page ``url`` names, in any spelling (:meth:`Bundle.key`)."""
        key = url_key(url)
        return self.copies.get(key, key)

    @property
    def skip(self) -> frozenset[str]:
        """Keys of the pages that are never counted: seeds and training pages."""
        return frozenset(self.key(url) for url in (*self.seeds, *self.training))


def read_keywords(path: Path) -> dict[str, tuple[str, ...]]:
    """A keywords file (``--keywords``): a TOML table of category -> list of keywords."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise FocusedError(f"--keywords: cannot read {path}: {exc}") from None
    for category, words in data.items():
        if not isinstance(words, list) or not words or not all(isinstance(w, str) for w in words):
            raise FocusedError(f"--keywords: {path}: {category!r}: expected a list of words")
    return {c.strip().strip("/"): tuple(words) for c, words in data.items()}


def parse_seeds_option(value: str) -> int | None:
    """``topics`` -> None (the topics.json seeds); ``dist:N`` -> N."""
    if value == "topics":
        return None
    kind, _, number = value.partition(":")
    if kind != "dist" or not number.isdigit() or int(number) < 1:
        raise FocusedError(f"--seeds: expected 'topics' or 'dist:N' (N >= 1), got {value!r}")
    return int(number)


def dist_seeds(
    links: nx.DiGraph,
    targets: Collection[str],
    dist: int,
    n: int,
    *,
    exclude: Collection[str] = (),
    seed: int = 0,
) -> list[str]:
    """``n`` pages (sorted, drawn at random for ``seed``) whose shortest link path to the
    nearest target is exactly ``dist`` links, found by walking ``links`` backwards from the
    targets; pages in ``exclude`` (training pages) are never seeds. Fewer if fewer exist.

    The walk is one breadth-first search from all the targets at once (``nx.bfs_layers`` on
    the reversed view, no copy), stopped at layer ``dist``; targets not in the graph have no
    in-links and lead nowhere."""
    backwards = links.reverse(copy=False)
    layers = nx.bfs_layers(backwards, [key for key in targets if key in backwards])
    ring = sorted(k for k in next(islice(layers, dist, None), []) if k not in exclude)
    return sorted(random.Random(seed).sample(ring, min(n, len(ring))))


def overlaps(category: str, other: str) -> bool:
    """Whether two categories are the same or one lies below the other."""
    return within(category, other) or within(other, category)


def _category_pages(bundle: Bundle, category: str) -> frozenset[str]:
    """URL keys of the pages labelled with ``category`` or one below it."""
    return frozenset(
        bundle.copies.get(key, key)
        for key, paths in bundle.labels.items()
        if any(within(p, category) for p in paths)
    )


def sampled_task(
    bundle: Bundle,
    graph: WebGraph,
    category: str,
    *,
    n_seeds: int = N_SEEDS,
    n_training: int = N_TRAINING,
    seed: int = 0,
) -> Task:
    """A task for any category, drawn as topics.json's are (see the module docstring).

    The category's pages are shuffled (``random.Random``, seeded by ``seed`` and the category,
    so a category's task does not depend on which others are drawn); the seeds are the first
    ``n_seeds`` pages with out-links, the training pages the first ``n_training`` of the rest.
    Only the labels of these pages reach the crawlers (as seeds and examples); the targets are
    the category's other pages. A category with no page left for targets is a FocusedError.
    """
    category = category.strip().strip("/")
    relevant = _category_pages(bundle, category)
    if not relevant:
        raise FocusedError(f"{bundle.path.parent}: no page is labelled {category!r}")
    order = sorted(relevant)
    random.Random(f"{seed}:{category}").shuffle(order)
    seeds = [key for key in order if graph.links.get(key)][:n_seeds]
    chosen = set(seeds)
    training = [key for key in order if key not in chosen][:n_training]
    skip = chosen | set(training)
    if not seeds or not relevant - skip:
        raise FocusedError(
            f"{category}: {len(relevant)} pages, too few for {n_seeds} seeds with out-links,"
            f" {n_training} training pages and targets"
        )
    return Task(
        category,
        [bundle.pages[key].url for key in seeds],
        [bundle.pages[key].url for key in training],
        relevant,
        relevant - skip,
        copies=bundle.copies,
    )


def _wanted(topics: str, known: Sequence[str], where: str) -> list[str]:
    """The categories of ``known`` that ``topics`` names (``all``: every one), in its order."""
    if topics == "all":
        return list(known)
    wanted = [name.strip().strip("/") for name in topics.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in known]
    if unknown or not wanted:
        raise FocusedError(f"no topic {(unknown or [topics])[0]!r} in {where}")
    return [name for name in known if name in wanted]


def load_tasks(
    bundle: Bundle,
    graph: WebGraph,
    topics: str,
    dist: int | None,
    seed: int = 0,
    *,
    task_set: str = "development",
    categories: Sequence[str] = (),
    keywords: Mapping[str, Sequence[str]] | None = None,
) -> list[Task]:
    """The tasks of a task set, ``topics`` of them (``all`` or categories, comma-separated).

    ``task_set`` is one of :data:`TASK_SETS`: ``development`` reads the bundle's topics.json,
    ``validation`` draws tasks for :data:`VALIDATION_CATEGORIES` and ``categories`` for
    ``categories`` (with :func:`sampled_task`). With ``dist``, each task's seeds are then
    replaced by as many pages ``dist`` links from its targets. Each task carries a user's
    keywords for its category: from ``keywords`` (category -> words), else USER_KEYWORDS.
    """
    if task_set not in TASK_SETS:
        raise FocusedError(f"unknown task set {task_set!r}; known: {', '.join(TASK_SETS)}")
    if not bundle.labels:
        raise FocusedError(f"{bundle.path.parent}: the bundle has no labels")
    if task_set == "development":
        listed = (bundle.topics or {}).get("topics", [])
        if not listed:
            raise FocusedError(f"{bundle.path.parent}: no topics ({TOPICS_FILE})")
        names = _wanted(topics, [t["category"] for t in listed], TOPICS_FILE)
        drawn = [
            (t["category"], list(t["seeds"]), list(t["training"]))
            for t in listed
            if t["category"] in names
        ]
    else:
        if task_set == "validation":
            known, where = list(VALIDATION_CATEGORIES), "the validation categories"
            missing = [name for name in known if not _category_pages(bundle, name)]
            if missing:
                raise FocusedError(
                    f"{bundle.path.parent}: validation category {missing[0]!r} is not in the"
                    " labels (the validation categories are Wikispeedia's; give --categories)"
                )
        else:
            known = list(dict.fromkeys(c.strip().strip("/") for c in categories if c.strip()))
            where = "--categories"
            if not known:
                raise FocusedError("--categories: no category given")
        drawn = []
        for category in _wanted(topics, known, where):
            task = sampled_task(bundle, graph, category, seed=seed)
            drawn.append((category, task.seeds, task.training))
    tasks = []
    for category, seeds, training in drawn:
        relevant = _category_pages(bundle, category)
        if dist is not None:
            train_keys = {bundle.key(url) for url in training}
            candidates = relevant - train_keys
            n = len(seeds)
            keys = dist_seeds(graph.digraph, candidates, dist, n, exclude=train_keys, seed=seed)
            if not keys:
                raise FocusedError(f"{category}: no page is {dist} links from its targets")
            seeds = [bundle.pages[key].url for key in keys]
        skip = {bundle.key(url) for url in (*seeds, *training)}
        words = tuple((keywords or USER_KEYWORDS).get(category, ()))
        tasks.append(
            Task(category, seeds, training, relevant, relevant - skip, words, bundle.copies)
        )
    return tasks


def difficulty(graph: WebGraph, task: Task) -> dict[str, Any]:
    """Srinivasan et al. 2005's topic characteristics, on the bundle's link graph.

    - popularity: share of the web's pages that are targets or link to a target;
    - cohesiveness: share of the targets' out-links that point to targets;
    - authoritativeness: mean in-degree of targets over the mean in-degree of all pages
      (above 1: the web points at the topic more than at an average page);
    - seed_target_similarity: mean tf-idf cosine of the seeds to the targets' centroid.
    """
    targets = task.targets
    links = graph.digraph
    pages = len(graph.links)
    linking = nx.node_boundary(links.reverse(copy=False), targets)  # other pages linking in
    out = [k for _, k in links.out_edges(targets)]
    in_degree = sum(d for _, d in links.in_degree(targets))  # a target not in it: 0
    mean_degree = links.number_of_edges() / max(pages, 1)
    docs = [graph.texts[t] for t in targets if t in graph.texts]
    seed_docs = [graph.texts.get(graph.key(url), "") for url in task.seeds]
    similarity = CentroidModel().fit(docs).relevance(seed_docs) if docs else np.zeros(1)
    return {
        "targets": len(targets),
        "popularity": round(len(targets | linking) / max(pages, 1), 4),
        "cohesiveness": round(sum(k in targets for k in out) / max(len(out), 1), 4),
        "authoritativeness": round(in_degree / max(len(targets), 1) / max(mean_degree, 1e-9), 4),
        "seed_target_similarity": round(float(np.mean(similarity)), 4),
    }
