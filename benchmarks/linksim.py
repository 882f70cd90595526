"""A graph simulation of the crawl's link ordering, to screen link-ordering ideas cheaply.

    .venv/bin/python benchmarks/linksim.py [--set both] [--ideas all] [--pages 250]
        [--topics all] [--work .linksim] [--bundle ../shared/webs/wikispeedia]

``focused evaluate`` crawls for real: minutes per task and per variant. This script instead
replays the crawl of the default ``taxonomy`` crawler on Wikispeedia's link graph from what its
real classifier says: for each task (the development topics and the validation categories of
focused.lab.evaluation.tasks) the page R of every page and the R of every anchor text (averaged
with the R of the anchor and its WordNet gloss, as the crawl's judge does) are computed
once, with the task's topic files and fitted model (focused.lab.evaluation.run.prepare), and
cached in ``--work`` (``data/<category>.pkl``; ``data/graph.pkl``: links and anchors;
``data/glosses.pkl``: WordNet glosses; ``topics/<category>/``: the topic files). Whatever is
missing is computed, per task: 1-3 CPU minutes each, plus a few minutes once for the graph.

The simulation is best-first: seeds first, then always the frontier's best-scored URL; a URL's
score is what an idea's scoring function gives it (None: keep the score it has; a higher
score raises it). For each idea, one line gives the mean over the tasks of each set of the
share of the oracle's relevant pages (focused.lab.evaluation.oracle, not counting seeds and
training pages) found after 100 and ``--pages`` pages. With ``anchor_first`` (the real
frontier: a URL keeps the score of the first link that found it) it reproduces
``focused evaluate``'s figures for the taxonomy crawler within about .01.

Left out: concurrency (the real crawl fetches many pages at a time, so its order is only
roughly best-first), politeness (per-host delays reorder fetches), failures and redirects.
An idea that wins here is worth a real ``focused evaluate`` run, no more.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import pickle
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import numpy as np
from scipy import sparse
from sklearn.feature_extraction.text import HashingVectorizer
from sklearn.linear_model import LogisticRegression

from focused.lab.evaluation.oracle import oracle_order
from focused.lab.evaluation.tasks import VALIDATION_CATEGORIES
from focused.lab.webs.bundle import TOPICS_FILE
from focused.relevance.text import analyze

WIKISPEEDIA = Path(__file__).resolve().parents[2] / "shared" / "webs" / "wikispeedia"
SETS = ("development", "validation")
THRESHOLD = 0.5  # the default relevance threshold: a page at or above it counts as relevant


class Web(TypedDict):
    """The bundle's link graph (data/graph.pkl): out-links and texts as focused.lab.evaluation.graph
    reads them, and each page's distinct out-links with the anchor of the first one."""

    links: dict[str, list[str]]
    texts: dict[str, str]
    anchors: dict[str, list[tuple[str, str]]]
    urls: dict[str, str]


class Task(TypedDict):
    """One task (data/<category>.pkl): its pages, and what the classifier says of every page
    and every anchor text of the graph."""

    category: str
    set: str
    seeds: list[str]
    training: list[str]
    relevant: set[str]
    targets: set[str]
    page_r: dict[str, float]
    page_cat: dict[str, Any]
    anchor_raw: dict[str, float]  # R of the anchor text alone
    anchor_r: dict[str, float]  # as the pipeline scores it: mean of raw and glossed R


@dataclass
class Crawl:
    """One simulated crawl, as the scoring functions see it."""

    task: Task
    anchors: dict[str, list[tuple[str, str]]]
    fetched: set[str] = field(default_factory=set)
    best: dict[str, float] = field(default_factory=dict)  # a URL's score in the frontier
    parents: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (parent, anchor)
    memo: dict[str, Any] = field(default_factory=dict)  # an idea's own state


# score(crawl, parent, target, anchor): the target's score from this link, None to leave it.
Score = Callable[[Crawl, str, str, str], float | None]
# fetched(crawl, page): learn from a fetched page; returns pages whose links are re-scored.
Fetched = Callable[[Crawl, str], Iterable[str]]


@dataclass(frozen=True)
class Idea:
    """A link ordering: how a link scores its target, and what a fetched page teaches it."""

    score: Score
    fetched: Fetched | None = None


