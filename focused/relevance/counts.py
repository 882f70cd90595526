"""Term counts of texts over a fitted vocabulary, as the crawl scores pages: what
``CountVectorizer(analyzer=partial(analyze, ...)).transform`` gives, to the last bit, at a
fraction of its cost per call.

The pipeline scores one page and its new anchors at a time, so a vectorizer's fixed cost per
call (its checks, building the analyzer, its matrix) and its cost per word (a stem, a stop-word
test, a vocabulary lookup) are paid about once a page and a thousand times a page. Here each
word's column (or none) is kept once it is known, so a word costs one dictionary lookup; the
counts are the vectorizer's: each row's columns sorted, integer counts in its dtype.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from functools import partial
from typing import Any, cast

import numpy as np
import scipy.sparse as sp

from focused.relevance.text import WORD, analyze

__all__ = ["count_terms"]

# Words whose column is kept per vocabulary; the table starts again when full.
MAX_WORDS = 1 << 18


class _Columns:
    """Each lowercase word's column in a vocabulary of ``analyze``'s terms; -1: none."""

    def __init__(self, vocabulary: dict[str, int], stem: bool):
        self.vocabulary = vocabulary
        self.stem = stem
        self.known: dict[str, int] = {}

    def __call__(self, word: str) -> int:
        column = self.known.get(word)
        if column is None:
            if len(self.known) >= MAX_WORDS:
                self.known.clear()
            terms = analyze(word, stem=self.stem)  # one word: its term, or none
            column = self.vocabulary.get(terms[0], -1) if terms else -1
            self.known[word] = column
        return column


_COLUMNS: weakref.WeakKeyDictionary[Any, _Columns] = weakref.WeakKeyDictionary()


def _columns(vectorizer: Any) -> _Columns | None:
    """The word table of a fitted CountVectorizer whose analyzer is ``analyze``; None for any
    other vectorizer (whose own ``transform`` then counts)."""
    found = _COLUMNS.get(vectorizer)
    if found is not None:
        return found
    analyzer = getattr(vectorizer, "analyzer", None)
    if not (
        isinstance(analyzer, partial)
        and analyzer.func is analyze
        and not analyzer.args
        and set(analyzer.keywords) <= {"stem"}
        and getattr(vectorizer, "input", None) == "content"
        and not getattr(vectorizer, "binary", True)
        and hasattr(vectorizer, "vocabulary_")
    ):
        return None
    found = _Columns(vectorizer.vocabulary_, bool(analyzer.keywords.get("stem", False)))
    _COLUMNS[vectorizer] = found
    return found


def count_terms(vectorizer: Any, texts: Sequence[str]) -> sp.csr_matrix:
    """``vectorizer.transform(texts)``: the same matrix, faster for the vectorizers the models
    fit over ``analyze`` (a text's words are its lowercase runs of letters, each one term)."""
    columns = _columns(vectorizer)
    if columns is None:
        return vectorizer.transform(texts)
    known = columns.known
    found: list[int] = []  # every word's column (-1: none), text after text
    lengths = np.empty(len(texts), dtype=np.int64)
    for i, text in enumerate(texts):
        words = WORD.findall(text.lower())
        kept = list(map(known.get, words))
        each = (
            [columns(word) if j is None else j for word, j in zip(words, kept, strict=True)]
            if None in kept  # words not seen before
            else cast("list[int]", kept)
        )
        found += each
        lengths[i] = len(each)
    size = len(columns.vocabulary)
    at = np.array(found, dtype=np.int64)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), lengths)
    counted = at >= 0
    # one key per (text, column): unique keys come sorted by text, then column, as CSR holds them
    keys, counts = np.unique(rows[counted] * size + at[counted], return_counts=True)
    indptr = np.searchsorted(keys, np.arange(len(texts) + 1, dtype=np.int64) * size)
    return sp.csr_matrix(
        (
            counts.astype(vectorizer.dtype),
            (keys % size).astype(np.int32),
            indptr.astype(np.int32),
        ),
        shape=(len(texts), size),
    )
