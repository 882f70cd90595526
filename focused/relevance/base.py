"""The contract every relevance model keeps, written as code (as Scrapy's ``BaseScheduler``).

The classifier pipeline, the strategies, the evaluation and the benchmarks use a topic's model
only through these methods, so a new method is a new estimator that keeps them; which topic-file
method builds which model is :data:`focused.topic.methods.METHODS`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["RelevanceModel", "UrlRelevanceModel"]


@runtime_checkable
class RelevanceModel(Protocol):
    """A fitted model of one topic, with scikit-learn's estimator API (``fit`` returns the
    model; parameters in ``__init__``, learned state in attributes ending in ``_``)."""

    def fit(self, X: Any = None, y: Any = None) -> RelevanceModel:
        """Learn from the topic's examples (models that need none ignore ``X`` and ``y``)."""
        ...

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R of each text, in [0, 1]: how much it is about the topic."""
        ...

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R of each text and its best category (None for models without categories), in one
        pass: the classifier pipeline scores a page, its anchors and their glosses together.
        Models that also read URLs and the anchor a page was reached by keep
        :class:`UrlRelevanceModel`."""
        ...

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each text is on the topic in hard focus's sense (Chakrabarti et al. 1999):
        its best category path holds a good category, or, without categories, R >= the
        threshold."""
        ...


@runtime_checkable
class UrlRelevanceModel(RelevanceModel, Protocol):
    """A relevance model that also reads each text's URL and the anchor its page was reached by
    (``RelevanceMethod.reads_anchors``): the classifier pipeline gives them to ``score_pages``."""

    def score_pages(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> tuple[np.ndarray, list[str | None]]:
        """As :meth:`RelevanceModel.score_pages`, with the URL of each text (None: none) and
        the anchor each page was reached by (None: none or not a page)."""
        ...