def crawl(
    task: Task, anchors: dict[str, list[tuple[str, str]]], idea: Idea, pages: int
) -> list[str]:
    """The fetch order of a best-first crawl of ``pages`` pages (seeds and training pages not
    counted) from the task's seeds. The frontier is a max-heap with lazy deletion: a URL is
    pushed again whenever its score rises, and stale entries are skipped."""
    skip = set(task["seeds"]) | set(task["training"])
    state = Crawl(task, anchors)
    order: list[str] = []
    heap: list[tuple[float, int, str]] = []
    ticket = itertools.count()

    def push(parent: str, target: str, anchor: str) -> None:
        score = idea.score(state, parent, target, anchor)
        if score is None:
            return
        if target not in state.best or score > state.best[target] + 1e-12:
            state.best[target] = score
            heapq.heappush(heap, (-score, next(ticket), target))

    def fetch(page: str) -> None:
        order.append(page)
        state.fetched.add(page)
        for parent in idea.fetched(state, page) if idea.fetched else ():
            for target, anchor in anchors.get(parent, ()):
                if target not in state.fetched:
                    push(parent, target, anchor)
        for target, anchor in anchors.get(page, ()):
            if target not in state.fetched:
                state.parents.setdefault(target, []).append((page, anchor))
                push(page, target, anchor)

    for seed in task["seeds"]:
        if seed not in state.fetched:
            fetch(seed)
    counted = sum(page not in skip for page in order)
    while heap and counted < pages:
        negative, _, page = heapq.heappop(heap)
        if page in state.fetched or state.best.get(page) != -negative:
            continue
        fetch(page)
        counted += page not in skip
    return order


def found_at(order: Sequence[str], task: Task, ks: Sequence[int]) -> dict[int, int]:
    """Targets found after each of ``ks`` pages of ``order`` (seeds, training pages skipped)."""
    skip = set(task["seeds"]) | set(task["training"])
    out: dict[int, int] = {}
    n = found = 0
    for page in order:
        if page in skip:
            continue
        n += 1
        found += page in task["targets"]
        if n in ks:
            out[n] = found
    return {k: out.get(k, found) for k in ks}


def oracle_found(links: dict[str, list[str]], task: Task, ks: Sequence[int]) -> dict[int, int]:
    """What the oracle (relevant pages first, breadth-first) finds after each of ``ks`` pages."""
    skip = set(task["seeds"]) | set(task["training"])
    order = oracle_order(links, task["seeds"], task["targets"], max(ks), skip)
    return found_at(order, task, ks)


# --- the ideas -------------------------------------------------------------------------------


def anchor(state: Crawl, a: str) -> float:
    """The anchor text's R as the pipeline scores it."""
    return state.task["anchor_r"].get(a, 0.0)


def page(state: Crawl, key: str) -> float:
    """A page's R."""
    return state.task["page_r"][key]


def first_only(score: Score) -> Score:
    """As the real frontier: a URL keeps the score of the first link that found it."""

    def first(state: Crawl, parent: str, target: str, a: str) -> float | None:
        return None if target in state.best else score(state, parent, target, a)

    return first


def anchor_max() -> Idea:
    """The anchor's R, the best over the links found so far."""
    return Idea(lambda state, p, q, a: anchor(state, a))


def anchor_first() -> Idea:
    """The anchor's R of the first link found: the crawler as shipped."""
    return Idea(first_only(anchor_max().score))


def mult_parent(w: float) -> Idea:
    """Anchor R damped by the parent's R: anchor * (1 - w + w * parent)."""
    return Idea(first_only(lambda state, p, q, a: anchor(state, a) * (1 - w + w * page(state, p))))


def add_parent(w: float) -> Idea:
    """Anchor R plus w times the parent's R, rescaled to [0, 1]."""
    return Idea(
        first_only(lambda state, p, q, a: (anchor(state, a) + w * page(state, p)) / (1 + w))
    )


def relparents(beta: float) -> Idea:
    """The best anchor R plus beta per relevant parent found so far."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        links = state.parents[q]
        best = max(anchor(state, b) for _, b in links)
        return best + beta * sum(page(state, parent) >= THRESHOLD for parent, _ in links)

    return Idea(score)


def noisy_or(w: float) -> Idea:
    """Noisy-or of the anchors found so far: 1 - prod(1 - w * anchor)."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        return 1 - float(np.prod([1 - w * anchor(state, b) for _, b in state.parents[q]]))

    return Idea(score)


