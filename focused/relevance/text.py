"""Turning a page into text, and text into terms: one place for the spider, the taxonomy
reader and the classifier, so a page is seen the same way when training and when crawling."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from lxml import etree, html

from focused.printable import printable
from focused.relevance.porter import stem as porter_stem

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
# English stop words: scikit-learn's list (the Glasgow Information Retrieval Group's), here so
# that analysing a text imports no scikit-learn.
_STOP_WORDS = """
    a about above across after afterwards again against all almost alone along already
    also although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes
    becoming been before beforehand behind being below beside besides between beyond bill
    both bottom but by call can cannot cant co con could couldnt cry de describe detail do
    done down due during each eg eight either eleven else elsewhere empty enough etc even
    ever every everyone everything everywhere except few fifteen fifty fill find fire
    first five for former formerly forty found four from front full further get give go
    had has hasnt have he hence her here hereafter hereby herein hereupon hers herself him
    himself his how however hundred i ie if in inc indeed interest into is it its itself
    keep last latter latterly least less ltd made many may me meanwhile might mill mine
    more moreover most mostly move much must my myself name namely neither never
    nevertheless next nine no nobody none noone nor not nothing now nowhere of off often
    on once one only onto or other others otherwise our ours ourselves out over own part
    per perhaps please put rather re same see seem seemed seeming seems serious several
    she should show side since sincere six sixty so some somehow someone something
    sometime sometimes somewhere still such system take ten than that the their them
    themselves then thence there thereafter thereby therefore therein thereupon these they
    thick thin third this those though three through throughout thru thus to together too
    top toward towards twelve twenty two un under until up upon us very via was we well
    were what whatever when whence whenever where whereafter whereas whereby wherein
    whereupon wherever whether which while whither who whoever whole whom whose why will
    with within without would yet you your yours yourself yourselves
"""
ENGLISH_STOP_WORDS = frozenset(_STOP_WORDS.split())
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
    return "" if word in ENGLISH_STOP_WORDS else porter_stem(word)


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
