"""A page's main text: the article without its navigation, sidebars, footers and link lists.

Taken out by trafilatura: of the candidates it kept the most of the article and the least
else on articles in a site template (F1 .999, resiliparse .973) and on the synthetic web, tied
on Wikispeedia, and it alone also writes Markdown (``benchmarks/extract.py``; README, "The
page's main text"). It imports nothing from Scrapy, so the classifier pipeline and the
evaluation's training examples read a page the same way.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["MainText", "main_text"]


class MainText(NamedTuple):
    """The main text ("" when trafilatura finds none) and, if asked for, the same as Markdown."""

    text: str
    markdown: str | None


def main_text(page: str | bytes, markdown: bool = False) -> MainText:
    """Main text of an HTML page (text or bytes), and its Markdown when ``markdown``.

    One extraction gives both: trafilatura keeps the formatting in the tree it extracts, which
    is rendered once as plain text and once as Markdown. User comments are left out, and so are
    trafilatura's fallback extractors (``fast``): a third cheaper, and as exact on the site
    template and the synthetic web (README, "The page's main text").
    """
    # Imported at the first page extracted: a crawl that keeps no main text never loads it.
    import trafilatura
    from trafilatura.settings import Document
    from trafilatura.xml import xmltotxt

    document = trafilatura.bare_extraction(
        page, fast=True, include_comments=False, include_formatting=markdown
    )
    if not isinstance(document, Document):  # None: no text found (a dict only with as_dict)
        return MainText("", "" if markdown else None)
    if not markdown:
        return MainText((document.text or "").strip(), None)
    return MainText(xmltotxt(document.body, False).strip(), (document.text or "").strip())