def max_anchor_parent(w: float) -> Idea:
    """The best anchor R damped by the best parent R: anchor * (1 - w + w * parent)."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        links = state.parents[q]
        best = max(anchor(state, b) for _, b in links)
        return best * (1 - w + w * max(page(state, parent) for parent, _ in links))

    return Idea(score)


def glossed(state: Crawl, a: str) -> tuple[float, float | None]:
    """The anchor's R alone and with its gloss (None: WordNet has no gloss for it)."""
    raw, mean = state.task["anchor_raw"].get(a, 0.0), anchor(state, a)
    return raw, (None if abs(mean - raw) < 1e-12 else 2 * mean - raw)


def gloss_weight(w: float) -> Idea:
    """Anchor R weighting its glossed R by w instead of .5 (the pipeline's mean)."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        raw, gloss = glossed(state, a)
        return raw if gloss is None else (1 - w) * raw + w * gloss

    return Idea(first_only(score))


def gloss_max() -> Idea:
    """The better of the anchor's R alone and with its gloss."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        raw, gloss = glossed(state, a)
        return raw if gloss is None else max(raw, gloss)

    return Idea(first_only(score))


def sibling(w: float, prior: float = 1.0) -> Idea:
    """Anchor R mixed with the parent's yield: the smoothed share of its fetched children that
    were relevant; a fetched page re-scores its parents' links."""

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        relevant, n = state.memo.get(p, (0, 0))
        if n == 0:
            return anchor(state, a)
        return (1 - w) * anchor(state, a) + w * (relevant + prior * 0.5) / (n + prior)

    def fetched(state: Crawl, key: str) -> list[str]:
        parents = [parent for parent, _ in state.parents.get(key, ())]
        for parent in parents:
            relevant, n = state.memo.get(parent, (0, 0))
            state.memo[parent] = (relevant + (page(state, key) >= THRESHOLD), n + 1)
        return parents

    return Idea(score, fetched)


class Vectors:
    """Hashed rows of anchor texts and example titles (with their glosses, or alone), made once
    and shared by every task."""

    vectorizer = HashingVectorizer(
        n_features=2**16, alternate_sign=False, analyzer=analyze, norm="l2"
    )

    def __init__(self, glosses: dict[str, str], gloss: bool) -> None:
        self.glosses, self.gloss = glosses, gloss
        self.index: dict[str, int] = {}
        self.matrix = sparse.csr_matrix((0, 2**16))

    def rows(self, texts: Iterable[str]) -> list[int]:
        """The rows of ``texts``, vectorizing the new ones."""
        new = [t for t in dict.fromkeys(texts) if t not in self.index]
        if new:
            docs = [f"{t} {t} {self.glosses[t]}" if self.gloss else t for t in new]
            first = len(self.index)
            self.index.update((t, first + i) for i, t in enumerate(new))
            self.matrix = sparse.vstack(
                [self.matrix, self.vectorizer.transform(docs)], format="csr"
            )
        return [self.index[t] for t in texts]


@dataclass
class TitleModel:
    """A logistic regression from anchor text to "the linked page is relevant", fitted on the
    titles of the task's taxonomy examples and/or the anchors the crawl followed (labelled by
    the fetched page's R), refitted every ``refit`` followed anchors."""

    vectors: Vectors
    texts: list[str]
    labels: list[int]
    C: float = 1.0
    refit: int = 25
    learned: int = 0
    p: np.ndarray | None = None

    def fit(self) -> None:
        """Fit on the examples so far and predict every known text."""
        if len(set(self.labels)) < 2:
            self.p = None
            return
        model = LogisticRegression(C=self.C, class_weight="balanced", solver="liblinear")
        rows = self.vectors.rows(self.texts)  # may add rows: before reading the matrix
        model.fit(self.vectors.matrix[rows], self.labels)
        self.p = model.predict_proba(self.vectors.matrix)[:, 1]

    def learn(self, text: str, label: int) -> None:
        """Add a followed anchor and its page's label."""
        self.texts.append(text)
        self.labels.append(label)
        self.learned += 1
        if self.learned % self.refit == 0:
            self.fit()

    def prob(self, text: str) -> float | None:
        """P(relevant) of an anchor text, None while unfitted."""
        return None if self.p is None else float(self.p[self.vectors.index[text]])


