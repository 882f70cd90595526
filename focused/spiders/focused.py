"""The one generic spider: reads a topic file, parses pages, yields one PageItem per URL.

It decides nothing about what to crawl (the pipelines score, the frontier orders) and never
touches Redis. Bad pages are counted in stats under ``focused/bad_page/<reason>`` and yielded
with ``bad`` set, so the feed has every fetched URL and the frontier acknowledges each one.
"""

from __future__ import annotations

import gzip
import socket
import ssl
import sys
import time
import zlib
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from functools import cached_property
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import scrapy
from brotli import error as BrotliError
from OpenSSL.SSL import Error as OpenSSLError
from parsel import Selector
from scrapy.core.downloader.handlers.http11 import TunnelError
from scrapy.exceptions import (
    CannotResolveHostError,
    DownloadCancelledError,
    DownloadConnectionRefusedError,
    DownloadFailedError,
    DownloadTimeoutError,
    IgnoreRequest,
    NotSupported,
    ResponseDataLossError,
    UnsupportedURLSchemeError,
)
from scrapy.http import HtmlResponse, Response
from scrapy.spidermiddlewares.httperror import HttpError
from scrapy.utils._compression import _DecompressionMaxSizeExceeded
from scrapy.utils.response import get_base_url
from twisted.internet import error as tx
from twisted.python.failure import Failure
from twisted.web.client import ResponseFailed
from twisted.web.http import PotentialDataLoss, _DataLoss

from focused.distill.lists import list_seeds, lists_path
from focused.errors import FocusedError, exit_on_user_error
from focused.items import META, PageItem
from focused.middlewares.addresses import ForbiddenAddress
from focused.relevance.text import page_text
from focused.schedulers.scheduler import crawl_name
from focused.topic.files import PREVIOUS, Topic, load_topic, load_topic_text
from focused.topic.plan import CrawlPlan
from focused.urls import BadURL, clean_url

if sys.version_info >= (3, 14):
    from compression.zstd import ZstdError
else:
    from backports.zstd import ZstdError

