"""The item the spider yields for every fetched (or finally failed) URL."""

import scrapy

# The request.meta key of a URL's frontier record (lease, parent URL, score, num_tries), set by
# the scheduler and read back by the spider.
META = "focused"

# What the feed exports (FEED_EXPORT_FIELDS); the other fields are for the pipelines.
FEED_FIELDS = [
    "url",
    "order",
    "time",
    "status",
    "relevance",
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


class PageItem(scrapy.Item):
    """One fetched page, relevant or not; ``bad`` names why it was skipped, if it was."""

    url = scrapy.Field()
    order = scrapy.Field()  # fetch order in the crawl (all processes); None if never fetched
    time = scrapy.Field()  # unix time the response arrived
    status = scrapy.Field()  # HTTP status; None when no response came
    relevance = scrapy.Field()  # R(d) in [0, 1]
    relevant = scrapy.Field()  # R(d) >= the topic's threshold (FOCUSED_RELEVANT_THRESHOLD)
    category = scrapy.Field()  # best-matching leaf category
    depth = scrapy.Field()
    parent = scrapy.Field()  # URL of the page the link was found on
    host = scrapy.Field()
    # <title> (else the first <h1>): white space collapsed, control characters made spaces,
    # at most relevance.text.MAX_TITLE characters (relevance.text.page_text)
    title = scrapy.Field()
    bad = scrapy.Field()  # None, or why the page was skipped (not_html, http_404, ...)
    # The page's main text (focused.relevance.content) if FOCUSED_MAIN_TEXT selects it, else None;
    # and the same as Markdown, set only with FOCUSED_FEED_MARKDOWN.
    main_text = scrapy.Field()
    markdown = scrapy.Field()
    # None for a plain fetch, else why the browser fetched the page (FOCUSED_RENDER): always,
    # little_text or host.
    rendered = scrapy.Field()
    # The page's language (focused.relevance.language: an ISO 639 code, "und" undetermined)
    # where FOCUSED_LANGUAGE_ID identifies it, else None.
    language = scrapy.Field()
    # For the pipelines, not exported:
    text = scrapy.Field()  # the whole page's visible text (relevance.text.page_text)
    html = scrapy.Field()  # the decoded page, for its main text
    links = scrapy.Field()  # [(absolute url, anchor text, anchor in its context), ...]
    lease = scrapy.Field()  # the frontier lease to acknowledge
    last_modified = scrapy.Field()  # the response's Last-Modified header, if any (duplicates)
    path_good = scrapy.Field()  # some node on the best category path is good (hard focus)
    link_scores = scrapy.Field()  # per-link relevance estimates (anchor text), if computed
    # How the page was reached, for the online link model (focused.strategies.learning):
    anchor = scrapy.Field()  # anchor text of the link it was queued from ("" if unknown)
    anchor_relevance = scrapy.Field()  # R of that anchor text, if scored
    # R by the topic as the user gave it, for a topic that learns itself (what it learns from)
    first_relevance = scrapy.Field()
    parent_relevance = scrapy.Field()  # R of the page that link was on (None for seeds)
    parent_category = scrapy.Field()
    revisit = scrapy.Field()  # a known page fetched again (maintenance mode)
    # Why a ``bad = "duplicate"`` page is one (text, last_modified, known): the WARC writer
    # keeps a URL that came back unchanged as a revisit record.
    duplicate = scrapy.Field()
    # The URL of the page this one nearly copies (focused.pipelines.nearcopies), else None.
    near_duplicate_of = scrapy.Field()