def example_titles(folder: Path, category: str) -> tuple[list[str], list[int]]:
    """Titles (first lines) of a taxonomy's example pages, labelled 1 in the category."""
    titles, labels = [], []
    for path in folder.glob("**/*.txt"):
        titles.append(path.read_text(encoding="utf-8").split("\n", 1)[0])
        labels.append(int(str(path.relative_to(folder)).startswith(category + "/")))
    return titles, labels


@dataclass
class Titles:
    """What the title ideas share across tasks: the cache folder, the glosses, and the rows of
    every anchor text (made once per ``gloss`` choice)."""

    work: Path
    glosses: dict[str, str]
    anchors: list[str]
    vectors: dict[bool, Vectors] = field(default_factory=dict)

    def model(self, category: str, examples: bool, C: float, gloss: bool) -> TitleModel:
        """A task's TitleModel, fitted on its examples (if ``examples``)."""
        if gloss not in self.vectors:
            self.vectors[gloss] = Vectors(self.glosses, gloss)
            self.vectors[gloss].rows(self.anchors)
        folder = self.work / "topics" / stem(category) / "taxonomy"
        texts, labels = example_titles(folder, category) if examples else ([], [])
        model = TitleModel(self.vectors[gloss], texts, labels, C)
        model.fit()
        return model


TITLES: list[Titles] = []  # set by main when a title idea runs


def title(
    mix: float, examples: bool = True, learn: bool = True, C: float = 1.0, gloss: bool = True
) -> Idea:
    """Anchor R mixed (weight ``mix``) with a TitleModel's P(relevant) of the anchor text."""

    def model(state: Crawl) -> TitleModel:
        if "title" not in state.memo:
            state.memo["title"] = TITLES[0].model(state.task["category"], examples, C, gloss)
        return state.memo["title"]

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        prob = model(state).prob(a)
        return anchor(state, a) if prob is None else (1 - mix) * anchor(state, a) + mix * prob

    def fetched(state: Crawl, key: str) -> list[str]:
        links = state.parents.get(key)
        if learn and links:
            model(state).learn(links[0][1], int(page(state, key) >= THRESHOLD))
        return []

    return Idea(first_only(score), fetched)


def knn(lam: float, k: int = 5, min_similarity: float = 0.0) -> Idea:
    """The better of the anchor's R and ``lam`` times what the crawl learned: the
    similarity-weighted share of relevant pages among the ``k`` fetched pages whose anchors
    (with glosses) are nearest to this one (cosine at least ``min_similarity``)."""

    def vectors() -> Vectors:
        titles = TITLES[0]
        if True not in titles.vectors:
            titles.vectors[True] = Vectors(titles.glosses, True)
            titles.vectors[True].rows(titles.anchors)
        return titles.vectors[True]

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        rows, labels = state.memo.setdefault("knn", ([], []))
        if len(rows) < k:
            return anchor(state, a)
        table = vectors()
        similarity = (table.matrix[rows] @ table.matrix[table.index[a]].T).toarray().ravel()
        top = np.argsort(-similarity)[:k]
        weights = similarity[top]
        if weights.max() <= min_similarity:
            return anchor(state, a)
        learned = float(weights @ np.asarray(labels)[top] / weights.sum())
        return max(anchor(state, a), lam * learned)

    def fetched(state: Crawl, key: str) -> list[str]:
        links = state.parents.get(key)
        if links:
            rows, labels = state.memo.setdefault("knn", ([], []))
            rows.append(vectors().index[links[0][1]])
            labels.append(float(page(state, key) >= THRESHOLD))
        return []

    return Idea(first_only(score), fetched)


