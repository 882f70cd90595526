"""The online link model: learns during a crawl which out-links lead to relevant pages.

The topic model says how relevant a page is; it only guesses how relevant an unfetched page
is, from its anchor text or its parent. Every fetched page tells how good that guess was for
the link it came through, so a crawl can learn, as it goes, what its topic's links look like
on the part of the web it is in: which anchor and URL words, which parent categories, how far
to trust the topic model's own estimate. Learning is incremental (``partial_fit``) and labels
come only from the crawl's own classifier.

Features of a link (hashed into a fixed-size vector, so every process has the same columns):

- ``estimate``: the strategy's estimate from the topic model (``link_score``), as a logit;
- ``parent``: the parent page's R, as a logit, and ``c=<its best category>``;
- ``a=<word>``: the anchor text's words, stemmed;
- ``u=<word>``: the words of the URL's path and query, stemmed (not the host's: a host name
  says little about one page of it).

The learned probability is blended with the estimate, trusting the model more as it sees more
examples: ``w = n / (n + warmup)``, and not at all before both outcomes have been seen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np

from focused.relevance.base import Estimator
from focused.relevance.text import analyze

__all__ = ["LinkContext", "OnlineLinkModel"]

_URL_WORDS = re.compile(r"[^A-Za-z0-9]+")


@dataclass(frozen=True, slots=True)
class LinkContext:
    """What is known of a link before its target is fetched."""

    url: str
    anchor: str
    estimate: float  # the topic model's estimate of the target's R (the strategy's score)
    parent_relevance: float
    parent_category: str


def _logit(p: float) -> float:
    p = min(max(p, 0.001), 0.999)
    return math.log(p / (1 - p))


def link_features(link: LinkContext) -> dict[str, float]:
    """The link's named features (see the module docstring)."""
    parts = urlsplit(link.url)
    features = {
        "estimate": _logit(link.estimate) / 4,
        "parent": _logit(link.parent_relevance) / 4,
        f"c={link.parent_category}": 1.0,
    }
    for word in analyze(link.anchor, stem=True):
        features[f"a={word}"] = 1.0
    for word in analyze(_URL_WORDS.sub(" ", f"{parts.path} {parts.query}"), stem=True):
        features[f"u={word}"] = 1.0
    return features


class OnlineLinkModel(Estimator):
    """Logistic regression on hashed link features, fitted incrementally.

    Parameters
    ----------
    n_features : width of the hashed feature vector.
    alpha : L2 regularisation of the SGD classifier.
    warmup : examples after which the model's probability and the topic model's estimate
        weigh the same in ``predict``.
    epochs : passes over each batch given to ``partial_fit`` (few examples early in a crawl).

    Attributes
    ----------
    classifier_ : the SGDClassifier (log loss), once ``partial_fit`` has been called.
    n_examples_ : examples learned from; ``seen_`` : which outcomes (0, 1) among them.
    """

    def __init__(
        self, *, n_features: int = 1 << 18, alpha: float = 1e-4, warmup: int = 100, epochs: int = 3
    ):
        self.n_features = n_features
        self.alpha = alpha
        self.warmup = warmup
        self.epochs = epochs

    def _vectors(self, links: Sequence[LinkContext]):
        from sklearn.feature_extraction import FeatureHasher

        hasher = FeatureHasher(n_features=self.n_features, input_type="dict")
        return hasher.transform(link_features(link) for link in links)

    def partial_fit(self, links: Sequence[LinkContext], y: Sequence[int]) -> OnlineLinkModel:
        """Learn from links whose targets were fetched; ``y`` = 1 if a target was relevant."""
        if not hasattr(self, "classifier_"):
            from sklearn.linear_model import SGDClassifier  # imported with the first links

            self.classifier_ = SGDClassifier(
                loss="log_loss", alpha=self.alpha, shuffle=False, random_state=0
            )
            self.n_examples_ = 0
            self.seen_: set[int] = set()
        if len(links):
            X, labels = self._vectors(links), np.asarray(y, dtype=int)
            for _ in range(self.epochs):
                self.classifier_.partial_fit(X, labels, classes=[0, 1])
            self.n_examples_ += len(links)
            self.seen_.update(int(label) for label in labels)
        return self

    @property
    def weight(self) -> float:
        """How much ``predict`` trusts the model over the estimate, 0 to 1."""
        if getattr(self, "seen_", set()) != {0, 1}:
            return 0.0
        return self.n_examples_ / (self.n_examples_ + self.warmup)

    def predict(self, links: Sequence[LinkContext]) -> np.ndarray:
        """The priority of each link: the estimate blended with the learned probability."""
        estimate = np.array([link.estimate for link in links], dtype=float)
        w = self.weight
        if not w or not len(links):
            return estimate
        learned = self.classifier_.predict_proba(self._vectors(links))[:, 1]
        return (1 - w) * estimate + w * learned
