"""Thesaurus-based relevance (Badia, Muezzinoglu and Nasraoui 2006): a topic is a
faceted thesaurus written by hand, and a page is relevant to the degree its words, its URL's
words and the anchor windows of links to it match the thesaurus, facet by facet.

No example pages are needed: the thesaurus is the topic, easy to build and to edit.

File format (TOML)::

    [facets.ships]                      # one table per facet; the name is the label
    weight = 2.0                        # optional, default 1: the facet's share of R
    terms = [
        "vessel",                       # a root term
        {term = "warship", narrower = [ # a term with narrower terms, to any depth
            "frigate",
            {term = "submarine", narrower = ["attack submarine"]},
        ]},
        "dry dock",                     # terms may be phrases (n-grams)
    ]

    [facets.materials]
    terms = ["steel", "timber"]

    [negative]                          # optional: words and phrases to avoid
    weight = 1.0                        # optional, default 1: cost of one negative term
    terms = ["cruise holiday", "shipping costs"]

Terms and pages go through the same analyzer (``text.analyze``: lowercase, stopwords dropped,
Porter stems), so "frigates" matches "frigate" and "bill of lading" matches "bill lading".
Words of one letter and digits are dropped on both sides, so "u-boat" is the word "boat".
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import numpy as np
import scipy.sparse as sp

from focused.errors import TopicError, known_fields
from focused.relevance.base import Estimator
from focused.relevance.taxonomy import _check_documents
from focused.relevance.text import analyze

__all__ = [
    "Facet",
    "Term",
    "Thesaurus",
    "ThesaurusModel",
    "parse_thesaurus",
    "read_thesaurus",
    "url_words",
]


@dataclass(frozen=True)
class Term:
    """A thesaurus term (a word or phrase) and its narrower terms."""

    text: str
    narrower: tuple[Term, ...] = ()


@dataclass(frozen=True)
class Facet:
    """One aspect of the topic: a forest of term trees, and its weight in the page score."""

    name: str
    terms: tuple[Term, ...]
    weight: float = 1.0


@dataclass(frozen=True)
class Thesaurus:
    """Facets, and the negative words and phrases whose presence lowers every facet."""

    facets: tuple[Facet, ...]
    negative: tuple[str, ...] = ()
    negative_weight: float = 1.0


# -- reading -------------------------------------------------------------------------------


def _weight(path: Path, field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise TopicError(path, field, f"expected a number > 0, got {value!r}")
    return float(value)


def _phrase(path: Path, field: str, value: Any) -> str:
    if not isinstance(value, str):
        raise TopicError(path, field, f"expected a term string, got {value!r}")
    if not analyze(value):
        raise TopicError(
            path, field, f"term {value!r} has no words (stopwords, digits, single letters)"
        )
    return value.strip()


def _terms(path: Path, field: str, value: Any) -> tuple[Term, ...]:
    if not isinstance(value, list) or not value:
        raise TopicError(path, field, "expected a non-empty list of terms")
    return tuple(_term(path, f"{field}[{i}]", item) for i, item in enumerate(value))


def _term(path: Path, field: str, value: Any) -> Term:
    if not isinstance(value, dict):
        if not isinstance(value, str):
            raise TopicError(
                path, field, f"expected a term or {{term = ..., narrower = [...]}}, got {value!r}"
            )
        return Term(_phrase(path, field, value))
    known_fields(path, value, {"term", "narrower"}, field)
    if "term" not in value:
        raise TopicError(path, f"{field}.term", "missing (the broader term itself)")
    text = _phrase(path, f"{field}.term", value["term"])
    narrower = value.get("narrower", [])
    if narrower == []:  # a leaf written as a table is allowed
        return Term(text)
    return Term(text, _terms(path, f"{field}.narrower", narrower))


def parse_thesaurus(data: dict[str, Any], path: str | os.PathLike) -> Thesaurus:
    """Check TOML data already parsed; errors name ``path`` and the field."""
    path = Path(path)
    known_fields(path, data, {"facets", "negative"})
    tables = data.get("facets")
    if not isinstance(tables, dict) or not tables:
        raise TopicError(path, "facets", "expected at least one [facets.NAME] table")
    facets = []
    for name, table in tables.items():
        field = f"facets.{name}"
        if not isinstance(table, dict):
            raise TopicError(path, field, "expected a table with terms = [...]")
        known_fields(path, table, {"terms", "weight"}, field)
        terms = _terms(path, f"{field}.terms", table.get("terms"))
        facets.append(Facet(name, terms, _weight(path, f"{field}.weight", table.get("weight", 1))))
    negative = data.get("negative", {})
    if not isinstance(negative, dict):
        raise TopicError(path, "negative", "expected a table with terms = [...]")
    known_fields(path, negative, {"terms", "weight"}, "negative")
    words = negative.get("terms", [])
    if not isinstance(words, list):
        raise TopicError(path, "negative.terms", "expected a list of words and phrases")
    return Thesaurus(
        tuple(facets),
        tuple(_phrase(path, f"negative.terms[{i}]", w) for i, w in enumerate(words)),
        _weight(path, "negative.weight", negative.get("weight", 1)),
    )


def read_thesaurus(path: str | os.PathLike) -> Thesaurus:
    """Read and check a thesaurus file; every problem is one TopicError naming the field."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TopicError(path, "", "thesaurus file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TopicError(path, "", f"cannot read: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TopicError(path, "", f"not valid TOML: {exc}") from None
    return parse_thesaurus(data, path)


# -- scoring -------------------------------------------------------------------------------


def url_words(url: str) -> str:
    """The words of a URL without its site name: path and query, %-escapes decoded."""
    parts = urlsplit(url)
    return unquote(f"{parts.path} {parts.query}")


class ThesaurusModel(Estimator):
    """Relevance of pages to a faceted thesaurus (Badia et al. 2006).

    Each facet f is scored separately. Its evidence in a text is
    ``E_f = sum over distinct matched terms t of w(t) * (2 - 1/count(t))``:
    a term found once counts w(t), and repeating it at most doubles that, so no amount of
    repetition of one term is worth a second distinct term of the same weight -- the paper
    counts diversity of words heavily and frequency lightly. ``w(t) = 1 + depth_weight *
    depth(t)`` (roots have depth 0): narrower terms are more specific, so worth more.
    Negative terms give evidence N the same way (weight ``negative_weight`` of the file), which
    is subtracted from every facet: a page that is strongly on the topic survives a stray
    "shipping costs", a weak one does not. The URL's words (site name dropped) and the anchor
    window of links to the page add their own evidence, times ``url_weight`` and
    ``anchor_weight``. Facet score ``s_f = 1 - exp(-max(E_f - N, 0) / saturation)`` in [0, 1),
    and ``R = sum_f weight_f s_f / sum_f weight_f``. Because each s_f saturates, R grows far
    more from evidence spread over several facets (ships *and* methods *and* materials) than
    from piling evidence on one: a page about cruise ships alone stays low.

    Phrases match greedily on the analyzed token stream, longest first at each position; a
    matched phrase is consumed, so "dry dock" does not also count as "dock" and the negative
    "shipping costs" does not also count as "shipping".

    Parameters
    ----------
    thesaurus : a ``Thesaurus``, or the path of a thesaurus file (read in ``fit``).
    threshold : R at which a page is on the topic (``best_path_good``, hard focus's test).
        0.3 needs about two facets half full, or one facet full and more.
    depth_weight : extra weight per level below a facet's root terms.
    url_weight, anchor_weight : weight of the URL's and the anchor window's evidence
        relative to the page text's. Both are short and second-hand, so half by default.
    saturation : evidence at which a facet is 63% full (1 - 1/e); about three distinct root
        terms.
    stem : Porter-stem terms and pages (``text.analyze``).

    Attributes
    ----------
    thesaurus_ : the thesaurus read or given.
    facets_ : facet names, the columns of ``facet_scores`` and the labels of ``score_pages``.
    facet_weights_ : the facets' weights.
    weights_ : phrases x (facets + negative) weight matrix; a phrase's row holds w(t) in each
        facet it belongs to and the negative weight in the last column.
    index_ : first token -> [(rest of the phrase's tokens, row)], longest first.
    """

    def __init__(
        self,
        *,
        thesaurus: Thesaurus | str | os.PathLike | None = None,
        threshold: float = 0.3,
        depth_weight: float = 0.5,
        url_weight: float = 0.5,
        anchor_weight: float = 0.5,
        saturation: float = 3.0,
        stem: bool = True,
    ):
        self.thesaurus = thesaurus
        self.threshold = threshold
        self.depth_weight = depth_weight
        self.url_weight = url_weight
        self.anchor_weight = anchor_weight
        self.saturation = saturation
        self.stem = stem

    def fit(self, X: Sequence[str] | None = None, y: object = None) -> ThesaurusModel:
        """Compile the thesaurus for matching. There is nothing to learn: ``X`` and ``y`` are
        ignored and exist so the model fits like the others."""
        thesaurus = self.thesaurus
        if isinstance(thesaurus, str | os.PathLike):
            thesaurus = read_thesaurus(thesaurus)
        if not isinstance(thesaurus, Thesaurus):
            raise TypeError(f"thesaurus must be a Thesaurus or a path, not {thesaurus!r}")
        if not thesaurus.facets:
            raise ValueError("the thesaurus has no facets")
        if not 0 <= self.threshold <= 1:
            raise ValueError(f"threshold must be in [0, 1], not {self.threshold!r}")
        for name in ("depth_weight", "url_weight", "anchor_weight"):
            if not getattr(self, name) >= 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)!r}")
        if not self.saturation > 0:
            raise ValueError(f"saturation must be > 0, not {self.saturation!r}")

        rows: dict[tuple[str, ...], int] = {}
        cells: dict[tuple[int, int], float] = {}

        def add(text: str, column: int, weight: float) -> None:
            tokens = tuple(analyze(text, stem=self.stem))
            if not tokens:
                raise ValueError(f"term {text!r} has no words")
            row = rows.setdefault(tokens, len(rows))
            cells[row, column] = max(cells.get((row, column), 0.0), weight)

        def walk(term: Term, column: int, depth: int) -> None:
            add(term.text, column, 1 + self.depth_weight * depth)
            for child in term.narrower:
                walk(child, column, depth + 1)

        n_facets = len(thesaurus.facets)
        for column, facet in enumerate(thesaurus.facets):
            for term in facet.terms:
                walk(term, column, 0)
        for text in thesaurus.negative:
            add(text, n_facets, thesaurus.negative_weight)

        self.weights_ = np.zeros((len(rows), n_facets + 1))
        for (row, column), weight in cells.items():
            self.weights_[row, column] = weight
        index: dict[str, list[tuple[list[str], int]]] = {}
        for tokens, row in rows.items():
            index.setdefault(tokens[0], []).append((list(tokens[1:]), row))
        for entries in index.values():
            entries.sort(key=lambda entry: -len(entry[0]))
        self.index_ = index
        self.thesaurus_ = thesaurus
        self.facets_ = np.array([facet.name for facet in thesaurus.facets], dtype=object)
        self.facet_weights_ = np.array([facet.weight for facet in thesaurus.facets])
        return self

    def _matches(self, tokens: list[str]) -> dict[int, int]:
        """Count of each phrase (row) in a token stream: greedy, longest phrase first."""
        counts: dict[int, int] = {}
        index = self.index_
        i, n = 0, len(tokens)
        while i < n:
            step = 1
            for rest, row in index.get(tokens[i], ()):
                if not rest or tokens[i + 1 : i + 1 + len(rest)] == rest:
                    counts[row] = counts.get(row, 0) + 1
                    step += len(rest)
                    break
            i += step
        return counts

    def _evidence(self, texts: Sequence[str]) -> np.ndarray:
        """Evidence of each text for each facet and for the negative terms (last column)."""
        data: list[float] = []
        indices: list[int] = []
        indptr = [0]
        for text in texts:
            counts = self._matches(analyze(text, stem=self.stem))
            indices += counts
            data += [2 - 1 / count for count in counts.values()]
            indptr.append(len(indices))
        matched = sp.csr_matrix((data, indices, indptr), shape=(len(texts), self.weights_.shape[0]))
        return np.asarray(matched @ self.weights_)

    def facet_scores(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """Score s_f in [0, 1) of each document (rows) for each facet (columns, ``facets_``).

        ``urls`` and ``anchors`` are optional, parallel to ``X``: each document's URL and the
        anchor window text of links to it (None or "" where unknown).
        """
        self._check_fitted("facet_weights_")
        X = _check_documents(X)
        evidence = self._evidence(X)
        sources = ((urls, self.url_weight, url_words), (anchors, self.anchor_weight, str))
        for extra, weight, words in sources:
            if extra is None:
                continue
            extra = list(extra)
            if len(extra) != len(X):
                raise ValueError(f"X has {len(X)} documents but {len(extra)} urls or anchors")
            evidence += weight * self._evidence([words(e) if e else "" for e in extra])
        facets = np.maximum(evidence[:, :-1] - evidence[:, -1:], 0)
        return -np.expm1(-facets / self.saturation)

    def relevance(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """R in [0, 1) of each document: the weighted mean of its facet scores."""
        self._check_fitted("facet_weights_")
        return self._combine(self.facet_scores(X, urls, anchors))

    def _combine(self, scores: np.ndarray) -> np.ndarray:
        return scores @ self.facet_weights_ / self.facet_weights_.sum()

    def score_pages(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> tuple[np.ndarray, list[str | None]]:
        """R and the best-scoring facet of each document (None if no facet matched)."""
        self._check_fitted("facet_weights_")
        scores = self.facet_scores(X, urls, anchors)
        best = scores.argmax(axis=1)
        labels = [str(self.facets_[b]) if scores[i, b] > 0 else None for i, b in enumerate(best)]
        return self._combine(scores), labels

    def best_path_good(
        self,
        X: Sequence[str],
        urls: Sequence[str | None] | None = None,
        anchors: Sequence[str | None] | None = None,
    ) -> np.ndarray:
        """Whether each document is on the topic (R >= threshold): hard focus's test."""
        self._check_fitted("facet_weights_")
        return self.relevance(X, urls, anchors) >= self.threshold