# name: (the idea for a parameter, or with none; the parameters run by default)
class VectorScores:
    """Each task's word-vector R of every anchor text (focused.relevance.vectors.CategoryVectors
    fitted on the task's taxonomy, as the crawler fits it; the mean of the anchor alone and
    with its gloss, as the classifier pipeline mixes it), computed once per task and
    temperature."""

    def __init__(self, work: Path, glosses: dict[str, str], anchors: list[str]):
        self.work, self.glosses, self.anchors = work, glosses, anchors
        self.scores: dict[tuple[str, float], dict[str, float]] = {}

    def of(self, category: str, temperature: float) -> dict[str, float]:
        if (category, temperature) not in self.scores:
            from focused.relevance.taxonomy import read_taxonomy
            from focused.relevance.vectors import CategoryVectors

            examples = read_taxonomy(self.work / "topics" / stem(category) / "taxonomy")
            model = CategoryVectors(good=[category], temperature=temperature)
            model.fit(examples.texts, examples.labels)
            glossed = [a for a in self.anchors if self.glosses.get(a)]
            alone = model.relevance(self.anchors)
            with_gloss = model.relevance([f"{a}\n{self.glosses[a]}" for a in glossed])
            r = dict(zip(self.anchors, alone.tolist(), strict=True))
            for a, g in zip(glossed, with_gloss.tolist(), strict=True):
                r[a] = (r[a] + g) / 2
            self.scores[category, temperature] = r
        return self.scores[category, temperature]


VECTORS: list[VectorScores] = []  # set by main when a vector idea runs


def vectors(weight: float, temperature: float = 0.03, mix: str = "log_odds") -> Idea:
    """Anchor R combined with the anchor's word-vector R, as the crawler's FOCUSED_VECTORS does
    (``vectors:1`` is its default): their log-odds added, the latter weighted ``weight``;
    with ``mix="mean"``, their mean weighted ``weight`` instead (``vectors_mean:0.5``)."""
    from focused.topic.judge import log_odds_sum

    def score(state: Crawl, p: str, q: str, a: str) -> float:
        if "vectors" not in state.memo:
            state.memo["vectors"] = VECTORS[0].of(state.task["category"], temperature)
        r, v = anchor(state, a), state.memo["vectors"].get(a, 0.0)
        if mix == "mean":
            return (1 - weight) * r + weight * v
        return float(log_odds_sum(np.array([r]), np.array([v]), weight)[0])

    return Idea(first_only(score))


IDEAS: dict[str, tuple[Callable[..., Idea], tuple[float, ...]]] = {
    "anchor_first": (anchor_first, ()),
    "anchor_max": (anchor_max, ()),
    "mult_parent": (mult_parent, (0.1, 0.3, 0.5)),
    "add_parent": (add_parent, (0.1, 0.3)),
    "relparents": (relparents, (0.02, 0.05, 0.1, 0.2)),
    "noisy_or": (noisy_or, (0.5, 0.9)),
    "max_anchor_parent": (max_anchor_parent, (0.1, 0.3)),
    "title_examples": (lambda mix: title(mix, learn=False), (0.5,)),
    "title": (title, (0.3, 0.5, 0.7)),
    "title_crawl": (lambda mix: title(mix, examples=False), (0.5,)),
    "title_c10": (lambda mix: title(mix, C=10.0), (0.5,)),
    "title_nogloss": (lambda mix: title(mix, gloss=False), (0.5,)),
    "gloss_weight": (gloss_weight, (0.0, 0.25, 0.75, 1.0)),
    "gloss_max": (gloss_max, ()),
    "sibling": (sibling, (0.2, 0.4)),
    "knn": (knn, (0.5, 0.8)),
    "knn_near": (lambda lam: knn(lam, min_similarity=0.4), (0.5,)),
    "vectors": (vectors, (0.5, 1.0, 2.0)),
    "vectors_t05": (lambda weight: vectors(weight, temperature=0.05), (1.0, 2.0)),
    "vectors_t10": (lambda weight: vectors(weight, temperature=0.1), (1.0, 2.0)),
    "vectors_mean": (lambda weight: vectors(weight, mix="mean"), (0.3, 0.5)),
}


def chosen(spec: str) -> list[tuple[str, Idea]]:
    """The ideas ``--ideas`` names: ``all``, or ``name`` (its default parameters) or
    ``name:value``, comma-separated."""
    out = []
    for item in IDEAS if spec == "all" else [s.strip() for s in spec.split(",") if s.strip()]:
        name, _, value = item.partition(":")
        if name not in IDEAS:
            raise SystemExit(f"unknown idea {name!r}; known: {', '.join(IDEAS)}")
        make, defaults = IDEAS[name]
        params = [float(value)] if value else list(defaults)
        out += [(f"{name} {v:g}", make(v)) for v in params] if params else [(name, make())]
    return out


