"""The one generic spider: reads a topic file, parses pages, yields one PageItem per URL.

It decides nothing about what to crawl (the pipelines score, the frontier orders) and never
touches Redis. Bad pages are counted in stats under ``focused/bad_page/<reason>`` and yielded
with ``bad`` set, so the feed has every fetched URL and the frontier acknowledges each one.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.http import HtmlResponse, Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.internet.error import DNSLookupError, TCPTimedOutError, TimeoutError
from twisted.python.failure import Failure
from twisted.web._newclient import ResponseFailed
from w3lib.url import safe_url_string

from focused.errors import FocusedError, exit_on_user_error
from focused.items import META, PageItem
from focused.lists import list_seeds, lists_path
from focused.relevance.text import page_text
from focused.schedulers.scheduler import crawl_name
from focused.strategies import link_score_for, strategy_class, strategy_name
from focused.topic import PREVIOUS, Topic, load_topic, load_topic_text

CONTEXT_WORDS = 12  # words of text kept on each side of an anchor


def extract_links(response: HtmlResponse, context_words: int = 0) -> list[tuple[str, str, str]]:
    """The page's ``<a href>`` links: absolute http(s) URL, anchor text, and the anchor with
    the text right around it (up to ``context_words`` words before and after, within its
    paragraph), which says more about the target than a bare name does; "" with 0."""
    links = []
    for anchor in response.selector.root.iter("a"):
        href = anchor.get("href")
        if not href or href.startswith(("#", "javascript:", "mailto:")):
            continue
        url = safe_url_string(response.urljoin(href.strip()), response.encoding)
        if not url.startswith(("http://", "https://")):
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
    return links


def failure_reason(failure: Failure) -> str:
    """A short stats-friendly name for why a request finally failed."""
    error = failure.value
    if isinstance(error, HttpError):
        return f"http_{error.response.status}"
    if "robots.txt" in str(error):
        return "robots_forbidden"
    if isinstance(error, DNSLookupError):
        return "dns"
    if isinstance(error, TimeoutError | TCPTimedOutError):
        return "timeout"
    if isinstance(error, ResponseFailed):
        return "truncated"
    return type(error).__name__


class FocusedSpider(scrapy.Spider):
    """``scrapy crawl focused -a topic=PATH``: crawl the topic described by a topic file."""

    name = "focused"

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FocusedSpider:
        return super().from_crawler(crawler, *args, **kwargs)

    def __init__(
        self, topic: str | None = None, *args: Any, topic_toml: str | None = None, **kwargs: Any
    ):
        """``topic_toml``, the topic file's text, is how ``focused schedule`` sends a topic to a
        scrapyd node; ``topic`` then only names the file and anchors its relative paths."""
        super().__init__(*args, **kwargs)
        if not topic:
            raise FocusedError("no topic file: run `scrapy crawl focused -a topic=PATH`")
        self.topic: Topic = load_topic_text(topic_toml, topic) if topic_toml else load_topic(topic)

    @cached_property
    def context_words(self) -> int:
        """Words kept around each anchor: only the ``context`` link score and strategies that
        read them (``reads_context``) do."""
        reads = strategy_class(strategy_name(self.settings, self.topic)).reads_context
        context = reads or link_score_for(self.settings, self.topic) == "context"
        return CONTEXT_WORDS if context else 0

    def seeds(self) -> list[str]:
        """The topic's seeds, then the good hubs and sites of ``seeds_from`` (seed 004)."""
        seeds_from = self.topic.seeds_from
        if seeds_from == PREVIOUS:
            path = lists_path(self.settings.get("FOCUSED_LISTS_DIR"), crawl_name(self.crawler))
            if not path.exists():
                self.logger.warning("seeds_from: no lists of a previous run at %s", path)
                return self.topic.seeds
        elif not seeds_from:
            return self.topic.seeds
        else:
            path = Path(seeds_from)
        try:
            listed = list_seeds(path)
        except FocusedError as exc:
            self.logger.error("seeds_from: %s", exc)
            return self.topic.seeds
        self.logger.info("seeds_from: %d hubs and sites from %s", len(listed), path)
        return list(dict.fromkeys(self.topic.seeds + listed))

    async def start(self) -> AsyncIterator[scrapy.Request]:
        seeds = self.seeds()
        if not seeds:
            self.logger.error("no seed URLs: the topic has none and seeds_from gave none")
        for url in seeds:
            yield scrapy.Request(url, meta={"depth": 0, META: {"score": 1.0}})

    def _item(self, request: scrapy.Request, url: str, status: int | None) -> PageItem:
        record = request.meta.get(META, {})
        return PageItem(
            url=url,
            order=None,
            time=round(time.time(), 3),
            status=status,
            relevance=None,
            relevant=False,
            category=None,
            depth=request.meta.get("depth", 0),
            parent=record.get("parent_url") or None,
            host=urlsplit(url).hostname,
            title=None,
            bad=None,
            main_text=None,
            text="",
            links=[],
            lease=record.get("lease"),
            last_modified=None,
            anchor=record.get("anchor", ""),
            parent_relevance=record.get("parent_relevance"),
            parent_category=record.get("parent_category", ""),
            revisit=record.get("revisit", False),
        )

    def _bad(self, item: PageItem, reason: str) -> PageItem:
        self.crawler.stats.inc_value(f"focused/bad_page/{reason}")
        item["bad"] = reason
        return item

    def parse(self, response: Response) -> Iterator[PageItem]:
        item = self._item(response.request, response.url, response.status)
        if last_modified := response.headers.get("Last-Modified"):
            item["last_modified"] = last_modified.decode("latin-1")
        if not isinstance(response, HtmlResponse):
            yield self._bad(item, "not_html")
            return
        text = page_text(response.selector.root)
        item["title"], item["text"] = text.title, text.text
        if not text.text and not text.title:
            yield self._bad(item, "empty")
            return
        replaced = response.text.count("\ufffd")
        if replaced:  # bytes that are not in the page's encoding
            self.crawler.stats.inc_value("focused/pages/decode_errors")
            share = self.settings.getfloat("FOCUSED_MAX_REPLACEMENT_SHARE")
            if replaced > share * len(response.text):
                yield self._bad(item, "encoding")
                return
        item["links"] = extract_links(response, self.context_words)
        item["html"] = response.text
        yield item

    def errback(self, failure: Failure) -> Iterator[PageItem]:
        """A request that finally failed (after retries) still yields an item: it is acked."""
        request = failure.request
        response = getattr(failure.value, "response", None)
        item = self._item(request, request.url, response.status if response else None)
        yield self._bad(item, failure_reason(failure))
