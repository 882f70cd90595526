"""A light topic that learns itself: the categories a taxonomy would have given it, filed from
the crawl's own pages.

A topic given by a few keywords or a few example pages knows the words the user wrote and
little else. A taxonomy's thirty examples of the topic and a dozen of every neighbouring
category teach the model the topic's vocabulary and, as important, what its neighbours look
like; with them the word vectors place an anchor among the categories
(:class:`~focused.relevance.vectors.CategoryVectors`), which is what lifted taxonomy crawls
most. A focused crawl fetches exactly those neighbours. So after its first pages the crawl files
them itself: the pages the topic as the user gave it rates best as examples of the topic, the
others as negatives, grouped (k-means over their word vectors) into a few categories of their
own, as a taxonomy's other categories are; and fits the word vectors' categories on them.

A refit must not grow the topic into its neighbours once the crawl runs out of the topic's own
pages: the negatives are drawn from every rank of the pages the topic does not claim, the
nearest neighbours included (capped to the least relevant, the neighbours a crawl meets once
its topic runs out were left out, and fell nearer the topic than anything else: a crawl of
astronomy called geology relevant). A background of general knowledge (``background``) would
also place a page like none the refit has seen (a first refit has few negatives) off the topic,
but with the keywords' 64 categories it cost a fifth of the relevant pages found on the
Wikispeedia development topics, so it is off by default.

What the user wrote stays in the model: their own texts (the keywords, the example pages) are
examples of the topic in every refit and their pages off it (``negatives``) neighbours, and
:meth:`LearnedTopic.drift` tells a caller when a refit would call them (or the crawl's seeds)
irrelevant, so that it can refuse the refit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from focused.relevance.base import Estimator
from focused.relevance.taxonomy import _check_documents
from focused.relevance.vectors import (
    BACKGROUND_WORDS,
    CategoryVectors,
    WordVectors,
    word_vectors,
)

__all__ = ["TOPIC", "LearnedTopic"]

TOPIC = "topic"  # the good category; the negatives' groups are "other/0", "other/1", ...
# The words ``top_words`` chooses from: those of the vectors' background (the frequent words but
# the function words at the head of the vocabulary), computed once per process.
TOP_WORDS_FROM = BACKGROUND_WORDS
# A refit may call irrelevant at most half the user's texts and half the seeds, or this share
# more of them than the model before it did (a text near the threshold may go either way).
MAX_LOST = 0.5
MAX_LOST_RISE = 0.25
# Background categories of general knowledge beside the learned ones. 64, as many as the
# keywords' own model has, kept geology and an unseen topic out of a generated astronomy
# crawl, but cost Wikispeedia's development keyword crawls their share of the oracle at 250
# pages (.80 to .68), example pages likewise (.71 to .59): the spread negatives alone keep
# the neighbour out at no cost there.
BACKGROUND = 0


class LearnedTopic(Estimator):
    """The word vectors' categories of a topic, fitted on pages labelled by another model's
    verdicts.

    Parameters
    ----------
    threshold : a page whose verdict R is at or above it is an example of the topic.
    min_positive_share : and at least this share of the pages are, the best first: a light
        topic's first verdicts are cautious (on the Wikispeedia validation categories a
        keywords topic's first 100 pages often held none at 0.5), while its best pages are
        mostly on the topic.
    max_examples : at most this many examples on each side: the most confident of the topic,
        the others taken evenly over their ranking.
    groups : the negatives are grouped into at most this many categories (k-means over their
        word vectors), so that a text is placed among several neighbours, not one average.
    temperature : the softmax's temperature (CategoryVectors).
    background : this many categories of general knowledge (``CategoryVectors.background``)
        beside the learned ones.
    vectors : the WordVectors to use; None for the process's GloVe vectors.

    Attributes
    ----------
    vectors_ : the fitted CategoryVectors (good: ``TOPIC``). n_positive_, n_negative_ : its
        examples on each side (the user's own texts included).
    """

    def __init__(
        self,
        *,
        threshold: float = 0.5,
        min_positive_share: float = 0.1,
        max_examples: int = 300,
        groups: int = 8,
        temperature: float = 0.03,
        background: int = BACKGROUND,
        vectors: WordVectors | None = None,
    ):
        self.threshold = threshold
        self.min_positive_share = min_positive_share
        self.max_examples = max_examples
        self.groups = groups
        self.temperature = temperature
        self.background = background
        self.vectors = vectors

    def _vectors(self) -> WordVectors:
        return self.vectors if self.vectors is not None else word_vectors()

    def examples(
        self,
        X: Sequence[str],
        y: Sequence[float],
        user: Sequence[str] = (),
        user_negatives: Sequence[str] = (),
    ) -> tuple[list[str], list[str]]:
        """The examples a refit learns from, and their categories: the user's own texts
        ``user`` and the best of the pages ``X`` (by their verdicts ``y``, R in [0, 1]) as
        ``TOPIC``; the user's pages off the topic ``user_negatives`` and the pages below the
        threshold, in groups ``other/N``: every page the topic does not claim is a neighbour
        (with only the pages clearly off it as negatives, the crawl's pages near the topic fell
        nearer the topic's centroid than any other, and refits called twice the true share
        relevant). Beyond ``max_examples`` they are taken evenly over their ranking, so the
        nearest neighbours stay among them. ValueError when either side has fewer than two: too
        early to learn."""
        X, user = _check_documents(X), _check_documents(user)
        user_negatives = _check_documents(user_negatives)
        r = np.asarray(y, dtype=float)
        if len(r) != len(X):
            raise ValueError(f"{len(X)} pages but {len(r)} verdicts")
        order = np.argsort(-r, kind="stable")
        least = int(np.ceil(self.min_positive_share * len(X)))
        positive = [i for j, i in enumerate(order) if r[i] >= self.threshold or j < least]
        positive = positive[: self.max_examples]
        taken = set(positive)
        negative = [i for i in order[::-1] if r[i] < self.threshold and i not in taken]
        if len(negative) > self.max_examples:
            spread = np.linspace(0, len(negative) - 1, self.max_examples).round().astype(int)
            negative = [negative[j] for j in spread]
        if len(positive) + len(user) < 2 or len(negative) + len(user_negatives) < 2:
            raise ValueError(
                f"too few pages to learn from: {len(positive)} on the topic, {len(negative)} off it"
            )
        negatives = [*user_negatives, *(X[i] for i in negative)]
        k = min(self.groups, len(negatives) // 2)
        from sklearn.cluster import KMeans  # only a refit needs it, not a crawl's start

        groups = (
            KMeans(k, n_init=3, random_state=0).fit_predict(self._vectors().embed(negatives))
            if k > 1
            else np.zeros(len(negatives), int)
        )
        texts = [*user, *(X[i] for i in positive), *negatives]
        labels = [TOPIC] * (len(user) + len(positive)) + [f"other/{g}" for g in groups]
        return texts, labels

    def fit(
        self,
        X: Sequence[str],
        y: Sequence[float],
        user: Sequence[str] = (),
        user_negatives: Sequence[str] = (),
    ) -> LearnedTopic:
        """Fit on pages ``X`` with their verdicts ``y`` and the user's own texts ``user`` and
        ``user_negatives`` (:meth:`examples`)."""
        return self.fit_examples(*self.examples(X, y, user, user_negatives))

    def fit_examples(self, texts: Sequence[str], labels: Sequence[str]) -> LearnedTopic:
        """Fit on examples ``texts`` filed under ``labels`` (``TOPIC`` or ``other/N``), as
        :meth:`examples` gives them: every process of a crawl fits the same model from the
        same examples."""
        self.vectors_ = CategoryVectors(
            good=[TOPIC],
            temperature=self.temperature,
            background=self.background,
            vectors=self.vectors,
        ).fit(texts, labels)
        self.n_positive_ = sum(label == TOPIC for label in labels)
        self.n_negative_ = len(labels) - self.n_positive_
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R of each text: the topic's share of the softmax over the categories."""
        self._check_fitted("vectors_")
        return self.vectors_.relevance(X)

    def drift(
        self,
        user: Sequence[str],
        user_before: Sequence[float] | np.ndarray,
        seeds: Sequence[str] = (),
        seeds_before: Sequence[float] | np.ndarray = (),
    ) -> str:
        """Why this refit has moved away from what the user asked for ("" if it has not): it
        calls irrelevant (below ``threshold``) a larger share of the user's own texts ``user``
        (keywords, example pages), or of the crawl's ``seeds``, than MAX_LOST and than
        MAX_LOST_RISE more than the model before it (their R ``user_before``,
        ``seeds_before``): an example may be an outlier, a seed a hub."""
        self._check_fitted("vectors_")
        for texts, before, what in (
            (user, user_before, "of the topic's own keywords or examples"),
            (seeds, seeds_before, "of the seeds classified"),
        ):
            if not len(texts):
                continue
            lost = int((self.relevance(texts) < self.threshold).sum())
            was = int((np.asarray(before, dtype=float) < self.threshold).sum())
            if lost > max(was + MAX_LOST_RISE * len(texts), MAX_LOST * len(texts)):
                return f"it calls {lost} of the {len(texts)} {what} irrelevant (before: {was})"
        return ""

    def top_words(self, n: int = 10) -> list[str]:
        """The ``n`` frequent words nearest the topic's centroid in the vectors' space: what
        the topic now weighs most."""
        self._check_fitted("vectors_")
        words, embedded = self._vectors().frequent(TOP_WORDS_FROM)
        centroid = self.vectors_.centroids_[list(self.vectors_.categories_).index(TOPIC)]
        return [words[i] for i in np.argsort(-(embedded @ centroid), kind="stable")[:n]]
