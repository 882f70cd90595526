"""Taxonomy of example documents and the hierarchical Bayes classifier of Chakrabarti et al.
(1999, section 3.1): Pr[root|d] = 1, Pr[c|d] = Pr[parent(c)|d] Pr[c|d,parent(c)], and the
relevance of a page R(d) = sum of Pr[c|d] over the good categories."""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from focused.errors import TopicError
from focused.relevance.base import Estimator
from focused.relevance.counts import Rows, rows_times, terms
from focused.relevance.text import analyze, page_text

__all__ = [
    "EXAMPLE_SUFFIXES",
    "HierarchicalClassifier",
    "TaxonomyExamples",
    "example_files",
    "example_text",
    "in_good",
    "read_taxonomy",
]

EXAMPLE_SUFFIXES = (".txt", ".html", ".htm")
_NB = ("multinomial", "complement")


@dataclass(frozen=True)
class TaxonomyExamples:
    """Example documents with their category paths, and every category node of the tree."""

    texts: list[str]
    labels: list[str]
    categories: list[str]


def example_files(folder: str | os.PathLike) -> list[tuple[Path, str]]:
    """Example files of a taxonomy folder with their category ("A/B/C"), sorted.

    Every sub-folder is a category named by its path below ``folder``; every .txt/.html/.htm
    file in it is one example of that category, at any depth. Files directly in ``folder``
    belong to no category (the root is "everything") and are not used; hidden files and
    folders are skipped. The examples must fill two categories or more. Separate from reading
    the files so a model cache can tell whether the examples changed without parsing them.
    """
    root = Path(folder)
    if not root.exists():
        raise TopicError(root, "", "taxonomy folder does not exist")
    if not root.is_dir():
        raise TopicError(root, "", "taxonomy is not a folder")
    found = []
    for here, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        category = Path(here).relative_to(root).as_posix()
        if category == ".":
            continue
        found += [
            (Path(here, name), category)
            for name in files
            if name.lower().endswith(EXAMPLE_SUFFIXES) and not name.startswith(".")
        ]
    if not found:
        raise TopicError(root, "", "no example files (.txt, .html, .htm) in any category folder")
    categories = {category for _, category in found}
    if len(categories) < 2:  # nothing to choose between: every page would be in it, R = 1
        raise TopicError(
            root, "", f"examples in one category only ({categories.pop()!r}): need two or more"
        )
    return sorted(found)


