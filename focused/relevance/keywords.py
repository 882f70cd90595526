"""Keyword-vector relevance (Zhang and Yuan 2012): the topic is a weighted vector of
keywords, a page's vector holds the counts of those keywords in it, and R(d) is the cosine of
the two. The paper weighs a page's counts by the most frequent keyword's, w = tf(k)/max tf; a
cosine does not change when one vector is scaled, so raw counts give the same R.

Needs no example pages: a user who can name a topic's words can crawl it. Only keyword
dimensions count, so a page naming one keyword once among a thousand other words can already
reach a high R; the threshold ``r0`` and the keywords' weights are the user's levers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from focused.relevance.base import Estimator
from focused.relevance.taxonomy import _check_documents
from focused.relevance.text import analyze

__all__ = ["KeywordModel"]


def _keyword_terms(
    text: str, *, stem: bool, terms: frozenset[str], lengths: tuple[int, ...]
) -> list[str]:
    """The keywords found in ``text``, once per occurrence. A phrase (terms joined by a space)
    is matched on the same analysed token stream as its page, so stopwords and inflections
    inside it match as they do in single words. Only keywords are returned, and phrases are
    tried only where a keyword's first term occurs: most of a page is neither."""
    tokens = analyze(text, stem=stem)
    found = [token for token in tokens if token in terms]
    if lengths:
        starts = {term.partition(" ")[0] for term in terms}
        for i, token in enumerate(tokens):
            if token in starts:
                found += [
                    phrase
                    for n in lengths
                    if i + n <= len(tokens) and (phrase := " ".join(tokens[i : i + n])) in terms
                ]
    return found


class KeywordModel(Estimator):
    """Cosine of a page's keyword counts with a weighted keyword vector.

    Parameters
    ----------
    keywords : the topic vector: keyword (or phrase) -> weight > 0, or a list of keywords of
        weight 1 each (a single string is one keyword).
    description : a sentence about the topic; each of its words becomes a keyword of weight
        1, added to ``keywords`` (alone, it is the topic).
    r0 : the cosine at which a page counts as relevant (``best_path_good``, hard focus's test).
    stem : Porter-stem keywords and pages alike (``text.analyze``), so "cycling" matches
        "cyclists".

    Keywords are analysed as pages are; two that become the same term (e.g. "cycle" and
    "cycling") are one dimension with the larger weight, so that a description word does not
    outweigh the user's explicit weight for it.

    Attributes
    ----------
    terms_ : the analysed keywords, phrases as their terms joined by a space.
    topic_ : their weights, scaled to unit length.
    vectorizer_ : counts the terms in a document.
    """

    def __init__(
        self,
        *,
        keywords: Mapping[str, float] | Sequence[str] = (),
        description: str = "",
        r0: float = 0.3,
        stem: bool = True,
    ):
        self.keywords = keywords
        self.description = description
        self.r0 = r0
        self.stem = stem

    def fit(self, X: object = None, y: object = None) -> KeywordModel:
        """Build the topic vector from the hyper-parameters; ``X`` and ``y`` are ignored (the
        topic needs no examples) and only accepted so the model fits like the others."""
        if not 0 <= self.r0 <= 1:
            raise ValueError(f"r0 must be in [0, 1], not {self.r0!r}")
        if isinstance(self.keywords, Mapping):
            given = dict(self.keywords)
        else:
            given = dict.fromkeys(
                [self.keywords] if isinstance(self.keywords, str) else self.keywords, 1.0
            )
        weights: dict[str, float] = {}
        for keyword, weight in given.items():
            if not isinstance(keyword, str):
                raise TypeError(f"keywords must be strings, not {keyword!r}")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or not weight > 0:
                raise ValueError(
                    f"keyword {keyword!r}: weight must be a number > 0, not {weight!r}"
                )
            term = " ".join(analyze(keyword, stem=self.stem))
            if not term:
                raise ValueError(f"keyword {keyword!r} has no terms (stopwords or no letters)")
            weights[term] = max(weights.get(term, 0.0), float(weight))
        for term in analyze(self.description, stem=self.stem):
            weights.setdefault(term, 1.0)
        if not weights:
            raise ValueError("no keywords: give keywords or a description")

        self.terms_ = list(weights)
        topic = np.array(list(weights.values()))
        self.topic_ = topic / np.linalg.norm(topic)
        phrase_lengths = {term.count(" ") + 1 for term in self.terms_} - {1}
        self.vectorizer_ = CountVectorizer(
            analyzer=partial(
                _keyword_terms,
                stem=self.stem,
                terms=frozenset(self.terms_),
                lengths=tuple(sorted(phrase_lengths)),
            ),
            vocabulary=self.terms_,
            dtype=np.float64,
        )
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """Cosine of each document's keyword counts with the topic, in [0, 1] (0 for a text
        with none of the keywords)."""
        self._check_fitted("vectorizer_")
        counts = self.vectorizer_.transform(_check_documents(X))
        norms = np.sqrt(np.asarray(counts.multiply(counts).sum(axis=1)).ravel())
        dots = counts @ self.topic_
        cosine = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
        return np.minimum(cosine, 1.0)  # rounding can exceed 1 by an ulp

    def named(self, titles: Sequence[str]) -> np.ndarray:
        """Whether each title is one of the keywords (analysed alike: "Medicine" for
        "medicine", "Tours de France" for "Tour de France"): a page the keywords name is on
        the topic, whatever else its text is about."""
        self._check_fitted("vectorizer_")
        terms = set(self.terms_)
        return np.array([" ".join(analyze(t, stem=self.stem)) in terms for t in titles], bool)

    def score_pages(self, X: Sequence[str]) -> tuple[np.ndarray, list[str | None]]:
        """R(d) and a category for each document; there are no categories, so None."""
        relevance = self.relevance(X)
        return relevance, [None] * len(relevance)

    def best_path_good(self, X: Sequence[str]) -> np.ndarray:
        """Whether each document is relevant (cos >= r0): hard focus's test."""
        return self.relevance(X) >= self.r0