CONTEXT_WORDS = 12  # words of text kept on each side of an anchor


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

    Each URL is spelled as :func:`focused.urls.clean_url` spells it, at most ``max_length``
    characters long (Scrapy's ``URLLENGTH_LIMIT``; 0: no limit), so only URLs that can be
    fetched and stored leave the page. A link that cannot (a bad port, host or syntax, or too
    long) is skipped and counted in ``bad`` under ``BadURL.reason``; links to other schemes
    (``ftp:``, ``tel:``) are skipped as before, uncounted.
    """
    root, base = parsed(response)
    links = []
    for anchor in root.iter("a"):
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
    return links


# Characters that text decoded with the right codec has few of: the replacement character
# (bytes the codec could not decode) and control characters other than white space.
CONTROLS = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x20)])
GARBLED = "\ufffd" + CONTROLS.decode("ascii")
# Codecs tried, in order, on a page whose declared one gives implausible text.
FALLBACK_CODECS = ("utf-8", "cp1252")


def plausible(response: HtmlResponse, max_garbled: float) -> bool:
    """Whether the response's text reads as what its bytes say.

    Implausible are a text with more than ``max_garbled`` (a share of its characters) of
    replacement or control characters, and a declared codec that does not keep ASCII as
    ASCII (UTF-16 or UTF-32) on a body that has no NUL byte (which text in those codecs always
    has) and whose ``<`` bytes did not become ``<``: an ASCII page declared as UTF-16 reads
    as CJK characters, no markup, and no replacement character to tell.
    """
    text, body = response.text, response.body
    ascii_kept = "<".encode(response.encoding, errors="replace") == b"<"
    if ascii_kept:  # control characters are control bytes: counted in one pass over bytes
        garbled = text.count("\ufffd") + len(body) - len(body.translate(None, CONTROLS))
    else:
        garbled = sum(map(text.count, GARBLED))
    if garbled > max_garbled * len(text):
        return False
    if ascii_kept or b"\x00" in body:
        return True
    return 2 * text.count("<") >= body.count(b"<")


def redecoded(response: HtmlResponse, max_garbled: float) -> HtmlResponse | None:
    """The response read as UTF-8 or else cp1252 (a page that declares utf-16 but is ASCII,
    or declares UTF-8 but is Latin-1), whichever decodes without error and reads plausibly;
    None when neither does (binary bytes, or a codec neither guess is)."""
    for codec in FALLBACK_CODECS:
        try:
            response.body.decode(codec)
        except UnicodeDecodeError:
            continue
        candidate = response.replace(encoding=codec)
        if plausible(candidate, max_garbled):
            return candidate
    return None


# Why a download finally failed, by the exception or any exception behind it (its
# ``__cause__``, and the failures Twisted's ResponseFailed wraps), most specific first: a TLS
# error comes wrapped in a lost connection, a lost connection mid-body is a truncated page.
# Scrapy 2.19's download handlers raise its own exceptions (scrapy.exceptions) from Twisted's
# or the HTTP client's; the compression middleware raises the decompressors' own errors.
FAILURE_REASONS: tuple[tuple[str, tuple[type[BaseException], ...]], ...] = (
    ("forbidden_address", (ForbiddenAddress,)),  # before "dns": it may be a refused lookup
    ("tls", (OpenSSLError, ssl.SSLError, tx.SSLError, tx.CertificateError)),
    ("dns", (CannotResolveHostError, tx.DNSLookupError, socket.gaierror)),
    ("too_big", (DownloadCancelledError, _DecompressionMaxSizeExceeded)),
    ("truncated", (ResponseDataLossError, _DataLoss, PotentialDataLoss)),
    ("timeout", (DownloadTimeoutError, tx.TimeoutError, tx.TCPTimedOutError, TimeoutError)),
    (
        "refused",
        (DownloadConnectionRefusedError, tx.ConnectionRefusedError, ConnectionRefusedError),
    ),
    ("compression", (zlib.error, gzip.BadGzipFile, EOFError, BrotliError, ZstdError)),
    (
        "connection",
        (
            DownloadFailedError,
            ResponseFailed,
            tx.ConnectError,
            tx.ConnectionClosed,
            tx.ConnectingCancelledError,
            ConnectionError,
            TunnelError,
        ),
    ),
    ("unsupported", (UnsupportedURLSchemeError, NotSupported)),
)
OTHER = "other"


def _causes(error: BaseException) -> list[BaseException]:
    """The error and every exception behind it, outermost first."""
    found: list[BaseException] = []
    todo = [error]
    while todo:
        current = todo.pop(0)
        if any(current is seen for seen in found):
            continue
        found.append(current)
        if current.__cause__ is not None:
            todo.append(current.__cause__)
        todo += [f.value for f in getattr(current, "reasons", ()) if isinstance(f, Failure)]
    return found


def failure_reason(failure: Failure) -> str:
    """A short stats-friendly name for why a request finally failed: ``http_<status>``,
    ``robots_forbidden``, ``forbidden_address`` (focused.middlewares.addresses), one of
    FAILURE_REASONS, ``redirects`` (Scrapy's REDIRECT_MAX_TIMES), ``ignored`` (another
    middleware dropped it), or ``other``."""
    error = failure.value
    if isinstance(error, HttpError):
        return f"http_{error.response.status}"
    if isinstance(error, IgnoreRequest) and "robots.txt" in str(error):
        return "robots_forbidden"
    causes = _causes(error)
    for reason, types in FAILURE_REASONS:
        if any(isinstance(cause, types) for cause in causes):
            return reason
    if isinstance(error, IgnoreRequest):
        return "redirects" if "max redirections" in str(error) else "ignored"
    return OTHER


class FocusedSpider(scrapy.Spider):
    """``scrapy crawl focused -a topic=PATH``: crawl the topic described by a topic file."""

    name = "focused"

    @classmethod
    @exit_on_user_error
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> FocusedSpider:
        spider = super().from_crawler(crawler, *args, **kwargs)
        spider.plan  # noqa: B018 - decided now, so that a bad setting stops the crawl at start
        return spider

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
    def plan(self) -> CrawlPlan:
        """What this crawl does, decided once from its settings and topic; every component
        reads it (:mod:`focused.topic.plan`)."""
        return CrawlPlan.from_settings(self.settings, self.topic)

    @cached_property
    def context_words(self) -> int:
        """Words kept around each anchor: only the ``context`` link score and strategies that
        read them (``reads_context``) do."""
        return CONTEXT_WORDS if self.plan.reads_context else 0

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

    @cached_property
    def url_length(self) -> int:
        """Scrapy's URLLENGTH_LIMIT (0: none): longer links are not followed."""
        return self.settings.getint("URLLENGTH_LIMIT")

    @cached_property
    def max_garbled(self) -> float:
        """FOCUSED_MAX_REPLACEMENT_SHARE: the share of a page's text that may be garbled."""
        return self.settings.getfloat("FOCUSED_MAX_REPLACEMENT_SHARE")

    def parse(self, response: Response) -> Iterator[PageItem]:
        item = self._item(response.request, response.url, response.status)
        if last_modified := response.headers.get("Last-Modified"):
            item["last_modified"] = last_modified.decode("latin-1")
        if not isinstance(response, HtmlResponse):
            yield self._bad(item, "not_html")
            return
        stats = self.crawler.stats
        if "\ufffd" in response.text:  # bytes that are not in the page's encoding
            stats.inc_value("focused/pages/decode_errors")
        if not plausible(response, self.max_garbled):
            declared = response.encoding
            fixed = redecoded(response, self.max_garbled)
            if fixed is None:
                yield self._bad(item, "encoding")
                return
            response = fixed
            stats.inc_value("focused/pages/charset_fixed")
            self.logger.debug(
                "Read %(url)s as %(codec)s: its declared %(declared)s gave garbled text",
                {"url": response.url, "codec": response.encoding, "declared": declared},
            )
        text = page_text(parsed(response)[0])
        item["title"], item["text"] = text.title, text.text
        if not text.text and not text.title:
            yield self._bad(item, "empty")
            return
        bad: Counter[str] = Counter()
        item["links"] = extract_links(
            response, self.context_words, max_length=self.url_length, bad=bad
        )
        for reason, count in bad.items():
            stats.inc_value(f"focused/links/bad/{reason}", count)
        item["html"] = response.text
        yield item

    def errback(self, failure: Failure) -> Iterator[PageItem]:
        """A request that finally failed (after retries) still yields an item: it is acked."""
        request = failure.request
        response = getattr(failure.value, "response", None)
        item = self._item(request, request.url, response.status if response else None)
        reason = failure_reason(failure)
        if reason == OTHER:
            self.logger.warning(
                "Bad page %(url)s (other): %(error)s: %(message)s",
                {
                    "url": request.url,
                    "error": type(failure.value).__name__,
                    "message": failure.value,
                },
            )
        yield self._bad(item, reason)
