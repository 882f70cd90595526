"""Badia et al. 2006's pre-processing of fetched pages, before they are scored: skip verbatim
copies, drop forums and blogs (the paper wants authoritative sources), and rate how much of a hub a
page is. Plain functions of a page's text, URL and counts, so any pipeline can use them."""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

__all__ = ["DEFAULT_PATTERNS", "hub_score", "is_forum_or_blog", "text_checksum"]

# Searched (case-insensitively) anywhere in the whole URL. The paper only looks for "forum"
# or "blog" in the URL; these add the common engines and hosts. Dated paths are WordPress's
# default permalinks, which news sites share: drop that pattern to keep news.
DEFAULT_PATTERNS: tuple[str, ...] = (
    r"^[a-z][a-z0-9+.-]*://(?:[^/?#@]*@)?(?:[^/?#]*\.)?(?:forums?|blogs?|boards?|community)\.",
    r"^[a-z][a-z0-9+.-]*://(?:[^/?#@]*@)?[^/?#]*\."
    r"(?:blogspot|wordpress|tumblr|livejournal|typepad)\.",
    r"/(?:forums?|blogs?|weblogs?|boards?|discussions?)(?:[/?#]|\.php|$)",
    r"/(?:viewtopic|viewforum|showthread|forumdisplay|showtopic|memberlist)\.php",
    r"/threads?/",
    r"/(?:19|20)\d\d/(?:0[1-9]|1[0-2])/(?:(?:0[1-9]|[12]\d|3[01])/)?[^/?#]+",
)


def text_checksum(text: str) -> str:
    """Checksum of a page's text after Unicode (NFKC) normalisation, case folding and
    whitespace collapsing, so that copies differing only in layout or case are one page."""
    normal = " ".join(unicodedata.normalize("NFKC", text).casefold().split())
    return hashlib.blake2b(normal.encode("utf-8"), digest_size=16).hexdigest()


def is_forum_or_blog(url: str, patterns: Iterable[str] = DEFAULT_PATTERNS) -> bool:
    """Whether ``url`` matches any of ``patterns`` (regular expressions, case-insensitive)."""
    return any(re.search(pattern, url, re.IGNORECASE) for pattern in patterns)


def hub_score(n_external_links: int, n_content_words: int) -> float:
    """Links to other sites per word of content (text without markup, anchors or stopwords).

    Words are floored at 1, so a page of links and no text is a strong hub, not an error.
    """
    if n_external_links < 0 or n_content_words < 0:
        raise ValueError("counts must be >= 0")
    return n_external_links / max(n_content_words, 1)
