"""What a page's shape says of its kind: a home page (a course's, a person's, a project's) is
the index of its folder, while the pages below it (a syllabus, a homework, a list of papers)
are files deep in it, and its title often calls it a home page.

Where a topic is a kind of page rather than a subject (WebKB's classes: a course's home page is
``course``, its syllabus ``other``), the words of a course's home page and of its syllabus are
the same words, and the topic's models cannot tell them apart; the page's shape can. A topic's
example pages show which shape its pages have: :class:`PageShape` compares the examples' shape
with that of the pages the crawl judges (the background), feature by feature, and gives each
page the log-odds of its shape, naive Bayes' evidence that the judge adds to the model's R.
Where the examples have the shape of the background (every Wikipedia article is a file at the
same depth) the evidence is 0: each example's share is smoothed towards the background's.

An example's URL is read from its HTML file: its ``<base href>``, else the ``saved from url``
comment browsers write into a saved page. Examples without one (text files) still give their
title (the first line of a text example, as :func:`focused.relevance.text.page_text` writes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np

from focused.relevance.base import Estimator
from focused.relevance.text import page_text

__all__ = ["PageShape", "example_shape", "home_url", "shape_of"]

# The file names a server answers a folder's URL with: a folder's own page.
INDEX_STEMS = frozenset({"index", "welcome", "home", "default", "homepage"})
HOME_TITLE = re.compile(r"\bhome\s*-?\s*page\b|\bwelcome\b", re.IGNORECASE)
# The start of an HTML file, where a <base href> or a browser's "saved from url" comment is.
_HEAD_CHARS = 4000
_BASE = re.compile(r"<base\s[^>]*href\s*=\s*[\"']?([^\"'\s>]+)", re.IGNORECASE)
_SAVED_FROM = re.compile(r"<!--\s*saved from url=\(\d+\)(\S+?)\s*-->", re.IGNORECASE)

Shape = tuple[bool | None, bool]  # (home URL, None where the URL is unknown; home title)


def home_url(url: str) -> bool:
    """Whether a URL names a folder's own page: the folder (``…/``), its index file
    (``index.html``, ``welcome.html``, ``home.html`` …) or a file named as its folder
    (``CS212/CS212.html``, ``~ahuja/ahuja.html``)."""
    path = unquote(urlsplit(url).path)
    if path.endswith("/") or not path:
        return True
    folder, _, last = path.rpartition("/")
    stem = last.lower().partition(".")[0]
    parent = folder.rpartition("/")[2].lower().lstrip("~")
    return stem in INDEX_STEMS or (bool(stem) and stem == parent)


def shape_of(url: str | None, title: str) -> Shape:
    """A page's shape: whether its URL is a home page's (None without a URL) and whether its
    title calls it one."""
    return (None if url is None else home_url(url)), bool(HOME_TITLE.search(title))


def example_shape(path: Path) -> Shape:
    """The shape of an example file: an HTML file's URL (its ``<base href>``, else a browser's
    ``saved from url`` comment) and title; a text file's first line as its title."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix.lower() == ".txt":
        return None, shape_of(None, text.partition("\n")[0])[1]
    head = text[:_HEAD_CHARS]
    found = _BASE.search(head) or _SAVED_FROM.search(head)
    return shape_of(found[1] if found else None, page_text(text).title)


class PageShape(Estimator):
    """The log-odds a page's shape adds to its R (see the module docstring): for each
    feature, log P(feature value | the examples) / P(feature value | the pages judged).

    Parameters
    ----------
    strength : pseudo-pages of the background's share mixed into the examples' (so that a
        feature the examples share with the background is no evidence).
    max_ratio : the most one feature may multiply a page's odds by, or divide them by.

    Attributes
    ----------
    examples_ : per feature, the examples that have it and those that tell (a text example
        tells no URL); background_ : the same over the pages seen by ``partial_fit``.
    """

    def __init__(self, *, strength: float = 2.0, max_ratio: float = 4.0):
        self.strength = strength
        self.max_ratio = max_ratio

    @staticmethod
    def _counts(shapes: Iterable[Shape]) -> np.ndarray:
        counts = np.zeros((2, 2))  # features x (have it, tell)
        for shape in shapes:
            for i, value in enumerate(shape):
                if value is not None:
                    counts[i] += (value, 1)
        return counts

    def fit(self, X: Sequence[Shape], y: object = None) -> PageShape:
        """Fit on the shapes of the topic's example pages (``y`` is ignored); the background
        starts empty."""
        if not self.strength > 0 or not self.max_ratio >= 1:
            raise ValueError("strength must be > 0 and max_ratio >= 1")
        self.examples_ = self._counts(X)
        self.background_ = np.zeros((2, 2))
        return self

    def partial_fit(self, X: Sequence[Shape]) -> PageShape:
        """Add judged pages' shapes to the background."""
        self._check_fitted("examples_")
        self.background_ += self._counts(X)
        return self

    def log_odds(self, X: Sequence[Shape]) -> np.ndarray:
        """The evidence of each shape, in log-odds (0 for what cannot be compared)."""
        self._check_fitted("examples_")
        have, tell = self.background_[:, 0], self.background_[:, 1]
        background = (have + 1) / (tell + 2)
        a = self.strength
        examples = (self.examples_[:, 0] + a * background) / (self.examples_[:, 1] + a)
        bound = np.log(self.max_ratio)
        ratio = np.clip(
            np.log(np.stack([(1 - examples) / (1 - background), examples / background])),
            -bound,
            bound,
        )
        out = np.zeros(len(X))
        for row, shape in enumerate(X):
            for i, value in enumerate(shape):
                if value is not None and self.examples_[i, 1]:
                    out[row] += ratio[int(value), i]
        return out
