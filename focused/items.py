"""The page the spider yields for every fetched (or finally failed) URL, as typed records.

A :class:`Page` is a dataclass, which Scrapy carries as an item through itemadapter: the
pipelines, the extensions and the feed read its fields by name and mypy checks them. It holds
the frontier's :class:`~focused.store.frontier.base.Leased` record whole, as the scheduler put
it in the request, and the judge's :class:`~focused.topic.judge.Verdict` once the page is
judged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from focused.store.frontier.base import Leased
    from focused.topic.judge import Verdict

# The request.meta key of a URL's frontier record (a Leased), set by the scheduler and read back
# by the spider; a request without it was not popped from the frontier (a seed, robots.txt).
META = "focused"

# What the feed exports (FEED_EXPORT_FIELDS); the other fields are for the pipelines.
FEED_FIELDS = [
    "url",
    "order",
    "time",
    "status",
    "relevance",
    "probability",
    "relevant",
    "category",
    "depth",
    "parent",
    "host",
    "title",
    "bad",
    "main_text",
    "markdown",
    "rendered",
    "near_duplicate_of",
    "language",
]


@dataclass(slots=True)
class PageLink:
    """One out-link of a page: its clean absolute URL, anchor text and the anchor in its
    context (the words around it, "" unless read), and what the judge made of it: the R of
    its anchor (``anchor_relevance``, None where anchors are not scored) and the estimate of
    the page it leads to (``estimate``, parent's R and anchor's combined by the link score)."""

    url: str
    anchor: str = ""
    context: str = ""
    anchor_relevance: float | None = None
    estimate: float = 0.0


@dataclass(slots=True)
class Page:
    """One fetched page, relevant or not; ``bad`` names why it was skipped, if it was."""

    url: str
    status: int | None  # HTTP status; None when no response came
    time: float  # unix time the response arrived
    depth: int = 0
    host: str | None = None
    # The frontier's record of the URL (lease, parent, anchor, ...); None for a request not
    # popped from the frontier (a seed pushed by the spider, a dont_filter request).
    leased: Leased | None = None
    order: int | None = None  # fetch order in the crawl (all processes); None if never fetched
    relevance: float | None = None  # R(d) in [0, 1]
    # P(relevant): R calibrated on the crawl's pages (focused.relevance.calibration)
    probability: float | None = None
    relevant: bool = False  # probability >= the calibration's cut, else R >= the threshold
    category: str | None = None  # best-matching leaf category
    parent: str | None = None  # URL of the page the link was found on
    # <title> (else the first <h1>): white space collapsed, control characters made spaces,
    # at most relevance.text.MAX_TITLE characters (relevance.text.page_text)
    title: str | None = None
    bad: str | None = None  # None, or why the page was skipped (not_html, http_404, ...)
    # The page's main text (focused.relevance.content) if FOCUSED_MAIN_TEXT selects it, else
    # None; and the same as Markdown, set only with FOCUSED_FEED_MARKDOWN.
    main_text: str | None = None
    markdown: str | None = None
    # None for a plain fetch, else why the browser fetched the page (FOCUSED_RENDER): always,
    # little_text or host.
    rendered: str | None = None
    # The page's language (focused.relevance.language: an ISO 639 code, "und" undetermined)
    # where FOCUSED_LANGUAGE_ID identifies it, else None.
    language: str | None = None
    # The URL of the page this one nearly copies (focused.pipelines.nearcopies), else None.
    near_duplicate_of: str | None = None
    # For the pipelines, not exported:
    text: str = ""  # the whole page's visible text (relevance.text.page_text)
    html: str = ""  # the decoded page, for its main text
    links: list[PageLink] = field(default_factory=list)
    last_modified: str | None = None  # the response's Last-Modified header, if any
    # What the judge made of the page and its links (focused.topic.judge), once judged.
    verdict: Verdict | None = None
    # Why a ``bad = "duplicate"`` page is one (text, last_modified, known): the WARC writer
    # keeps a URL that came back unchanged as a revisit record.
    duplicate: str | None = None

    @property
    def anchor(self) -> str:
        """The anchor text of the link the page was queued from ("" if unknown)."""
        return self.leased.anchor if self.leased is not None else ""

    @property
    def revisit(self) -> bool:
        """A known page fetched again (maintenance mode)."""
        return self.leased is not None and self.leased.revisit

    def judged(self, verdict: Verdict) -> None:
        """Take the judge's verdict: its R, relevance and category become the page's
        exported fields, its scored links the page's links."""
        self.verdict = verdict
        self.relevance, self.relevant = verdict.relevance, verdict.relevant
        self.probability = verdict.probability
        self.category = verdict.category
        self.links = verdict.links

    def kept_out(self) -> None:
        """Judge the page not relevant whatever its text says (a language the topic does not
        keep): R 0, and 0 for every estimate of its links."""
        if self.verdict is not None:
            self.judged(self.verdict.refused())
        else:
            self.relevance, self.probability, self.relevant = 0.0, 0.0, False


__all__ = ["FEED_FIELDS", "META", "Page", "PageLink"]
