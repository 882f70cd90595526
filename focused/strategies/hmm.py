"""Batsakis et al. 2009's learning crawler: links scored by a hidden Markov model of the distance to
a relevant page (:class:`~focused.relevance.hmm.PathHMM`), learned from the crawl's own paths.

Until a model exists, links are scored as soft focus scores them, and every classified page is
logged for training (``hmm:log``: its URL fingerprint, its parent's, whether the crawl's
classifier found it relevant, its top term counts; about 0.6 kB). Once FOCUSED_HMM_WARMUP pages
are logged crawl-wide (at once with example browse paths in the topic's
``[strategy_options] paths``), one process takes ``hmm:lock`` and fits the model in a thread on
the log (with the example paths): the pages form a forest, each page under the page it was
found on. It stores the model's arrays in ``hmm`` under a new version, with the forward vector
α of every logged page, and every process loads that version at its next page. Refits follow
every FOCUSED_HMM_REFIT logged pages, on the last FOCUSED_HMM_MAX_PAGES.

With a model, a page's α is the forward step from its parent's α (read from ``hmm:alpha``:
any process may have fetched the parent) and its cluster; a page whose parent has no α (a seed,
or a parent fetched while the model was being fitted) starts a path. α is stored under the
page's URL fingerprint before its links are pushed: the fetch order would only be known in the
frontier call that pushes them, too late for another process that pops a child at once. All its
out-links get P(the next page is relevant), averaged (FOCUSED_HMM_CENTROID) with the page's
cosine to the relevant pages' centroid, or with a link score other than ``content`` with the
mean of the page's and the anchor's cosine (the paper's "page content / anchor text" variant).

Cost: one round trip per page to log or to store α, one more to read the parent's α; 16 bytes
of α (plus the field and hash overhead) per page fetched with a model. Stats:
``focused/hmm/logged``, ``fits``, ``fit_failed``, ``loads``, ``scored`` (pages whose links the
model scored), ``soft`` (pages scored as soft focus, before a model), ``path_starts``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, cast

import numpy as np
import scipy.sparse as sp

from focused.errors import FocusedError
from focused.relevance.hmm import N_FEATURES, PathHMM, read_path_pages, read_paths, term_counts
from focused.store.frontier.base import Link
from focused.store.frontier.records import fingerprint
from focused.store.lock import LEASE_S
from focused.store.strategy import HMMStore
from focused.strategies.focus import SoftFocus

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.statscollectors import StatsCollector

    from focused.items import Page
    from focused.spiders.focused import FocusedSpider
    from focused.store.crawl import CrawlStore
    from focused.store.frontier.queue import RedisFrontier
    from focused.store.lock import Lease
    from focused.topic.judge import Verdict

logger = logging.getLogger(__name__)

RECORD = np.dtype([("fp", ">u8"), ("parent", ">u8"), ("relevant", "u1")])
TERM = np.dtype([("term", ">u4"), ("count", ">u2")])
ALPHA = np.dtype("<f4")
LOCKED_WAIT_PAGES = 10  # pages before asking again for a lock another process held
ARRAYS = {  # field of the stored model -> its dtype
    "features": "<u4",
    "idf": "<f8",
    "centroids.data": "<f4",
    "centroids.indices": "<u4",
    "centroids.indptr": "<u4",
    "startprob": "<f8",
    "transmat": "<f8",
    "emissionprob": "<f8",
}

Examples = tuple[sp.csr_matrix, np.ndarray, np.ndarray]  # term counts, relevant, parent rows


def encode_page(fp: int, parent: int, relevant: bool, counts: sp.csr_matrix) -> bytes:
    """A training-log record: the page's and its parent's fingerprints (0: none), whether it
    is relevant, then its term counts."""
    head = np.array([(fp, parent, relevant)], dtype=RECORD).tobytes()
    terms = np.empty(counts.nnz, dtype=TERM)
    terms["term"], terms["count"] = counts.indices, np.minimum(counts.data, 65535)
    return head + terms.tobytes()


def decode_pages(records: list[bytes]) -> tuple[np.ndarray, sp.csr_matrix]:
    """The records (fp, parent, relevant) and term counts (one row each) of log records."""
    heads = np.frombuffer(b"".join(r[: RECORD.itemsize] for r in records), dtype=RECORD)
    terms = [np.frombuffer(r[RECORD.itemsize :], dtype=TERM) for r in records]
    indptr = np.cumsum([0, *(len(t) for t in terms)])
    joined = np.concatenate(terms) if terms else np.empty(0, dtype=TERM)
    counts = sp.csr_matrix(
        (joined["count"].astype(np.float32), joined["term"].astype(np.int64), indptr),
        shape=(len(records), N_FEATURES),
    )
    return heads, counts


def dump_model(model: PathHMM) -> dict[str, bytes]:
    """The fitted model as Redis hash fields: its parameters (JSON) and arrays (raw)."""
    arrays = {
        "features": model.features_,
        "idf": model.idf_,
        "centroids.data": model.centroids_.data,
        "centroids.indices": model.centroids_.indices,
        "centroids.indptr": model.centroids_.indptr,
        "startprob": model.startprob_,
        "transmat": model.transmat_,
        "emissionprob": model.emissionprob_,
    }
    fields = {
        name: np.ascontiguousarray(a, dtype=ARRAYS[name]).tobytes() for name, a in arrays.items()
    }
    meta = {"params": model.get_params(), "idf_unseen": model.idf_unseen_}
    meta["shape"] = list(model.centroids_.shape)
    return {"meta": json.dumps(meta).encode(), **fields}


def load_model(fields: Mapping[str, bytes]) -> PathHMM:
    """The model :func:`dump_model` stored."""
    meta = json.loads(fields["meta"])
    a = {name: np.frombuffer(fields[name], dtype=ARRAYS[name]) for name in ARRAYS}
    model = PathHMM(**meta["params"])
    states, clusters = model.n_states, meta["shape"][0]
    model.features_ = a["features"].astype(np.int64)
    model.idf_, model.idf_unseen_ = a["idf"], meta["idf_unseen"]
    model.centroids_ = sp.csr_matrix(
        (a["centroids.data"], a["centroids.indices"], a["centroids.indptr"]),
        shape=tuple(meta["shape"]),
    )
    model.startprob_ = a["startprob"]
    model.transmat_ = a["transmat"].reshape(states, states)
    model.emissionprob_ = a["emissionprob"].reshape(states, clusters)
    return model


def path_alphas(model: PathHMM, parents: np.ndarray) -> np.ndarray:
    """The forward vector α of every training page, its parent's first (a page without a
    parent among them starts from π), from the observations the model was fitted with."""
    alphas = np.full((len(parents), model.n_states), np.nan)
    todo = np.ones(len(parents), dtype=bool)
    while todo.any():
        ready = todo & ((parents < 0) | ~np.isnan(alphas[parents.clip(0), 0]))
        if not ready.any():  # a cycle (a URL logged twice): start its pages from π
            ready = todo
        rows = np.flatnonzero(ready)
        before = np.where(
            (parents[rows] < 0)[:, None] | np.isnan(alphas[parents[rows].clip(0)]),
            model.startprob_,
            alphas[parents[rows].clip(0)],
        )
        step = (before @ model.transmat_) * model.emissionprob_[:, model.labels_[rows]].T
        alphas[rows] = step / step.sum(axis=1, keepdims=True)
        todo[rows] = False
    return alphas


class HMMStrategy(SoftFocus):
    """Batsakis et al. 2009's HMM crawler (with the relevant pages' centroid): see the module
    docstring."""

    def __init__(
        self,
        *,
        store: CrawlStore,
        model_params: Mapping[str, Any],
        warmup: int = 500,
        refit: int = 2000,
        max_pages: int = 10000,
        centroid: bool = True,
        lock_s: float = LEASE_S,
        max_chars: int = 0,
        examples: Examples | None = None,
        stats: StatsCollector | None = None,
        background: bool = True,
        link_score: str = "content",
    ):
        super().__init__()
        self.link_score = link_score
        if warmup < 1 and examples is None:
            raise ValueError("FOCUSED_HMM_WARMUP must be at least 1 without example paths")
        self.state = HMMStore(store, keep=max_pages)
        # The fit's thread has a copy of its own, without the crawl's callbacks (they belong
        # to the reactor's thread): it reports a lost connection by raising.
        self.worker_state = self.state.for_thread()
        self.model_params = dict(model_params)
        self.warmup, self.refit, self.max_pages = warmup, refit, max_pages
        self.centroid = centroid
        self.max_chars = max_chars
        self.examples = examples
        self.stats = stats
        self.model: PathHMM | None = None
        self.version = 0
        # Fits (and refits every ``refit`` pages) in a thread, one process at a time.
        self.fitter = self.worker_state.fitter(
            self.fit_and_store,
            lock_s=lock_s,
            every=refit,
            done=self.fitted,
            stats=stats,
            failures="focused/hmm/fit_failed",
            log=logger,
            background=background,
        )
        self.logged = 0  # pages logged crawl-wide, as last read
        self.not_before = 0  # logged count before which a fit is not tried again

    @classmethod
    def from_crawler(cls, crawler: Crawler, frontier: RedisFrontier) -> Self:
        return cls(**cls.options(crawler, frontier))

    @classmethod
    def options(cls, crawler: Crawler, frontier: RedisFrontier) -> dict[str, Any]:
        s = crawler.settings
        topic_plan = cast("FocusedSpider", crawler.spider).plan
        topic = topic_plan.topic
        examples = None
        if topic.strategy_options.get("paths"):
            examples = classified_examples(crawler, topic.strategy_options["paths"])
        return {
            "link_score": topic_plan.link_score,
            "store": frontier.store,
            "model_params": {"n_clusters": s.getint("FOCUSED_HMM_CLUSTERS")},
            "warmup": s.getint("FOCUSED_HMM_WARMUP"),
            "refit": s.getint("FOCUSED_HMM_REFIT"),
            "max_pages": s.getint("FOCUSED_HMM_MAX_PAGES"),
            "centroid": s.getbool("FOCUSED_HMM_CENTROID"),
            "lock_s": s.getfloat("FOCUSED_HMM_LOCK_S"),
            "max_chars": s.getint("FOCUSED_MAX_TEXT_CHARS"),
            "examples": examples,
            "stats": crawler.stats,
        }

    def _inc(self, name: str, n: int = 1) -> None:
        if self.stats is not None:
            self.stats.inc_value(f"focused/hmm/{name}", n)

    def links(self, page: Page, verdict: Verdict) -> list[Link]:
        text = page.text or ""
        counts = term_counts([f"{page.title or ''}\n{text[: self.max_chars or None]}"])
        fp = fingerprint(page.url)
        parent = fingerprint(page.parent) if page.parent else 0
        relevant = verdict.relevant
        logs = self.model is None or self.refit > 0
        record = encode_page(fp, parent, relevant, counts) if logs else None
        if self.model is None:
            self._inc("soft")
            self.sync(record, fp, None)
            return super().links(page, verdict)
        model = self.model
        before = self.parent_alpha(parent, model) if parent else None
        if before is None:
            self._inc("path_starts")
        alpha = model.forward(before, int(model.observation(counts, [relevant])[0]))
        self.sync(record, fp, alpha)  # before the links are pushed: children look it up
        self._inc("scored")
        return self.scored(page, verdict, model, model.priority(alpha), counts)

    def scored(
        self, page: Page, verdict: Verdict, model: PathHMM, hmm: float, counts: sp.csr_matrix
    ) -> list[Link]:
        """The page's out-links at the HMM's priority, with the centroid similarity or not."""
        depth = page.depth + 1
        links = verdict.links
        scores = np.full(len(links), hmm)
        if self.centroid and links:
            similarity: float | np.ndarray = float(model.centroid_similarity(counts)[0])
            if self.link_score != "content":  # links without anchor words: the page alone
                anchors = term_counts([link.anchor for link in links])
                similarity = np.where(
                    np.diff(anchors.indptr) > 0,
                    (similarity + model.centroid_similarity(anchors)) / 2,
                    similarity,
                )
            scores = (scores + similarity) / 2
        return [
            Link(link.url, float(score), depth, link.anchor)
            for link, score in zip(links, scores, strict=True)
        ]

    def parent_alpha(self, parent: int, model: PathHMM) -> np.ndarray | None:
        """The α stored for the page of fingerprint ``parent`` (of ``model``'s states), or
        None."""
        raw = self.state.alpha(parent)
        if raw is None or len(raw) != ALPHA.itemsize * model.n_states:
            return None
        return np.frombuffer(raw, dtype=ALPHA).astype(np.float64)

    def sync(self, record: bytes | None, fp: int, alpha: np.ndarray | None) -> None:
        """One round trip: log the page, store its α, read the model's version and counts;
        then load a newer model, or start a fit when one is due."""
        stored = alpha.astype(ALPHA).tobytes() if alpha is not None else None
        try:
            counts = self.state.log_page(record, fp, stored)
        except FocusedError:  # reported by the store; the crawl stops
            return
        if record is not None:
            self._inc("logged")
        version, logged = counts.version, counts.logged
        self.logged = logged
        if version > self.version and not self.fitter.running:  # a fit of ours stores it itself
            self.load()
        if self.fitter.running or logged < self.not_before:
            return
        # The fit learns from the version it was due at (``fit_and_store``).
        if self.model is None and version == 0:  # the first: at once with example paths
            if self.examples is not None or logged >= self.warmup:
                self.fitter.start(version)
        else:
            self.fitter.offer(logged, counts.fitted, version)

    def load(self) -> None:
        """Load the stored model (another process fitted it)."""
        stored = self.state.model()
        if stored is None:
            return
        fields, self.version = stored
        self.model = load_model(fields)
        self._inc("loads")

    def fit_and_store(self, seen: int, *, lease: Lease) -> tuple[PathHMM, int, int] | int | None:
        """The fitter's job, run under the crawl's HMM lock: fit on the log (and the example
        paths) and store the model and the α of the logged pages. Returns (model, version,
        pages), the logged count when there is not enough to learn from yet, or None when
        another process has stored a model since version ``seen`` (it fitted between this
        process's reading the version and taking the lock: that model is loaded instead).
        Runs in a thread, with the thread's copy of the HMM's state."""
        started = time.monotonic()
        records, logged, version = self.worker_state.training_log()
        if version > seen:
            return None
        heads, counts = decode_pages(records)
        rows = {int(fp): row for row, fp in enumerate(heads["fp"])}
        parents = np.array([rows.get(int(p), -1) for p in heads["parent"]], dtype=np.int64)
        parents[parents == np.arange(len(parents))] = -1
        X, y, all_parents = counts, heads["relevant"].astype(bool), parents
        if self.examples is not None:
            ex_counts, ex_y, ex_parents = self.examples
            X = sp.vstack([counts, ex_counts]).tocsr()
            y = np.concatenate([y, ex_y])
            shifted = np.where(ex_parents >= 0, ex_parents + len(parents), -1)
            all_parents = np.concatenate([parents, shifted])
        try:
            model = PathHMM(**self.model_params).fit(X, y, all_parents)
        except ValueError as exc:
            logger.info("HMM not fitted on %(n)d pages: %(why)s", {"n": len(y), "why": exc})
            return logged
        alphas = path_alphas(model, all_parents)[: len(parents)].astype(ALPHA)
        self.worker_state.store_alphas(
            ((int(fp), alpha.tobytes()) for fp, alpha in zip(heads["fp"], alphas, strict=True)),
            lease,
        )
        version = self.worker_state.store_model(dump_model(model), logged, lease)
        logger.info(
            "HMM fitted on %(n)d pages (%(relevant)d relevant, %(k)d clusters) in "
            "%(s).2f s: version %(version)d",
            {
                "n": len(y),
                "relevant": int(y.sum()),
                "k": model.centroids_.shape[0] - 1,
                "s": time.monotonic() - started,
                "version": version,
            },
        )
        return model, version, len(y)

    def fitted(self, result: tuple[PathHMM, int, int] | int | None) -> None:
        """A fit's result; None also when another process held the lock."""
        if isinstance(result, tuple):
            self.model, self.version, _ = result
            self._inc("fits")
        elif isinstance(result, int):  # not enough to learn from: wait for more pages
            self.not_before = result + max(self.warmup, 1)
            self._inc("fit_failed")
        else:  # another process is fitting: its model comes with a new version
            self.not_before = self.logged + LOCKED_WAIT_PAGES


def classified_examples(crawler: Crawler, paths_file: str) -> Examples:
    """The topic's example browse paths as training pages, relevant as the crawl's classifier
    says (the topic's model and threshold), each page under the one before it."""
    plan = cast("FocusedSpider", crawler.spider).plan
    documents = read_path_pages(read_paths(paths_file))
    max_chars = crawler.settings.getint("FOCUSED_MAX_TEXT_CHARS") or None
    texts = [text[:max_chars] for path in documents for text in path]
    relevance = plan.judge(crawler.settings).relevance(texts)
    threshold = plan.threshold
    parents: list[int] = []
    for path in documents:
        start = len(parents)
        parents += [-1, *range(start, start + len(path) - 1)]
    return term_counts(texts), np.asarray(relevance) >= threshold, np.array(parents)
