"""Turning a page into text, and text into terms: one place for the spider, the taxonomy
reader and the classifier, so a page is seen the same way when training and when crawling."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from lxml import etree, html
from nltk.stem.porter import PorterStemmer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from focused.printable import printable

__all__ = ["MAX_TITLE", "PageText", "analyze", "page_text", "words"]

# Text nodes outside elements whose content is not prose; comments are not text() nodes.
_VISIBLE_TEXT = etree.XPath(
    ".//text()[not(ancestor::script or ancestor::style or ancestor::noscript"
    " or ancestor::template)]",
    smart_strings=False,
)
_UTF8_HTML = html.HTMLParser(encoding="utf-8")
WORD = re.compile(r"[^\W\d_]{2,}")  # runs of two or more letters, in any script
# WORD in ASCII text, where its letters are these: the same words in half the time.
_ASCII_WORD = re.compile(r"[a-z]{2,}")
_STEMMER = PorterStemmer()
# Characters of a title kept: titles of real pages have tens (a browser's tab shows fewer), and
# one of a megabyte would be kept in every feed line, export row and log line that names it.
MAX_TITLE = 1000


class PageText(NamedTuple):
    """A page's title (at most MAX_TITLE characters) and visible body text, whitespace
    collapsed and control characters made spaces."""

    title: str
    text: str

    @property
    def document(self) -> str:
        """Title and text as one document: what the classifier is trained on and scores."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def _parse(page: str | bytes) -> etree._Element | None:
    """Parse HTML leniently; None for input libxml2 finds no document in."""
    if isinstance(page, bytes):
        try:  # most pages are UTF-8 whatever they declare; else let libxml2 read <meta charset>
            page = page.decode("utf-8")
        except UnicodeDecodeError:
            try:
                return etree.fromstring(page, html.HTMLParser())
            except (etree.ParserError, etree.XMLSyntaxError, ValueError):
                return None
    # Encoded by us, so a declared charset (which lxml refuses on str input) cannot mislead.
    try:
        return etree.fromstring(page.encode("utf-8", "replace"), _UTF8_HTML)
    except (etree.ParserError, etree.XMLSyntaxError, ValueError):
        return None


def _collapse(parts: list[str]) -> str:
    return " ".join(printable(" ".join(parts)).split())


def page_text(page: str | bytes | etree._Element) -> PageText:
    """Title (``<title>``, else the first ``<h1>``) and visible body text of a page.

    Takes HTML as text or bytes, or an already parsed lxml element (the spider passes
    ``response.selector.root`` so a page is parsed once); the element is not modified.
    Never raises on odd input: a page without text gives empty strings.
    """
    root = page if isinstance(page, etree._Element) else _parse(page)
    if root is None or not isinstance(root.tag, str):  # None, or a comment/PI as root
        return PageText("", "")
    title = root.find(".//title")
    if title is None:
        title = root.find(".//h1")
    body = root.find("body")  # the parser puts it under <html>; a fragment has none
    return PageText(
        "" if title is None else _collapse(list(title.itertext()))[:MAX_TITLE],
        _collapse(_VISIBLE_TEXT(root if body is None else body)),
    )


@lru_cache(maxsize=1 << 17)
def _stem(word: str) -> str:
    """Porter stem, cached: a crawl sees the same few ten thousand words over and over."""
    return "" if word in ENGLISH_STOP_WORDS else _STEMMER.stem(word)


def words(text: str) -> list[str]:
    """The text's lowercase words: runs of two or more letters (WORD), stop words included."""
    lowered = text.lower()
    return (_ASCII_WORD if lowered.isascii() else WORD).findall(lowered)


def analyze(text: str, stem: bool = False) -> list[str]:
    """Terms of a text: lowercase words of two or more letters, English stopwords removed,
    Porter-stemmed if ``stem``. Used as the vectorizer's analyzer."""
    found = words(text)
    if stem:
        return [s for s in map(_stem, found) if s]
    return [w for w in found if w not in ENGLISH_STOP_WORDS]
