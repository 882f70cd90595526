"""Batsakis et al. 2009's learning crawler: a hidden Markov model of how far a page is from a
relevant one.

Pages are seen through two states (Batsakis et al. §3.3, after Liu et al.):

- the *observation*: the page's cluster. Relevant pages are cluster 0; the others are
  clustered by K-means on their tf-idf vectors into clusters 1..K;
- the *hidden state*: the number of links from the page to the nearest relevant page reached
  from it (0, 1, 2, and 3 for "3 or more").

From training pages linked into paths (a browse session, or the tree of a crawl: each page has
at most one parent, the page it was reached from) the model counts the initial distribution
π (the share of pages in each state), the transition matrix A (parent state -> child state)
and the emission matrix B (state -> cluster), with additive smoothing. While crawling, the
forward recursion carries the state distribution α from a page to the pages it links to, and
a page's links get P(the next page is relevant), the probability of state 0 one step on.

Text goes in as term counts (:func:`term_counts`: hashed, stemmed terms, the TERMS_KEPT most
frequent of a page), so a page is a small sparse row that can be kept and sent cheaply.
Nothing here imports Scrapy or Redis.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.cluster import KMeans
from sklearn.feature_extraction.text import HashingVectorizer

from focused.relevance.base import Estimator
from focused.relevance.taxonomy import EXAMPLE_SUFFIXES
from focused.relevance.text import analyze, page_text

__all__ = ["N_FEATURES", "TERMS_KEPT", "PathHMM", "read_path_pages", "read_paths", "term_counts"]

N_FEATURES = 1 << 22  # hashed term space: collisions are rare at a crawl's vocabulary
TERMS_KEPT = 100  # most frequent terms kept of a page (what a training page costs to keep)
_HASHER = HashingVectorizer(
    analyzer=partial(analyze, stem=True),
    n_features=N_FEATURES,
    alternate_sign=False,
    norm=None,
    dtype=np.float32,
)


def term_counts(texts: Sequence[str]) -> sp.csr_matrix:
    """Counts of the hashed, stemmed terms of each text, its TERMS_KEPT most frequent only."""
    counts = _HASHER.transform(texts).tocsr()
    for row in range(counts.shape[0]):
        start, end = counts.indptr[row], counts.indptr[row + 1]
        if end - start > TERMS_KEPT:
            data = counts.data[start:end]
            data[np.argsort(-data, kind="stable")[TERMS_KEPT:]] = 0
    counts.eliminate_zeros()
    return counts


def read_paths(file: str | os.PathLike) -> list[list[Path]]:
    """The browse paths of a paths file: one saved page (.html, .htm or .txt, relative to the
    file) a line, in the order visited; a blank line ends a path; ``#`` starts a comment.

    Raises ValueError naming the line of a missing or unreadable page, or a file of no page.
    """
    file = Path(file)
    paths: list[list[Path]] = [[]]
    for number, raw in enumerate(file.read_text(errors="replace").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            if paths[-1]:
                paths.append([])
            continue
        page = (file.parent / line).resolve()
        if not page.name.lower().endswith(EXAMPLE_SUFFIXES):
            raise ValueError(f"line {number}: not a saved page (.html, .htm, .txt): {line}")
        if not page.is_file():
            raise ValueError(f"line {number}: page not found: {page}")
        paths[-1].append(page)
    paths = [path for path in paths if path]
    if not paths:
        raise ValueError("no pages (one saved page a line, a blank line between paths)")
    return paths


def read_path_pages(paths: list[list[Path]]) -> list[list[str]]:
    """The documents of the pages of each path: HTML through ``page_text``, as crawled pages
    are seen; .txt as is."""
    documents = []
    for path in paths:
        texts = []
        for page in path:
            text = page.read_bytes().decode("utf-8", errors="replace")
            texts.append(text if page.suffix.lower() == ".txt" else page_text(text).document)
        documents.append(texts)
    return documents


def _unit_rows(matrix: sp.csr_matrix) -> sp.csr_matrix:
    norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return sp.csr_matrix(sp.diags(1.0 / norms) @ matrix)


def _top_terms(rows: np.ndarray, keep: int) -> sp.csr_matrix:
    """Dense rows cut to their ``keep`` largest weights, unit length, as sparse float32."""
    rows = np.array(rows, dtype=np.float64)
    if rows.shape[1] > keep:
        cut = np.argpartition(-rows, keep, axis=1)[:, keep:]
        np.put_along_axis(rows, cut, 0.0, axis=1)
    return _unit_rows(sp.csr_matrix(rows)).astype(np.float32)


class PathHMM(Estimator):
    """The hidden Markov model of Batsakis et al. 2009's learning crawler, fitted on linked pages.

    Parameters
    ----------
    n_clusters : K, the clusters of irrelevant pages (fewer when there are fewer distinct
        irrelevant pages); observations are 0 (relevant) and 1..K.
    n_states : hidden states: links to the nearest relevant page 0 .. n_states - 2, and
        n_states - 1 for that many or more (the paper's 4: 0, 1, 2, 3+).
    smoothing : added to every count of π, A and B (Laplace's rule at 1), so that a state or
        cluster unseen in training keeps some probability.
    tie_weight : weight of P(relevant in two steps) added to P(relevant next) in
        :meth:`priority`, the paper's tie-break between clusters of (nearly) equal
        one-step probability.
    centroid_terms : weights kept of each centroid (the largest), so a model is small to
        store and send.
    random_state : K-means' seed.

    Attributes
    ----------
    features_ : hashed term ids seen in training, sorted; the columns of the vectors below.
    idf_ : their inverse document frequency (smooth, as scikit-learn's), and ``idf_unseen_``
        that of a term never seen.
    centroids_ : (K + 1, features) unit rows: the relevant pages' centroid, then the K-means
        centroids of the irrelevant pages.
    startprob_, transmat_, emissionprob_ : π (states), A (states x states), B (states x
        K + 1).
    labels_, states_ : each training page's observation and hidden state.
    """

    def __init__(
        self,
        *,
        n_clusters: int = 10,
        n_states: int = 4,
        smoothing: float = 1.0,
        tie_weight: float = 0.01,
        centroid_terms: int = 1000,
        random_state: int | None = 0,
    ):
        self.n_clusters = n_clusters
        self.n_states = n_states
        self.smoothing = smoothing
        self.tie_weight = tie_weight
        self.centroid_terms = centroid_terms
        self.random_state = random_state

    def fit(
        self, X: sp.spmatrix, y: Sequence[bool] | np.ndarray, parents: Sequence[int] | np.ndarray
    ) -> PathHMM:
        """Fit on pages: ``X`` their term counts (:func:`term_counts`), ``y`` whether each is
        relevant, ``parents`` the row of the page each was reached from (-1: a path's start).

        A page's state is its distance in links to the nearest relevant page among the pages
        reached from it (itself, its children, their children...), capped at n_states - 1; a
        page from which no relevant page was reached, such as a page after the last relevant
        page of a browse path, is in the last state ("3+").
        """
        X = sp.csr_matrix(X, dtype=np.float64)
        relevant = np.asarray(y, dtype=bool)
        parent = np.asarray(parents, dtype=np.int64)
        n = X.shape[0]
        if len(relevant) != n or len(parent) != n:
            raise ValueError(
                f"X, y and parents differ in length: {n}, {len(relevant)}, {len(parent)}"
            )
        if n and (parent.min() < -1 or parent.max() >= n or np.any(parent == np.arange(n))):
            raise ValueError("parents must be rows of X (or -1), never the page itself")
        if self.n_states < 2 or self.n_clusters < 1 or self.smoothing < 0:
            raise ValueError("need n_states >= 2, n_clusters >= 1 and smoothing >= 0")
        if not relevant.any() or relevant.all():
            raise ValueError("need relevant and irrelevant pages to learn from")
        # tf-idf over the terms seen in training (sublinear tf, as the centroid model).
        self.features_, columns = np.unique(X.indices, return_inverse=True)
        X = sp.csr_matrix((np.log1p(X.data), columns, X.indptr), (n, len(self.features_)))
        df = np.bincount(columns, minlength=len(self.features_))
        self.idf_ = np.log((1 + n) / (1 + df)) + 1.0
        self.idf_unseen_ = float(np.log(1 + n) + 1.0)
        vectors = _unit_rows(X @ sp.diags(self.idf_))
        # Observations: relevant pages are cluster 0, K-means clusters the others into 1..K.
        irrelevant = vectors[~relevant]
        distinct = len({(tuple(r.indices), tuple(np.round(r.data, 6))) for r in irrelevant})
        k = min(self.n_clusters, distinct)
        kmeans = KMeans(n_clusters=k, n_init=3, random_state=self.random_state).fit(irrelevant)
        observations = np.zeros(n, dtype=np.int64)
        observations[~relevant] = kmeans.labels_ + 1
        relevant_centroid = np.asarray(vectors[relevant].mean(axis=0))
        self.centroids_ = _top_terms(
            np.vstack([relevant_centroid, kmeans.cluster_centers_]), self.centroid_terms
        )
        self.labels_, self.states_ = observations, self._states(relevant, parent)
        self._count(self.states_, observations, parent)
        return self

    def _states(self, y: np.ndarray, parents: np.ndarray) -> np.ndarray:
        """Links from each page to the nearest relevant page reached from it, capped."""
        last = self.n_states - 1
        distance = np.where(y, 0, last)
        has_parent = parents >= 0
        for _ in range(last):  # a relevant page's distance climbs one link per round
            np.minimum.at(distance, parents[has_parent], distance[has_parent] + 1)
        return distance

    def _count(self, states: np.ndarray, observations: np.ndarray, parents: np.ndarray) -> None:
        s, c, a = self.n_states, self.centroids_.shape[0], self.smoothing
        pi = np.bincount(states, minlength=s) + a
        has_parent = parents >= 0
        moves = np.zeros((s, s))
        np.add.at(moves, (states[parents[has_parent]], states[has_parent]), 1)
        emitted = np.zeros((s, c))
        np.add.at(emitted, (states, observations), 1)
        moves += a
        emitted += a
        with np.errstate(invalid="ignore"):  # a row of zeros without smoothing: uniform
            self.startprob_ = pi / pi.sum()
            self.transmat_ = np.nan_to_num(moves / moves.sum(axis=1, keepdims=True), nan=1 / s)
            self.emissionprob_ = np.nan_to_num(
                emitted / emitted.sum(axis=1, keepdims=True), nan=1 / c
            )

    def vectors(self, X: sp.spmatrix) -> sp.csr_matrix:
        """Unit tf-idf rows of term counts, in the columns of ``features_`` (a term never seen
        in training counts in a row's length only)."""
        self._check_fitted("emissionprob_")
        X = sp.csr_matrix(X, dtype=np.float64)
        at = np.searchsorted(self.features_, X.indices).clip(0, len(self.features_) - 1)
        seen = self.features_[at] == X.indices
        weights = np.log1p(X.data) * np.where(seen, self.idf_[at], self.idf_unseen_)
        rows = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
        norms = np.sqrt(np.bincount(rows, weights**2, minlength=X.shape[0]))
        norms[norms == 0] = 1.0
        return sp.csr_matrix(
            (weights[seen] / norms[rows[seen]], (rows[seen], at[seen])),
            shape=(X.shape[0], len(self.features_)),
        )

    def similarities(self, X: sp.spmatrix) -> np.ndarray:
        """Cosine of each row of term counts to each centroid: (rows, K + 1)."""
        return np.asarray((self.vectors(X) @ self.centroids_.T).todense())

    def observation(self, X: sp.spmatrix, relevant: Sequence[bool] | None = None) -> np.ndarray:
        """The cluster of each row of term counts: the nearest centroid (cosine). With
        ``relevant`` (what the crawl's classifier says), relevant pages are cluster 0 and the
        others take the nearest of clusters 1..K, as training pages did."""
        similarity = self.similarities(X)
        if relevant is None:
            return similarity.argmax(axis=1)
        return np.where(np.asarray(relevant, bool), 0, similarity[:, 1:].argmax(axis=1) + 1)

    def centroid_similarity(self, X: sp.spmatrix) -> np.ndarray:
        """Cosine of each row of term counts to the relevant pages' centroid (cluster 0)."""
        return self.similarities(X)[:, 0]

    def forward(self, alpha: np.ndarray | None, observation: int) -> np.ndarray:
        """One step of the forward recursion (the paper's Eq. 5), normalised to sum 1:
        α_t(j) ∝ B[j, c_t] · Σ_i α_{t-1}(i) A[i, j]; a path's first page starts from
        α_0 = π (``alpha`` None)."""
        self._check_fitted("emissionprob_")
        before = self.startprob_ if alpha is None else np.asarray(alpha, dtype=np.float64)
        step = (before @ self.transmat_) * self.emissionprob_[:, observation]
        total = step.sum()
        return step / total if total > 0 else self.startprob_.copy()

    def next_relevant(self, alpha: np.ndarray, steps: int = 1) -> float:
        """P(the page ``steps`` links on is relevant) from a page's α (Eq. 6 at state 0)."""
        self._check_fitted("emissionprob_")
        return float((alpha @ np.linalg.matrix_power(self.transmat_, steps))[0])

    def priority(self, alpha: np.ndarray) -> float:
        """The HMM priority of a page's links in [0, 1]: P(relevant next), ties (and near
        ties) broken by P(relevant in two steps) at weight ``tie_weight``."""
        one, two = self.next_relevant(alpha), self.next_relevant(alpha, 2)
        return (one + self.tie_weight * two) / (1 + self.tie_weight)
