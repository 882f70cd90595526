"""Relevance learned from example pages (the "examples" method): a folder of pages on the topic
and, optionally, a folder of pages off it.

With negatives, a tf-idf logistic regression: R(d) = Pr[on topic | d], which, unlike a cosine,
learns which words *separate* the topic from its neighbours. Without negatives there is nothing
to separate from (random background pages are not at hand), so the model falls back to the
centroid cosine of Batsakis et al. 2009 (``CentroidModel``), divided by the median cosine of the
examples themselves and capped at 1: a page as close to the centroid as a typical example scores 1,
and one ``threshold`` means "this much like the examples" in both cases.

The regression only knows the two folders: a page like neither (no word of either) scores
about 0.5, so the negatives should be the pages a crawl meets *near* the topic, and a
threshold above 0.5 keeps hard focus from expanding such pages.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import partial

import numpy as np
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline, make_pipeline

from focused.relevance import centroid
from focused.relevance.base import Estimator
from focused.relevance.taxonomy import _check_documents
from focused.relevance.text import analyze

__all__ = ["ExamplesModel", "read_examples"]


def read_examples(
    positive_folder: str | os.PathLike, negative_folder: str | os.PathLike | None = None
) -> tuple[list[str], list[int]]:
    """The example documents of both folders and their labels (1 on the topic, 0 off it), read
    as the centroid model reads its folder; a missing or empty folder is a TopicError naming it.
    """
    positives = centroid.read_examples(positive_folder)
    negatives = [] if negative_folder is None else centroid.read_examples(negative_folder)
    return positives + negatives, [1] * len(positives) + [0] * len(negatives)


class ExamplesModel(Estimator):
    """Pr[on topic | d] from positive and negative examples, else a scaled centroid cosine.

    Parameters
    ----------
    threshold : R at which a page counts as on the topic (``best_path_good``, hard focus's
        test): a probability with negatives, a share of a typical example's cosine without.
    C : inverse L2 regularisation of the logistic regression. Example folders are small and
        tf-idf vectors wide, so the default is weak regularisation, or every R stays near 0.5.
    stem : Porter-stem terms (``text.analyze``), as the other models do.
    sublinear_tf : 1 + log(tf), so that one word repeated does not make a page.

    Classes are weighted inversely to their number of examples: the folders' sizes are the
    user's effort, not the share of relevant pages on the web.

    Attributes
    ----------
    estimator_ : the fitted tf-idf + logistic regression ``Pipeline``, or, without negatives,
        the fitted ``CentroidModel``.
    scale_ : the median cosine of the examples (with terms) to their centroid (None with negatives).
    """

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        C: float = 10.0,
        stem: bool = True,
        sublinear_tf: bool = True,
    ):
        self.threshold = threshold
        self.C = C
        self.stem = stem
        self.sublinear_tf = sublinear_tf

    def fit(self, X: Sequence[str], y: Sequence[int] | None = None) -> ExamplesModel:
        """Fit on documents ``X`` labelled ``y`` (1 on the topic, 0 off it; None: all on it)."""
        X = _check_documents(X)
        labels = np.ones(len(X), dtype=int) if y is None else np.asarray(y)
        if len(X) != len(labels):
            raise ValueError(f"X has {len(X)} documents but y has {len(labels)} labels")
        if not np.isin(labels, (0, 1)).all():
            raise ValueError("labels must be 1 (on the topic) or 0 (off it)")
        if not (labels == 1).any():
            raise ValueError("no positive examples")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"threshold must be in [0, 1], not {self.threshold!r}")
        if not self.C > 0:
            raise ValueError(f"C must be > 0, not {self.C!r}")

        if (labels == 0).any():
            self.estimator_ = make_pipeline(
                TfidfVectorizer(
                    analyzer=partial(analyze, stem=self.stem),
                    sublinear_tf=self.sublinear_tf,
                    dtype=np.float64,
                ),
                LogisticRegression(C=self.C, class_weight="balanced"),
            ).fit(X, labels)
            self.scale_ = None
        else:
            self.estimator_ = centroid.CentroidModel(
                stem=self.stem, sublinear_tf=self.sublinear_tf
            ).fit(X)
            cosines = self.estimator_.relevance(X)
            # Texts without a term (cosine 0) are not examples of anything; the centroid
            # model's fit has checked that some text has terms.
            self.scale_ = float(np.median(cosines[cosines > 0]))
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R(d) in [0, 1] for each document (see the class docstring for its two meanings)."""
        self._check_fitted("scale_")
        if isinstance(self.estimator_, Pipeline):
            proba = self.estimator_.predict_proba(_check_documents(X))
            return proba[:, np.flatnonzero(self.estimator_.classes_ == 1)[0]]
        return np.minimum(self.estimator_.relevance(X) / self.scale_, 1.0)

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R(d) and a category for each document; there are no categories, so None."""
        relevance = self.relevance(X)
        return relevance, [None] * len(relevance)

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each document is on the topic (R >= threshold): hard focus's test."""
        return self.relevance(X) >= self.threshold
