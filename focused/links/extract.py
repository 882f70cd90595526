"""The links of a fetched page, as the spider follows them and the evaluation's web graph
counts them: one function for both, so the offline graph is the graph the crawler sees."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

from parsel import Selector
from scrapy.http import HtmlResponse
from scrapy.utils.response import get_base_url

from focused.links.urls import BadURL, clean_url

# Links read, or anchors scored, between two returns to the reactor: about 0.1 s of work on a
# page of a hundred thousand links, so a process stays responsive (and its heartbeat goes on).
LINKS_PER_PAUSE = 1000


def parsed(response: HtmlResponse) -> tuple[Any, str]:
    """The page's lxml tree and the URL its links are relative to. Scrapy's
    ``response.selector`` raises on a ``<base href>`` that is no URL (``http://[::1``);
    browsers then resolve links against the page, and so does this."""
    try:
        return response.selector.root, get_base_url(response)
    except ValueError:
        return Selector(text=response.text, type="html").root, response.url


def extract_links(
    response: HtmlResponse,
    context_words: int = 0,
    *,
    max_length: int = 2083,
    bad: Counter[str] | None = None,
) -> list[tuple[str, str, str]]:
    """The page's ``<a href>`` links: absolute http(s) URL, anchor text, and the anchor with
    the text right around it (up to ``context_words`` words before and after, within its
    paragraph), which says more about the target than a bare name does; "" with 0.

    Each URL is spelled as :func:`focused.links.urls.clean_url` spells it, at most ``max_length``
    characters long (Scrapy's ``URLLENGTH_LIMIT``; 0: no limit), so only URLs that can be
    fetched and stored leave the page. A link that cannot (a bad port, host or syntax, or too
    long) is skipped and counted in ``bad`` under ``BadURL.reason``; links to other schemes
    (``ftp:``, ``tel:``) are skipped as before, uncounted.
    """
    batches = link_batches(response, context_words, max_length=max_length, bad=bad)
    return [link for batch in batches for link in batch]


def link_batches(
    response: HtmlResponse,
    context_words: int = 0,
    *,
    max_length: int = 2083,
    bad: Counter[str] | None = None,
    size: int = LINKS_PER_PAUSE,
) -> Iterator[list[tuple[str, str, str]]]:
    """:func:`extract_links`'s links, a batch for every ``size`` ``<a>`` elements read, so
    that the spider can give the reactor back between two on a page of a hundred thousand."""
    root, base = parsed(response)
    links: list[tuple[str, str, str]] = []
    for n, anchor in enumerate(root.iter("a"), 1):
        if n % size == 0:
            yield links
            links = []
        href = anchor.get("href")
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        try:
            url = clean_url(href, max_length, base=base, encoding=response.encoding)
        except BadURL as exc:
            if bad is not None and exc.reason != "scheme":
                bad[exc.reason] += 1
            continue
        text = " ".join(anchor.text_content().split())
        context = ""
        if context_words:
            previous, parent = anchor.getprevious(), anchor.getparent()
            before = previous.tail if previous is not None else getattr(parent, "text", None)
            words = (before or "").split()[-context_words:]
            words += [text, *(anchor.tail or "").split()[:context_words]]
            context = " ".join(words)
        links.append((url, text, context))
    yield links
