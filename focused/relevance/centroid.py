"""Best-first relevance (Batsakis et al. 2009; Srinivasan et al. 2005's similarity to a topic
description): the tf-idf cosine of a page to the centroid of the topic's example pages.

No categories: a page is relevant to the degree it reads like the examples, so the model needs
only a folder of example pages, and it is the baseline every classifier must beat.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np

from focused.errors import TopicError
from focused.relevance.base import Estimator
from focused.relevance.taxonomy import EXAMPLE_SUFFIXES, _check_documents, example_text
from focused.relevance.text import analyze

__all__ = ["CentroidModel", "example_pages", "read_examples"]


def example_pages(folder: str | os.PathLike) -> list[Path]:
    """The .txt/.html/.htm files anywhere under ``folder``, sorted; hidden ones skipped.

    Separate from reading them so a model cache can tell whether they changed cheaply.
    """
    root = Path(folder)
    if not root.is_dir():
        raise TopicError(root, "", "examples folder does not exist")
    found = sorted(
        path
        for path in root.rglob("*")
        if path.is_file()
        and path.name.lower().endswith(EXAMPLE_SUFFIXES)
        and not any(part.startswith(".") for part in path.relative_to(root).parts)
    )
    if not found:
        raise TopicError(root, "", "no example files (.txt, .html, .htm)")
    return found


def read_examples(folder: str | os.PathLike) -> list[str]:
    """The example documents of ``folder``: .txt as is, HTML through ``page_text`` as crawled
    pages are, so that examples and pages are seen the same way (``taxonomy.example_text``,
    which refuses a file that is not text)."""
    return [example_text(path, Path(folder)) for path in example_pages(folder)]


class CentroidModel(Estimator):
    """Cosine similarity of a document's tf-idf vector to the examples' centroid.

    Parameters
    ----------
    threshold : similarity at which a page counts as on the topic (``best_path_good``, the
        test hard focus applies). Cosines of tf-idf vectors are small: 0.2 is already close.
    stem : Porter-stem terms (``text.analyze``), as the taxonomy classifier does.
    sublinear_tf : 1 + log(tf), so that one word repeated does not make a page.

    Attributes
    ----------
    vectorizer_ : the tf-idf vocabulary and idf of the examples.
    centroid_ : the unit-length mean of the examples' unit tf-idf vectors.
    """

    def __init__(self, *, threshold: float = 0.2, stem: bool = True, sublinear_tf: bool = True):
        self.threshold = threshold
        self.stem = stem
        self.sublinear_tf = sublinear_tf

    def fit(self, X: Sequence[str], y: object = None) -> CentroidModel:
        """Fit on the topic's example documents ``X`` (``y`` is ignored)."""
        from sklearn.feature_extraction.text import TfidfVectorizer

        X = _check_documents(X)
        if not X:
            raise ValueError("no example documents")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"threshold must be in [0, 1], not {self.threshold!r}")
        self.vectorizer_ = TfidfVectorizer(
            analyzer=partial(analyze, stem=self.stem),
            sublinear_tf=self.sublinear_tf,
            dtype=np.float32,
        )
        vectors = self.vectorizer_.fit_transform(X)
        centroid = np.asarray(vectors.mean(axis=0)).ravel()
        norm = np.linalg.norm(centroid)
        if not norm:
            raise ValueError("the examples have no terms")
        self.centroid_ = (centroid / norm).astype(np.float32)
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """Cosine of each document to the centroid, in [0, 1] (0 for a text of no known term)."""
        self._check_fitted("centroid_")
        vectors = self.vectorizer_.transform(_check_documents(X))  # rows are unit length
        return np.asarray(vectors @ self.centroid_, dtype=np.float64).ravel()

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R(d) and a category for each document; there are no categories, so None."""
        relevance = self.relevance(X)
        return relevance, [None] * len(relevance)

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each document is on the topic (R >= threshold): hard focus's test."""
        return self.relevance(X) >= self.threshold