def _ancestors(path: str) -> list[str]:
    """The path and every ancestor of it, root ("") excluded: "A/B" -> ["A", "A/B"]."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


def in_good(category: str, good: Collection[str]) -> bool:
    """Whether a category is good: it or one of its ancestors is (descendants inherit
    goodness)."""
    return any(node in good for node in _ancestors(category))


# Characters that no text file has many of: control characters other than white space. A file
# with a NUL byte, or more of these than this share of its characters, is not text.
CONTROL = "".join(map(chr, [*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20)]))
MAX_CONTROL_SHARE = 0.01


def example_text(path: Path, folder: Path) -> str:
    """The text of one example file of ``folder``: decoded as UTF-8, bad bytes replaced; HTML
    examples through ``page_text`` as crawled pages are. A file that is not text (an image or
    a PDF renamed .txt) is a TopicError that names it, not a silent model of noise."""
    name = path.relative_to(folder)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise TopicError(folder, "", f"cannot read example {name}: {exc.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    if b"\x00" in raw or sum(map(text.count, CONTROL)) > MAX_CONTROL_SHARE * len(text):
        raise TopicError(folder, "", f"{name} is not a text or HTML file (binary bytes)")
    return text if path.suffix.lower() == ".txt" else page_text(text).document


def read_taxonomy(folder: str | os.PathLike) -> TaxonomyExamples:
    """Read a taxonomy folder (see ``example_files`` and ``example_text``). Folders with no
    example anywhere below them are not categories: there is nothing to learn them from."""
    texts, labels = [], []
    for path, category in example_files(folder):
        texts.append(example_text(path, Path(folder)))
        labels.append(category)
    categories = sorted({node for label in set(labels) for node in _ancestors(label)})
    return TaxonomyExamples(texts, labels, categories)


class HierarchicalClassifier(Estimator):
    """Hierarchical naive Bayes over a category tree, vectorised over batches of documents.

    One multinomial NB per internal node p decides among p's children; a child's training
    documents are all examples in its subtree. Examples filed at p itself (not in a child)
    form one more outcome of p, "p itself", so a page about p but none of its children keeps
    its mass at p: it counts for p's relevance, and p can be the best-matching category.

    Parameters
    ----------
    good : categories marked good; descendants inherit goodness.
    nb : ``"multinomial"`` (MultinomialNB: Bayes with class priors, as in the paper) or
        ``"complement"`` (ComplementNB weights, no priors; kept for comparison).
    alpha : additive (Lidstone) smoothing of the word counts.
    stem : Porter-stem terms (see ``text.analyze``).
    min_df, max_features : vocabulary pruning, as in ``CountVectorizer``.
    pseudo_length : evidence cap, in words. NB multiplies one likelihood per word as if words
        were independent, so a 2,000-word page differs between siblings by hundreds of nats
        and every posterior is 0 or 1: R(d) then carries no ranking information for the
        frontier and a single wrong turn near the root zeroes it. A page's counts are scaled
        so it weighs at most ``pseudo_length`` words (its word distribution unchanged; a
        temperature of length/pseudo_length on the likelihood). Short texts such as anchors
        keep their own, small, weight. Training examples are capped the same way, so every
        example weighs alike and no long page dominates its category's word distribution
        (``alpha`` is relative to that). ``None`` uses raw counts (textbook NB).

    Defaults from ``benchmarks/classifier.py`` on Wikispeedia: multinomial beat complement
    on R of titles (anchor-like texts) and on R's AUC; a cap of 50 words kept the AUC of raw
    counts or better while no page's R underflows; alpha 0.01 gave the best category.

    Attributes
    ----------
    classes_ : every category node, sorted; the columns of ``predict_proba``.
    outcomes_ : the category of each outcome column (a node, or a node "itself").
    vocabulary_ : each term's column; weights_, bias_ : the stacked per-node NB
        log-probabilities (terms x outcomes) and log-priors.
    The other attributes ending in ``_`` describe the tree's layout over the outcome columns.
    """

    def __init__(
        self,
        *,
        good: Iterable[str] = (),
        nb: str = "multinomial",
        alpha: float = 0.01,
        stem: bool = True,
        min_df: int = 2,
        max_features: int | None = None,
        pseudo_length: float | None = 50.0,
    ):
        self.good = good
        self.nb = nb
        self.alpha = alpha
        self.stem = stem
        self.min_df = min_df
        self.max_features = max_features
        self.pseudo_length = pseudo_length

    # -- fitting ---------------------------------------------------------------------------

    def fit(self, X: Sequence[str], y: Sequence[str]) -> HierarchicalClassifier:
        """Fit on documents ``X`` filed under category paths ``y`` ("A/B/C")."""
        import scipy.sparse as sp
        from sklearn.feature_extraction.text import CountVectorizer

        X = _check_documents(X)
        y = [str(label).strip("/") for label in y]
        if len(X) != len(y):
            raise ValueError(f"X has {len(X)} documents but y has {len(y)} labels")
        if not X:
            raise ValueError("no training documents")
        if any("" in label.split("/") for label in y):
            raise ValueError("every label must be a category path such as 'A/B/C'")
        if self.nb not in _NB:
            raise ValueError(f"nb must be one of {sorted(_NB)}, not {self.nb!r}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, not {self.alpha!r}")
        if self.pseudo_length is not None and not self.pseudo_length > 0:
            raise ValueError(f"pseudo_length must be > 0 or None, not {self.pseudo_length!r}")
        good = [self.good] if isinstance(self.good, str) else list(self.good)

        nodes = sorted({node for label in set(y) for node in _ancestors(label)})
        missing = [g for g in good if g not in nodes]
        if missing:
            raise ValueError(f"good category {missing[0]!r} is not in the taxonomy")
        self.classes_ = np.array(nodes, dtype=object)

        vectorizer = CountVectorizer(
            analyzer=partial(analyze, stem=self.stem),
            min_df=self.min_df,
            max_features=self.max_features,
            dtype=np.float32,
        )
        try:
            found = vectorizer.fit_transform(X)
        except ValueError:  # scikit-learn's words for an empty vocabulary name its internals
            raise ValueError(
                f"no word is in {self.min_df} or more of the {len(X)} examples: add examples"
            ) from None
        self.vocabulary_ = {term: int(column) for term, column in vectorizer.vocabulary_.items()}
        rows = Rows(found.indptr, found.indices, found.data)
        counts = sp.csr_matrix((self._evidence(rows), found.indices, found.indptr), found.shape)
        self._build_tree(y, set(good))
        self._fit_nodes(counts, y)
        return self

    def _build_tree(self, y: list[str], good: set[str]) -> None:
        """Lay out the outcomes (one column per child of each internal node, and one per
        "itself" outcome) parents before children, each node's outcomes contiguous."""
        children: dict[str, set[str]] = defaultdict(set)
        for node in self.classes_:
            children[node.rpartition("/")[0]].add(node)
        own = set(y)  # nodes with examples filed directly at them
        labels: list[str] = []
        parents: list[int] = []
        itself: list[bool] = []
        starts: list[int] = []
        column = {"": -1}
        queue = [""]
        for node in queue:  # breadth first, so columns come in order of depth
            if not children[node]:
                continue
            starts.append(len(labels))
            for child in sorted(children[node]):
                column[child] = len(labels)
                labels.append(child)
                parents.append(column[node])
                itself.append(False)
                queue.append(child)
            if node in own:
                labels.append(node)
                parents.append(column[node])
                itself.append(True)
        self.outcomes_ = np.array(labels, dtype=object)
        self.outcome_parent_ = np.array(parents)
        self.outcome_itself_ = np.array(itself)
        self.group_starts_ = np.array(starts)
        self.node_columns_ = np.array([column[node] for node in self.classes_])
        self.terminal_columns_ = np.flatnonzero(
            np.array([itself[i] or not children[label] for i, label in enumerate(labels)])
        )
        self.outcome_good_ = np.array([in_good(label, good) for label in labels])
        topmost = [g for g in good if not any(a in good for a in _ancestors(g)[:-1])]
        self.good_columns_ = np.array(sorted(column[g] for g in topmost), dtype=int)
        depth = np.zeros(len(labels), dtype=int)
        for i, parent in enumerate(parents):  # parents come first
            depth[i] = 0 if parent < 0 else depth[parent] + 1
        self.levels_ = [np.flatnonzero(depth == d) for d in range(1, depth.max() + 1)]

    def _fit_nodes(self, counts: Any, y: list[str]) -> None:
        """One NB per internal node with more than one outcome (``counts``: a CSR matrix of the
        documents' evidence), stacked into one weight matrix so that scoring a batch is a
        single product."""
        from sklearn import naive_bayes

        nb = naive_bayes.MultinomialNB if self.nb == "multinomial" else naive_bayes.ComplementNB
        n_outcomes = len(self.outcomes_)
        weights = np.zeros((counts.shape[1], n_outcomes), dtype=np.float32)
        bias = np.zeros(n_outcomes)
        stops = [*self.group_starts_[1:], n_outcomes]
        group_of = np.searchsorted(stops, np.arange(n_outcomes), side="right")
        rows: dict[int, list[int]] = defaultdict(list)
        targets: dict[int, list[int]] = defaultdict(list)
        column = {label: i for i, label in enumerate(self.outcomes_) if not self.outcome_itself_[i]}
        itself = {label: i for i, label in enumerate(self.outcomes_) if self.outcome_itself_[i]}
        for doc, label in enumerate(y):
            path = [column[a] for a in _ancestors(label)]
            if label in itself:
                path.append(itself[label])
            for outcome in path:
                rows[group_of[outcome]].append(doc)
                targets[group_of[outcome]].append(outcome)
        for group, start in enumerate(self.group_starts_):
            if stops[group] - start < 2:
                continue  # an only child: Pr[c|d,parent] = 1, nothing to learn
            model = nb(alpha=self.alpha).fit(counts[rows[group]], targets[group])
            cols = model.classes_  # every outcome has examples, so all of start..stop
            weights[:, cols] = model.feature_log_prob_.T
            if self.nb == "multinomial":
                bias[cols] = model.class_log_prior_
        self.weights_, self.bias_ = weights, bias

    def _evidence(self, rows: Rows) -> np.ndarray:
        """The rows' counts as float32, each document's capped at ``pseudo_length`` words (see
        the class docstring): a document's counts scaled by min(1, pseudo_length / length)."""
        values = rows.values.astype(np.float32)
        if self.pseudo_length is None:
            return values
        total = np.concatenate(([0.0], np.cumsum(values, dtype=np.float64)))
        # whole counts: the same sums in any order, so float32 as SciPy's row sums give them
        lengths = (total[rows.indptr[1:]] - total[rows.indptr[:-1]]).astype(np.float32)
        scale = np.minimum(1.0, self.pseudo_length / np.maximum(lengths, 1.0))
        values *= np.repeat(scale, np.diff(rows.indptr)).astype(np.float32)
        return values

    # -- scoring ---------------------------------------------------------------------------

    def _outcome_log_proba(self, X: Sequence[str]) -> np.ndarray:
        """log Pr[outcome|d] for every outcome column, one row per document."""
        rows = terms(self, self.vocabulary_, self.stem).count(_check_documents(X))
        evidence = Rows(rows.indptr, rows.columns, self._evidence(rows))
        scores = rows_times(evidence, self.weights_, np.float32).astype(np.float64) + self.bias_
        # log Pr[c|d,parent]: a log-softmax within each node's contiguous block of outcomes.
        sizes = np.diff([*self.group_starts_, scores.shape[1]])
        top = np.repeat(np.maximum.reduceat(scores, self.group_starts_, axis=1), sizes, axis=1)
        scores -= top
        scores -= np.repeat(
            np.log(np.add.reduceat(np.exp(scores), self.group_starts_, axis=1)), sizes, axis=1
        )
        for columns in self.levels_:  # log Pr[c|d] = log Pr[parent|d] + log Pr[c|d,parent]
            scores[:, columns] += scores[:, self.outcome_parent_[columns]]
        return scores

    def predict_log_proba(self, X: Sequence[str]) -> np.ndarray:
        """log Pr[c|d], columns in the order of ``classes_`` (the root, always 1, left out)."""
        self._check_fitted("weights_")
        return self._outcome_log_proba(X)[:, self.node_columns_]

    def predict_proba(self, X: Sequence[str]) -> np.ndarray:
        """Pr[c|d] for every category node c, columns in the order of ``classes_``."""
        return np.exp(self.predict_log_proba(X))

    def _best(self, log_proba: np.ndarray) -> np.ndarray:
        """Column of the most probable terminal outcome (a leaf, or a node "itself")."""
        return self.terminal_columns_[np.argmax(log_proba[:, self.terminal_columns_], axis=1)]

    def _relevance(self, log_proba: np.ndarray) -> np.ndarray:
        if not len(self.good_columns_):
            return np.zeros(len(log_proba))
        good = log_proba[:, self.good_columns_]
        top = good.max(axis=1, keepdims=True)
        top[~np.isfinite(top)] = 0.0
        return np.exp(top[:, 0]) * np.exp(good - top).sum(axis=1)

    def predict(self, X: Sequence[str]) -> np.ndarray:
        """Best-matching category of each document (see ``score_pages``)."""
        self._check_fitted("weights_")
        return self.outcomes_[self._best(self._outcome_log_proba(X))]

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R(d) = sum of Pr[c|d] over the topmost good nodes (a good subtree counts once)."""
        self._check_fitted("weights_")
        return self._relevance(self._outcome_log_proba(X))

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R(d) and the best-matching category of each document, from one pass.

        The best category is the most probable of the leaves and of the internal nodes'
        "itself" outcomes (these probabilities sum to 1), not a greedy descent, which can
        commit to a wrong branch on the first step.
        """
        self._check_fitted("weights_")
        log_proba = self._outcome_log_proba(X)
        return self._relevance(log_proba), list(self.outcomes_[self._best(log_proba)])

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether a node on each document's best-matching category path is good: the test
        hard focus applies before following a page's links."""
        self._check_fitted("weights_")
        return self.outcome_good_[self._best(self._outcome_log_proba(X))]


def _check_documents(X: Sequence[str]) -> list[str]:
    if isinstance(X, str | bytes):
        raise TypeError("expected a list of documents, got a single string")
    X = list(X)
    if not all(isinstance(doc, str) for doc in X):
        raise TypeError("documents must be str")
    return X
