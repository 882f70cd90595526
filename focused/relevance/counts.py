"""Term counts of texts over a fitted vocabulary, and their product with a matrix, as the crawl
scores pages: what ``CountVectorizer(analyzer=partial(analyze, ...)).transform`` and SciPy's
sparse product give, to the last bit, at a fraction of their cost per call.

The pipeline scores one page and its new anchors at a time, so a vectorizer's fixed cost per
call (its checks, building the analyzer, its matrix) and its cost per word (a stem, a stop-word
test, a vocabulary lookup) are paid about once a page and a thousand times a page. Here each
word's column (or none) is kept once it is known, so a word costs one dictionary lookup, and the
counts stay plain arrays: each row's columns sorted, as a CSR matrix holds them.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple, cast

import numpy as np

from focused.relevance.text import analyze, words

__all__ = ["Rows", "Terms", "rows_times", "terms"]

# Words whose column is kept per vocabulary; the table starts again when full.
MAX_WORDS = 1 << 18


class Rows(NamedTuple):
    """Sparse rows as a CSR matrix holds them: row i's entries are ``columns`` and ``values``
    at ``indptr[i]:indptr[i + 1]``, columns ascending within a row."""

    indptr: np.ndarray
    columns: np.ndarray
    values: np.ndarray


class Terms:
    """Each lowercase word's column in a vocabulary of ``analyze``'s terms (-1: none), kept once
    known, and the term counts of texts over it."""

    def __init__(self, vocabulary: dict[str, int], stem: bool):
        self.vocabulary = vocabulary
        self.stem = stem
        self.known: dict[str, int] = {}

    def column(self, word: str) -> int:
        """The word's column, -1 for a word that is no term of the vocabulary."""
        column = self.known.get(word)
        if column is None:
            if len(self.known) >= MAX_WORDS:
                self.known.clear()
            terms = analyze(word, stem=self.stem)  # one word: its term, or none
            column = self.vocabulary.get(terms[0], -1) if terms else -1
            self.known[word] = column
        return column

    def count(self, texts: Sequence[str]) -> Rows:
        """Each text's term counts (int64): the rows ``CountVectorizer.transform`` gives."""
        known, column = self.known, self.column
        found: list[int] = []  # every word's column (-1: none), text after text
        lengths = np.empty(len(texts), dtype=np.int64)
        for i, text in enumerate(texts):
            each = words(text)
            kept = list(map(known.get, each))
            if None in kept:  # words not seen before
                kept = [column(w) if j is None else j for w, j in zip(each, kept, strict=True)]
            found += cast("list[int]", kept)
            lengths[i] = len(kept)
        size = len(self.vocabulary)
        at = np.array(found, dtype=np.int64)
        counted = at >= 0
        rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)[counted]
        # one key per (text, column): sorted, they come by text, then column, as CSR holds them
        keys = np.sort(rows * size + at[counted])
        first = np.empty(len(keys), dtype=bool)
        first[:1] = True
        np.not_equal(keys[1:], keys[:-1], out=first[1:])
        starts = np.flatnonzero(first)
        unique = keys[starts]
        values = np.diff(np.append(starts, len(keys)))
        indptr = np.searchsorted(unique, np.arange(len(texts) + 1, dtype=np.int64) * size)
        return Rows(indptr, unique % size, values)


_TERMS: weakref.WeakKeyDictionary[Any, Terms] = weakref.WeakKeyDictionary()


def terms(model: Any, vocabulary: dict[str, int], stem: bool) -> Terms:
    """The word table of ``model``'s vocabulary, kept with the model until it is fitted anew."""
    found = _TERMS.get(model)
    if found is None or found.vocabulary is not vocabulary or found.stem != stem:
        found = _TERMS[model] = Terms(vocabulary, stem)
    return found


def rows_times(rows: Rows, matrix: np.ndarray, dtype: type[np.floating]) -> np.ndarray:
    """The sparse ``rows`` times the dense ``matrix`` in ``dtype``, to the last bit what SciPy's
    CSR product gives: each row's products added in the order of its entries (numpy's sum
    over the middle axis adds the entries one after another; a pairwise sum would not)."""
    n_rows = len(rows.indptr) - 1
    lengths = np.diff(rows.indptr)
    longest = int(lengths.max()) if n_rows else 0
    products = rows.values.astype(dtype)[:, None] * matrix[rows.columns].astype(dtype)
    padded = np.zeros((n_rows, max(longest, 1), matrix.shape[1]), dtype=dtype)
    place = np.arange(len(rows.columns)) - np.repeat(rows.indptr[:-1], lengths)
    padded[np.repeat(np.arange(n_rows), lengths), place] = products
    return padded.sum(axis=1)