# --- the cache -------------------------------------------------------------------------------


def stem(category: str) -> str:
    """A category's file name."""
    return category.replace("/", "_")


def categories(bundle_dir: Path, task_set: str) -> list[str]:
    """The task set's categories, without loading the bundle."""
    if task_set == "validation":
        return list(VALIDATION_CATEGORIES)
    listed = json.loads((bundle_dir / TOPICS_FILE).read_text(encoding="utf-8"))
    return [t["category"] for t in listed["topics"]]


def load(path: Path) -> Any:
    """A pickle of the cache."""
    with path.open("rb") as f:
        return pickle.load(f)


def dump(value: Any, path: Path) -> None:
    """Write a pickle of the cache (through a temporary file: an interrupted run leaves none)."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump(value, f)
    tmp.replace(path)


def graph_of(bundle: Any, path: Path) -> Web:
    """The bundle's link graph with anchors, cached in ``path``."""
    if path.exists():
        return load(path)
    from scrapy.http import HtmlResponse

    from focused.lab.evaluation.graph import WebGraph
    from focused.lab.webs.bundle import url_key
    from focused.links.extract import extract_links

    started = time.perf_counter()
    graph = WebGraph.from_bundle(bundle)
    anchors: dict[str, list[tuple[str, str]]] = {}
    for key in graph.links:
        page = bundle.pages[key]
        response = HtmlResponse(page.url, body=page.body, encoding="utf-8")
        seen: set[str] = set()
        anchors[key] = []
        for url, text, _ in extract_links(response):
            target = url_key(url)
            if target in bundle.pages and target != key and target not in seen:
                seen.add(target)
                anchors[key].append((target, text))
    web = Web(
        links=graph.links,
        texts=graph.texts,
        anchors=anchors,
        urls={k: p.url for k, p in bundle.pages.items()},
    )
    dump(web, path)
    print(f"graph: {len(anchors):,} pages, {time.perf_counter() - started:.0f}s", flush=True)
    return web


def add_glosses(glosses: dict[str, str], texts: Iterable[str], path: Path) -> dict[str, str]:
    """``glosses`` with those of ``texts`` added (WordNet's, "" without WordNet), saved."""
    missing = [t for t in dict.fromkeys(texts) if t not in glosses]
    if missing:
        from focused.topic.judge import anchor_glosser

        glosser = anchor_glosser("auto")
        glosses.update((t, glosser.gloss(t) if glosser else "") for t in missing)
        dump(glosses, path)
    return glosses


def prepare_tasks(work: Path, bundle_dir: Path, task_set: str, names: list[str]) -> None:
    """Compute the cache of the tasks ``names`` of ``task_set``: the topic files and model of
    the taxonomy crawler, and its R of every page and anchor text."""
    from focused.lab.evaluation.graph import WebGraph
    from focused.lab.evaluation.run import prepare
    from focused.lab.evaluation.tasks import load_tasks
    from focused.lab.webs.bundle import Bundle, url_key
    from focused.topic.files import load_topic
    from focused.topic.methods import topic_model

    data = work / "data"
    bundle = Bundle.load(bundle_dir)
    web = graph_of(bundle, data / "graph.pkl")
    graph = WebGraph(web["links"], web["texts"])
    glosses_path = data / "glosses.pkl"
    glosses = load(glosses_path) if glosses_path.exists() else {}
    keys = list(web["anchors"])
    texts = sorted({a for links in web["anchors"].values() for _, a in links})
    glosses = add_glosses(glosses, texts, glosses_path)
    for task in load_tasks(bundle, graph, ",".join(names), None, task_set=task_set):
        started = time.perf_counter()
        folder = work / "topics" / stem(task.category)
        prepare(bundle, graph, task, folder, crawlers=["taxonomy"])
        titles, _ = example_titles(folder / "taxonomy", task.category)
        glosses = add_glosses(glosses, titles, glosses_path)
        model = topic_model(load_topic(folder / "taxonomy.toml"), str(folder / "models"))
        page_r, page_cat = model.score_pages([web["texts"][k] for k in keys])
        raw = dict(zip(texts, map(float, model.score_pages(texts)[0]), strict=True))
        with_gloss = [t for t in texts if glosses[t]]
        scored = model.score_pages([f"{t}\n{glosses[t]}" for t in with_gloss])[0]
        final = dict(raw) | {
            t: (raw[t] + float(r)) / 2 for t, r in zip(with_gloss, scored, strict=True)
        }
        result = Task(
            category=task.category,
            set=task_set,
            seeds=[url_key(u) for u in task.seeds],
            training=[url_key(u) for u in task.training],
            relevant=set(task.relevant),
            targets=set(task.targets),
            page_r=dict(zip(keys, map(float, page_r), strict=True)),
            page_cat=dict(zip(keys, page_cat, strict=True)),
            anchor_raw=raw,
            anchor_r=final,
        )
        dump(result, data / f"{stem(task.category)}.pkl")
        print(f"{task_set} {task.category}: {time.perf_counter() - started:.0f}s", flush=True)


