"""A page's main text: the article without its navigation, sidebars, footers and link lists.

Taken out by trafilatura, which had the best F1 of the candidates on Wikispeedia, on the
synthetic web and on articles in a site template, and is the only one that also writes
Markdown (``benchmarks/extract.py``; README, "The page's main text"). It imports nothing from
Scrapy, so the spider and the evaluation's training examples read pages the same way.
"""

from __future__ import annotations

from typing import NamedTuple

import trafilatura
from trafilatura.xml import xmltotxt

__all__ = ["MainText", "main_text"]


class MainText(NamedTuple):
    """The main text ("" when trafilatura finds none) and, if asked for, the same as Markdown."""

    text: str
    markdown: str | None


def main_text(page: str | bytes, markdown: bool = False) -> MainText:
    """Main text of an HTML page (text or bytes), and its Markdown when ``markdown``.

    One extraction gives both: trafilatura keeps the formatting in the tree it extracts, which
    is rendered once as plain text and once as Markdown. User comments are left out.
    """
    document = trafilatura.bare_extraction(
        page, include_comments=False, include_formatting=markdown
    )
    if document is None:
        return MainText("", "" if markdown else None)
    if not markdown:
        return MainText((document.text or "").strip(), None)
    return MainText(xmltotxt(document.body, False).strip(), (document.text or "").strip())