def tasks_of(work: Path, bundle_dir: Path, task_set: str, topics: str) -> list[Task]:
    """The task set's cached tasks (those ``topics`` names, or ``all``), computing the missing."""
    names = categories(bundle_dir, task_set)
    if topics != "all":
        wanted = {t.strip().strip("/") for t in topics.split(",")}
        names = [n for n in names if n in wanted or stem(n) in wanted]
    missing = [n for n in names if not (work / "data" / f"{stem(n)}.pkl").exists()]
    if missing:
        (work / "data").mkdir(parents=True, exist_ok=True)
        prepare_tasks(work, bundle_dir, task_set, missing)
    return [load(work / "data" / f"{stem(n)}.pkl") for n in names]


# --- the run ---------------------------------------------------------------------------------


def shares(
    web: Web, tasks: list[Task], idea: Idea, pages: int, oracle: dict[str, dict[int, int]]
) -> np.ndarray:
    """Mean over ``tasks`` of the share of the oracle's targets found at 100 and ``pages``."""
    ks = sorted({min(100, pages), pages})
    rows = []
    for task in tasks:
        if task["category"] not in oracle:
            oracle[task["category"]] = oracle_found(web["links"], task, ks)
        found = found_at(crawl(task, web["anchors"], idea, pages), task, ks)
        rows.append([found[k] / max(oracle[task["category"]][k], 1) for k in ks])
    return np.mean(rows, axis=0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=Path(".linksim"), help="the cache folder")
    parser.add_argument("--bundle", type=Path, default=WIKISPEEDIA)
    parser.add_argument("--set", choices=(*SETS, "both"), default="both")
    parser.add_argument("--topics", default="all", help="categories, comma-separated")
    parser.add_argument("--pages", type=int, default=250)
    parser.add_argument("--ideas", default="all", help="name or name:value, comma-separated")
    args = parser.parse_args()

    ideas = chosen(args.ideas)
    sets = SETS if args.set == "both" else (args.set,)
    tasks = {s: tasks_of(args.work, args.bundle, s, args.topics) for s in sets}
    tasks = {s: t for s, t in tasks.items() if t}
    if not tasks:
        raise SystemExit(f"no task named {args.topics!r} in {', '.join(sets)}")
    web: Web = load(args.work / "data" / "graph.pkl")
    if any(name.startswith(("title", "knn")) for name, _ in ideas):
        path = args.work / "data" / "glosses.pkl"
        anchors = sorted({a for links in web["anchors"].values() for _, a in links})
        titles = [
            title
            for task_list in tasks.values()
            for task in task_list
            for title in example_titles(
                args.work / "topics" / stem(task["category"]) / "taxonomy", task["category"]
            )[0]
        ]
        glosses = add_glosses(load(path) if path.exists() else {}, [*anchors, *titles], path)
        TITLES[:] = [Titles(args.work, glosses, anchors)]
    if any(name.startswith("vectors") for name, _ in ideas):
        anchors = sorted({a for links in web["anchors"].values() for _, a in links})
        VECTORS[:] = [VectorScores(args.work, load(args.work / "data" / "glosses.pkl"), anchors)]
    oracle: dict[str, dict[int, int]] = {}
    for name, idea in ideas:
        means = {s: shares(web, t, idea, args.pages, oracle) for s, t in tasks.items()}
        line = "  ".join(f"{s[:3]} " + "/".join(f"{v:.3f}" for v in m) for s, m in means.items())
        print(f"{name:28s} {line}", flush=True)


if __name__ == "__main__":
    main()
